package ofproto

import (
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/xlate"
)

// The hashes were computed independently (a Python transcription of
// lib/hash.h's generic hash_int); the order is what Debian's
// ovs-vswitchd prints for dump-ports on a dummy bridge with ports 1-3.
func TestHashOFPort(t *testing.T) {
	for _, c := range []struct{ port, want uint32 }{
		{1, 0xea95647d}, {2, 0xa1cba8ce}, {3, 0xb2ce147f}, {mf.PortLocal, 0x77e01031},
	} {
		if got := hashOFPort(c.port); got != c.want {
			t.Errorf("hashOFPort(%d) = %#x, want %#x", c.port, got, c.want)
		}
	}
}

func TestOVSPortOrder(t *testing.T) {
	var ports []*xlate.Port
	for _, no := range []uint32{1, 2, 3, mf.PortLocal} {
		ports = append(ports, &xlate.Port{OFPort: no})
	}
	got := ovsPortOrder(ports)
	want := []uint32{mf.PortLocal, 1, 2, 3}
	if len(got) != len(want) {
		t.Fatalf("got %d ports, want %d", len(got), len(want))
	}
	for i, p := range got {
		if p.OFPort != want[i] {
			t.Errorf("position %d: port %#x, want %#x", i, p.OFPort, want[i])
		}
	}
}
