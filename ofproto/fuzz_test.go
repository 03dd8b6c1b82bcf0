package ofproto

import (
	"testing"

	"gvs/dpif"
)

// FuzzDatapath feeds arbitrary frames into arbitrary ports of a NORMAL
// bridge with every VLAN mode: nothing panics, and once the datapath has
// handled a frame every buffer is back in its pool.
func FuzzDatapath(f *testing.F) {
	fx := newFixture(f, dpif.Config{EMCInsertInvProb: 1}, BridgeConfig{MACTableSize: 16},
		PortConfig{Tag: 10},
		PortConfig{},
		PortConfig{VLANMode: VLANModeNativeUntagged, Tag: 10, Trunks: []uint16{20}},
		PortConfig{VLANMode: VLANModeNativeTagged, Tag: 20})
	for port := byte(1); port <= 4; port++ {
		f.Add(port, frame(broadcast, mac(port), 0, false))
		f.Add(port, frame(mac(1), mac(port), 10, false))
		f.Add(port, frame(mac(2), mac(port), 20|5<<13, false))
		f.Add(port, frame([6]byte{0x01, 0x80, 0xc2, 0, 0, 0}, mac(port), 0, true))
	}
	f.Add(byte(2), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, port byte, data []byte) {
		fx.t = t
		no := uint32(port%4) + 1
		fx.send(no, data)
		tot := fx.pmdTotals()
		if tot.PoolFree != tot.PoolSize {
			t.Fatalf("buffer leak: %d of %d free", tot.PoolFree, tot.PoolSize)
		}
		for n, d := range fx.devs {
			if d.Violations() != 0 {
				t.Fatalf("port %d: overlapping queue calls", n)
			}
		}
	})
}
