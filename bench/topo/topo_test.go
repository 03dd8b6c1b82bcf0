package topo

import (
	"os"
	"strconv"
	"testing"
)

func TestNames(t *testing.T) {
	tp := New()
	for _, dev := range []string{tp.ClientDev, tp.ServerDev, tp.ClientPort, tp.ServerPort, tp.Prefix + "br"} {
		if len(dev) > 15 {
			t.Errorf("device name %q is longer than IFNAMSIZ-1", dev)
		}
	}
	for _, ns := range []string{tp.Client, tp.Server, tp.Switch} {
		pid, ok := stalePID(ns)
		if !ok || pid != os.Getpid() {
			t.Errorf("stalePID(%q) = %d, %v", ns, pid, ok)
		}
	}
}

func TestStalePID(t *testing.T) {
	for name, want := range map[string]int{"gb123c": 123, "gb9w": 9, "gb42s": 42} {
		if pid, ok := stalePID(name); !ok || pid != want {
			t.Errorf("stalePID(%q) = %d, %v; want %d", name, pid, ok, want)
		}
	}
	for _, name := range []string{"gvsxdp5514-2-a", "gb", "gbc", "gb12x", "gbabc", "other123c", "gb" + strconv.Itoa(-1) + "c"} {
		if _, ok := stalePID(name); ok {
			t.Errorf("stalePID(%q) accepted a name that is not ours", name)
		}
	}
}
