// Package nettest builds throw-away network topologies for the netdev
// backends' tests: network namespaces and veth pairs with unique names,
// addresses in 198.18.0.0/15, all removed in t.Cleanup (also when the test
// fails), plus ping, iperf3 and a forwarder loop over netdev.Devices.
//
// Everything here needs root; New skips the test otherwise.
package nettest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Env names and cleans up one test's namespaces and interfaces.
type Env struct {
	t      testing.TB
	prefix string // unique per process and Env: "gvsnd<pid>-<n>-"
	short  string // the same for interface names, which have 15 bytes
	seq    int    // the Env's number in this process, for distinct subnets
}

var envSeq atomic.Int32

// New returns an Env for t, skipping t unless running as root with ip(8).
func New(t testing.TB) *Env {
	t.Helper()
	return NewPrefixed(t, "gvsnd", "gd")
}

// NewPrefixed is New with other name prefixes: namespaces are named
// "<prefix><pid>-<n>-..." and root-namespace interfaces "<short><pid,n in
// base 36>..." (short must be 2 bytes or so: names have 15).
func NewPrefixed(t testing.TB, prefix, short string) *Env {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip(8)")
	}
	n := envSeq.Add(1)
	pid := os.Getpid()
	return &Env{
		t:      t,
		prefix: fmt.Sprintf("%s%d-%d-", prefix, pid, n),
		short:  short + strconv.FormatInt(int64(pid), 36) + strconv.FormatInt(int64(n), 36),
		seq:    int(n),
	}
}

// Subnet returns the first three octets of a /24 in 198.18.0.0/15 for
// this Env's k-th link (k is 0 or 1): distinct Envs of one process get
// distinct subnets.
func (e *Env) Subnet(k int) string {
	return fmt.Sprintf("198.%d.%d", 18+(e.seq/128)%2, (e.seq*2+k)%256)
}

// IfName returns a root-namespace interface name unique to this Env.
func (e *Env) IfName(suffix string) string {
	name := e.short + suffix
	if len(name) > 15 {
		e.t.Fatalf("interface name %q too long", name)
	}
	return name
}

// Run runs a command and fails the test if it fails; it returns stdout.
func (e *Env) Run(args ...string) string {
	e.t.Helper()
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		e.t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, msg)
	}
	return string(out)
}

// Try runs a command and returns its error (for cleanup, where failure
// is expected when the thing is already gone).
func Try(args ...string) error { return exec.Command(args[0], args[1:]...).Run() }

func try(args ...string) { _ = Try(args...) }

// NSRun runs a command inside namespace ns.
func (e *Env) NSRun(ns string, args ...string) string {
	e.t.Helper()
	return e.Run(append([]string{"ip", "netns", "exec", ns}, args...)...)
}

// NS creates a namespace with loopback up and returns its full name.
func (e *Env) NS(name string) string {
	e.t.Helper()
	ns := e.prefix + name
	e.Run("ip", "netns", "add", ns)
	e.t.Cleanup(func() { try("ip", "netns", "del", ns) })
	e.NSRun(ns, "ip", "link", "set", "lo", "up")
	// Stale fragments from a lossy run would block reassembly for 30 s.
	e.NSRun(ns, "sysctl", "-qw", "net.ipv4.ipfrag_time=2")
	return ns
}

// Veth creates a veth pair: a in namespace aNS and b in bNS ("" for the
// root namespace, where the name must come from IfName), both up with
// IPv6 off (no stray router solicitations). Both ends are deleted in
// cleanup, and root-namespace ends waited for: namespace deletion is
// asynchronous.
func (e *Env) Veth(a, aNS, b, bNS string) {
	e.t.Helper()
	e.VethQueues(a, aNS, b, bNS, 0)
}

// VethQueues is Veth with queues receive and transmit queues on each end
// (0 for the kernel's default).
func (e *Env) VethQueues(a, aNS, b, bNS string, queues int) {
	e.t.Helper()
	tmpA, tmpB := e.IfName("ta"), e.IfName("tb")
	var q []string
	if queues > 0 {
		n := strconv.Itoa(queues)
		q = []string{"numtxqueues", n, "numrxqueues", n}
	}
	args := append(append([]string{"ip", "link", "add", tmpA}, q...), "type", "veth", "peer", "name", tmpB)
	e.Run(append(args, q...)...)
	e.t.Cleanup(func() {
		// Only names that are ours: the temporary ones (if a rename
		// failed) and the ends.
		try("ip", "link", "del", tmpA)
		try("ip", "link", "del", tmpB)
		for _, x := range [][2]string{{a, aNS}, {b, bNS}} {
			if x[1] == "" {
				try("ip", "link", "del", x[0])
				WaitGone(x[0], 3*time.Second)
			} else {
				try("ip", "-n", x[1], "link", "del", x[0])
			}
		}
	})
	for _, x := range [][3]string{{tmpA, a, aNS}, {tmpB, b, bNS}} {
		args := []string{"ip", "link", "set", x[0], "name", x[1]}
		if x[2] != "" {
			args = append(args, "netns", x[2])
		}
		e.Run(args...)
		e.LinkRun(x[2], "sysctl", "-qw", "net.ipv6.conf."+x[1]+".disable_ipv6=1")
		e.LinkRun(x[2], "ip", "link", "set", x[1], "up")
	}
}

// LinkRun runs a command in ns, or in the root namespace when ns is "".
func (e *Env) LinkRun(ns string, args ...string) string {
	e.t.Helper()
	if ns == "" {
		return e.Run(args...)
	}
	return e.NSRun(ns, args...)
}

// Addr adds an address (CIDR) to dev in ns.
func (e *Env) Addr(ns, dev, cidr string) {
	e.t.Helper()
	e.LinkRun(ns, "ip", "addr", "add", cidr, "dev", dev)
}

// WaitGone waits for a root-namespace interface to disappear.
func WaitGone(name string, timeout time.Duration) bool {
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/sys/class/net/" + name); os.IsNotExist(err) {
			return true
		}
	}
	return false
}

// OpenDevice opens the interface name with open, failing t if that fails,
// and closes the device in cleanup.
func OpenDevice[D interface{ Close() error }](t testing.TB, name string, open func(name string) (D, error)) D {
	t.Helper()
	d, err := open(name)
	if err != nil {
		t.Fatalf("Open(%s): %v", name, err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}
