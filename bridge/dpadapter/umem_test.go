package dpadapter

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"gvs/bridge"
)

// TestAFXDPPortsShareUMEM: afxdp ports of a datapath share one UMEM
// (status shared-umem=true), except one whose options say
// xdp-shared-umem=false, which reports why it has its own.
func TestAFXDPPortsShareUMEM(t *testing.T) {
	needRoot(t)
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Skipf("AF_XDP unavailable: %v", err)
	}
	unix.Close(fd)
	d := New(Config{PMDs: 1})
	defer d.Close()
	if err := d.AddBridge("gvbau0", bridge.BridgeConfig{}); err != nil {
		t.Fatal(err)
	}
	prefix := "gvbu" + itoa36(os.Getpid()%(36*36*36))
	names := []string{prefix + "a", prefix + "b", prefix + "c"}
	for _, n := range names {
		veth(t, n)
	}
	opts := []map[string]string{{"xdp-mode": "generic"}, {"xdp-mode": "generic"}, {"xdp-mode": "generic", "xdp-shared-umem": "false"}}
	for i, n := range names {
		if err := d.AddPort(bridge.PortSpec{Bridge: "gvbau0", Name: n, Type: "afxdp", Options: opts[i]}); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range names {
		st, err := d.PortState(n)
		if err != nil {
			t.Fatal(err)
		}
		counters, err := d.PortStats(n)
		if err != nil {
			t.Fatal(err)
		}
		want := "true"
		if i == 2 {
			want = "false"
		}
		if st.Status["shared-umem"] != want || counters.Custom["umem_shared"] != map[string]uint64{"true": 1, "false": 0}[want] {
			t.Errorf("%s: status %v custom umem_shared %d, want shared-umem=%s", n, st.Status, counters.Custom["umem_shared"], want)
		}
		if i < 2 && counters.Custom["umem_members"] != 2 {
			t.Errorf("%s: %d members in the shared UMEM, want 2", n, counters.Custom["umem_members"])
		}
		if i == 2 && st.Status["shared-umem-fallback"] != "options:xdp-shared-umem=false" {
			t.Errorf("%s: fallback reason %q", n, st.Status["shared-umem-fallback"])
		}
	}
	if err := d.AddPort(bridge.PortSpec{Bridge: "gvbau0", Name: "gvbaubad", Type: "afxdp", Options: map[string]string{"xdp-shared-umem": "maybe"}}); err == nil {
		t.Error("xdp-shared-umem=maybe accepted")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func itoa36(n int) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	s := ""
	for {
		s = string(digits[n%36]) + s
		if n /= 36; n == 0 {
			return s
		}
	}
}
