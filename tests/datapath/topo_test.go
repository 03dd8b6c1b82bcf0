package datapathtest

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// nsPrefix starts the name of every namespace this package creates.
const nsPrefix = "gvsdp"

// topoSeq numbers topologies within one process: names and subnets.
var topoSeq atomic.Int32

// topo is one test's namespaces and veths; everything is removed in
// t.Cleanup, also when the test fails.
type topo struct {
	t      testing.TB
	prefix string // gvsdp<pid>-<n>-
	seq    int
}

// host is a namespace with one veth end (Dev) facing the switch.
type host struct {
	NS   string
	Dev  string // interface inside NS
	Port string // its peer, inside the switch namespace
	IP   string // address of Dev (no prefix length)
	MAC  net.HardwareAddr
}

// newTopo skips t unless it runs as root with ip(8).
func newTopo(t testing.TB) *topo {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces, veths, AF_PACKET/AF_XDP sockets, tap devices")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip(8) (iproute2)")
	}
	n := int(topoSeq.Add(1))
	if n > 250 {
		t.Fatal("too many topologies in one run for 198.18.x.0/24 subnets")
	}
	return &topo{t: t, prefix: fmt.Sprintf("%s%d-%d-", nsPrefix, os.Getpid(), n), seq: n}
}

// subnet returns the first three octets of this topology's i-th /24 in
// 198.18.0.0/15 (i = 0 or 1).
func (tp *topo) subnet(i int) string { return fmt.Sprintf("198.%d.%d", 18+i, tp.seq) }

// run runs a command, failing the test (with its stderr) if it fails.
func (tp *topo) run(args ...string) string {
	tp.t.Helper()
	out, err := runCmd(args...)
	if err != nil {
		tp.t.Fatal(err)
	}
	return out
}

func runCmd(args ...string) (string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return string(out), fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, msg)
	}
	return string(out), nil
}

// ns creates a namespace with loopback up; cleanup deletes it and waits
// until it is gone.
func (tp *topo) ns(role string) string {
	tp.t.Helper()
	name := tp.prefix + role
	tp.run("ip", "netns", "add", name)
	tp.t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", name).Run()
		waitFor(5*time.Second, func() bool {
			_, err := os.Stat("/run/netns/" + name)
			return os.IsNotExist(err)
		})
	})
	tp.run("ip", "-n", name, "link", "set", "lo", "up")
	return name
}

// veth creates a pair with end swDev in swNS and end dev in hostNS, both
// with the given MTU (0: the default), up, IPv6 off (no router
// solicitations or DAD in the counters). Cleanup deletes the pair before
// the namespaces go (their deletion is asynchronous).
func (tp *topo) veth(swNS, swDev, hostNS, dev string, mtu int) {
	tp.t.Helper()
	args := []string{"ip", "-n", swNS, "link", "add", swDev}
	if mtu > 0 {
		args = append(args, "mtu", fmt.Sprint(mtu))
	}
	args = append(args, "type", "veth", "peer", "name", dev, "netns", hostNS)
	if mtu > 0 {
		args = append(args, "mtu", fmt.Sprint(mtu))
	}
	tp.run(args...)
	tp.t.Cleanup(func() { _ = exec.Command("ip", "-n", swNS, "link", "del", swDev).Run() })
	for _, e := range [][2]string{{swNS, swDev}, {hostNS, dev}} {
		tp.run("ip", "netns", "exec", e[0], "sysctl", "-qw", "net.ipv6.conf."+e[1]+".disable_ipv6=1")
		tp.run("ip", "-n", e[0], "link", "set", e[1], "up")
	}
}

// host creates namespace role with a veth to the switch namespace: Dev is
// "eth0" inside it, Port is port in swNS; ip (a.b.c.d/len) goes on eth0.
func (tp *topo) host(swNS, role, port, cidr string, mtu int) *host {
	tp.t.Helper()
	ns := tp.ns(role)
	tp.veth(swNS, port, ns, "eth0", mtu)
	h := &host{NS: ns, Dev: "eth0", Port: port}
	if cidr != "" {
		tp.run("ip", "-n", ns, "addr", "add", cidr, "dev", "eth0")
		h.IP, _, _ = strings.Cut(cidr, "/")
	}
	h.MAC = tp.mac(ns, "eth0")
	return h
}

// mac reads dev's Ethernet address in ns.
func (tp *topo) mac(ns, dev string) net.HardwareAddr {
	tp.t.Helper()
	var links []struct {
		Address string `json:"address"`
	}
	if err := json.Unmarshal([]byte(tp.run("ip", "-n", ns, "-j", "link", "show", dev)), &links); err != nil || len(links) != 1 {
		tp.t.Fatalf("ip -j link show %s in %s: %v", dev, ns, err)
	}
	mac, err := net.ParseMAC(links[0].Address)
	if err != nil {
		tp.t.Fatal(err)
	}
	return mac
}

// linkStats reads dev's kernel counters in ns (ip -s -j link).
func linkStats(ns, dev string) (rx, tx kernelCounters, err error) {
	out, err := runCmd("ip", "-n", ns, "-s", "-j", "link", "show", dev)
	if err != nil {
		return rx, tx, err
	}
	var links []struct {
		Stats struct {
			RX kernelCounters `json:"rx"`
			TX kernelCounters `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal([]byte(out), &links); err != nil || len(links) != 1 {
		return rx, tx, fmt.Errorf("ip -s -j link show %s: %v: %s", dev, err, out)
	}
	return links[0].Stats.RX, links[0].Stats.TX, nil
}

type kernelCounters struct {
	Bytes   uint64 `json:"bytes"`
	Packets uint64 `json:"packets"`
	Errors  uint64 `json:"errors"`
	Dropped uint64 `json:"dropped"`
}

// waitFor polls cond every 10 ms until it holds or timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	for end := time.Now().Add(timeout); ; time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}
