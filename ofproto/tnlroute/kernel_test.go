package tnlroute

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// testNetns creates a network namespace named after the test and the
// process, with a device (a veth end) holding 198.18.7.1/24 and 2001:2:7::1/64;
// both are deleted at cleanup, also when the test fails.
func testNetns(t *testing.T) (name string, ns netns.NsHandle) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip(8)")
	}
	name = fmt.Sprintf("tnlrt%d", os.Getpid())
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	// A veth pair inside the namespace (no dummy module needed), both
	// ends up so tnlrt0 has carrier.
	run(t, "ip", "-n", name, "link", "add", "tnlrt0", "type", "veth", "peer", "name", "tnlrt1")
	run(t, "ip", "-n", name, "link", "set", "tnlrt1", "up")
	run(t, "ip", "-n", name, "link", "set", "tnlrt0", "up")
	run(t, "ip", "-n", name, "link", "set", "lo", "up")
	run(t, "ip", "-n", name, "addr", "add", "198.18.7.1/24", "dev", "tnlrt0")
	run(t, "ip", "-n", name, "addr", "add", "2001:2:7::1/64", "dev", "tnlrt0", "nodad")
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	return name, ns
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// showEntries renders entries in ovs/route/show's line form (without the
// appctl package, which is above this one).
func showEntries(es []Entry) string {
	var b strings.Builder
	for _, e := range es {
		plen := e.Plen
		if From16(e.Dst).Is4() {
			plen -= 96
		}
		fmt.Fprintf(&b, "%s/%d dev %s", FormatAddr(e.Dst), plen, e.Dev)
		if !isZero(&e.GW) {
			b.WriteString(" GW " + FormatAddr(e.GW))
		}
		b.WriteString(" SRC " + FormatAddr(e.Src))
		if e.Local {
			b.WriteString(" local")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func waitTable(t *testing.T, tb *Table, what string, cond func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := showEntries(tb.Entries())
		if cond(s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: table never did; it holds:\n%s", what, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestKernelFollowsNamespace adds and deletes routes in a namespace and
// watches the table follow.
func TestKernelFollowsNamespace(t *testing.T) {
	name, ns := testNetns(t)
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tb := NewTable(KernelAddrs{Handle: h}, true)
	k := &Kernel{Table: tb, NS: ns, Settle: time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	waitTable(t, tb, "connected and local routes", func(s string) bool {
		return strings.Contains(s, "198.18.7.0/24 dev tnlrt0 SRC 198.18.7.1\n") &&
			strings.Contains(s, "198.18.7.1/32 dev tnlrt0 SRC 198.18.7.1 local\n") &&
			strings.Contains(s, "2001:2:7::/64 dev tnlrt0 SRC 2001:2:7::1\n")
	})
	run(t, "ip", "-n", name, "route", "add", "198.18.8.0/24", "via", "198.18.7.254")
	run(t, "ip", "-n", name, "-6", "route", "add", "2001:2:8::/64", "via", "2001:2:7::fe")
	waitTable(t, tb, "added routes", func(s string) bool {
		return strings.Contains(s, "198.18.8.0/24 dev tnlrt0 GW 198.18.7.254 SRC 198.18.7.1\n") &&
			strings.Contains(s, "2001:2:8::/64 dev tnlrt0 GW 2001:2:7::fe SRC 2001:2:7::1\n")
	})
	if r, ok := tb.Lookup(0, addr("198.18.8.9"), addr("198.18.7.1")); !ok || r.Dev != "tnlrt0" || r.Gateway != addr("198.18.7.254") {
		t.Errorf("lookup with local source: %+v %v", r, ok)
	}
	run(t, "ip", "-n", name, "route", "del", "198.18.8.0/24")
	waitTable(t, tb, "deleted route", func(s string) bool {
		return !strings.Contains(s, "198.18.8.0/24") && strings.Contains(s, "2001:2:8::/64")
	})
	// A user route survives kernel changes.
	if err := tb.AddUser(userRoute(t, "198.18.9.0/24", "tnlrt0", "198.18.7.253")); err != nil {
		t.Fatal(err)
	}
	run(t, "ip", "-n", name, "link", "set", "tnlrt0", "down")
	waitTable(t, tb, "device down", func(s string) bool {
		return !strings.Contains(s, "2001:2:8::/64") && strings.Contains(s, "198.18.9.0/24 dev tnlrt0 GW 198.18.7.253")
	})
}
