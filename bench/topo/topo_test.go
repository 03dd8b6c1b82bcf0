package topo

import (
	"os"
	"strconv"
	"testing"
)

func TestNames(t *testing.T) {
	tp := New()
	devs := append(tp.SwitchPorts(), tp.Prefix+"br")
	for _, h := range tp.HostDevs() {
		devs = append(devs, h.Dev)
	}
	for _, s := range tp.Senders[1:] {
		devs = append(devs, s.ServerDev)
	}
	seen := map[string]bool{}
	for _, dev := range devs {
		if len(dev) > 15 {
			t.Errorf("device name %q is longer than IFNAMSIZ-1", dev)
		}
		if seen[dev] {
			t.Errorf("device name %q used twice", dev)
		}
		seen[dev] = true
	}
	namespaces := []string{tp.Client, tp.Server, tp.Switch}
	for _, s := range tp.Senders[1:] {
		namespaces = append(namespaces, s.NS)
	}
	for _, ns := range namespaces {
		pid, ok := stalePID(ns)
		if !ok || pid != os.Getpid() {
			t.Errorf("stalePID(%q) = %d, %v", ns, pid, ok)
		}
	}
	if len(tp.Senders) != FlowSenders || tp.Senders[0].NS != tp.Client || len(tp.SwitchPorts()) != FlowSenders+1 {
		t.Errorf("senders %+v, switch ports %v", tp.Senders, tp.SwitchPorts())
	}
}

// Every sender has its own address; switched, all share the server's
// subnet, direct, each extra sender has a subnet of its own.
func TestSenderAddresses(t *testing.T) {
	tp := New()
	for _, direct := range []bool{false, true} {
		seen := map[string]bool{ServerIP: true}
		for i, s := range tp.Senders {
			ip, dst := s.IP(direct), s.Target(direct)
			if seen[ip] {
				t.Errorf("direct=%v: sender %d address %s used twice", direct, i, ip)
			}
			seen[ip] = true
			if !direct && dst != ServerIP {
				t.Errorf("switched sender %d sends to %s", i, dst)
			}
			if direct && i > 0 && (dst == ServerIP || dst[:len(dst)-1] != ip[:len(ip)-1]) {
				t.Errorf("direct sender %d: %s -> %s, want a subnet of its own", i, ip, dst)
			}
		}
	}
	if got := tp.Senders[0].IP(true); got != ClientIP {
		t.Errorf("the first sender is the client, got %s", got)
	}
}

func TestStalePID(t *testing.T) {
	for name, want := range map[string]int{"gb123c": 123, "gb9w": 9, "gb42s": 42, "gb77f1": 77, "gb5f2": 5, "gb31k": 31, "gb31h": 31} {
		if pid, ok := stalePID(name); !ok || pid != want {
			t.Errorf("stalePID(%q) = %d, %v; want %d", name, pid, ok, want)
		}
	}
	for _, name := range []string{"gvsxdp5514-2-a", "gb", "gbc", "gb12x", "gbabc", "other123c", "gb" + strconv.Itoa(-1) + "c", "gb12f", "gb12f0", "gb12f1x", "gbf1", "gb12kh", "gb12h1"} {
		if _, ok := stalePID(name); ok {
			t.Errorf("stalePID(%q) accepted a name that is not ours", name)
		}
	}
}

// The scale topology's namespaces are found by RemoveStale, and its link
// names fit IFNAMSIZ at 1,000 ports and beyond.
func TestPortsNames(t *testing.T) {
	p := NewPorts(1000)
	for _, ns := range []string{p.Switch, p.Host} {
		if pid, ok := stalePID(ns); !ok || pid != os.Getpid() {
			t.Errorf("stalePID(%q) = %d, %v", ns, pid, ok)
		}
	}
	for _, dev := range []string{p.Port(99999), p.Peer(99999), SinkPort, SinkPeer} {
		if len(dev) > 15 {
			t.Errorf("device name %q is longer than IFNAMSIZ-1", dev)
		}
	}
	if p.Port(7) == SinkPort || p.Peer(7) == SinkPeer || p.Peer(7) != p.PeerPrefix()+"7" {
		t.Errorf("names: port %s peer %s prefix %s", p.Port(7), p.Peer(7), p.PeerPrefix())
	}
	if got := p.PortNames(2, 5); len(got) != 3 || got[0] != p.Port(2) || got[2] != p.Port(4) {
		t.Errorf("PortNames(2, 5) = %v", got)
	}
	if err := p.Destroy(); err != nil {
		t.Errorf("Destroy before Create: %v", err)
	}
}
