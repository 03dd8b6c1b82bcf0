package dpif

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gvs/packet"
)

// model is the obvious classifier: a list of flows scanned in order of
// their mask's first appearance (a mask disappears with its last flow).
type model struct {
	masks []packet.Mask
	flows map[packet.Mask][]*flow
}

func (m *model) insert(f *flow, mask packet.Mask) {
	if len(m.flows[mask]) == 0 {
		m.masks = append(m.masks, mask)
	}
	m.flows[mask] = append(m.flows[mask], f)
}

func (m *model) remove(f *flow, mask packet.Mask) {
	fs := m.flows[mask]
	for i := range fs {
		if fs[i] == f {
			fs = append(fs[:i], fs[i+1:]...)
			break
		}
	}
	m.flows[mask] = fs
	if len(fs) == 0 {
		for i := range m.masks {
			if m.masks[i] == mask {
				m.masks = append(m.masks[:i], m.masks[i+1:]...)
				break
			}
		}
	}
}

func (m *model) lookup(k *packet.Key) *flow {
	for _, mask := range m.masks {
		var mk packet.Key
		k.ApplyMask(&mask, &mk)
		for _, f := range m.flows[mask] {
			if f.key == mk {
				return f
			}
		}
	}
	return nil
}

// randomKey draws fields from small domains so flows and packets collide.
func randomKey(r *rand.Rand) packet.Key {
	var k packet.Key
	k.InPort = uint32(r.IntN(4))
	k.DstMAC = mac(byte(r.IntN(4)))
	k.SrcMAC = mac(byte(r.IntN(4)))
	if r.IntN(2) == 0 {
		k.VLANs[0] = packet.VLANTag{TPID: packet.EtherTypeVLAN, TCI: uint16(r.IntN(3))}
	}
	k.EtherType = []uint16{packet.EtherTypeIPv4, packet.EtherTypeARP}[r.IntN(2)]
	k.DstPort = uint16(r.IntN(3))
	k.TCPFlags = uint16(r.IntN(4))
	return k
}

func randomMask(r *rand.Rand) packet.Mask {
	var m packet.Mask
	if r.IntN(2) == 0 {
		m.InPort = ^uint32(0)
	}
	if r.IntN(2) == 0 {
		m.DstMAC = [6]byte{255, 255, 255, 255, 255, 255}
	}
	if r.IntN(3) == 0 {
		m.SrcMAC = [6]byte{0, 0, 0, 0, 0, 255}
	}
	if r.IntN(2) == 0 {
		m.VLANs[0] = packet.VLANTag{TPID: 0xffff, TCI: 0x0fff}
	}
	if r.IntN(3) == 0 {
		m.EtherType = 0xffff
	}
	if r.IntN(4) == 0 {
		m.DstPort = 0xffff
	}
	return m
}

// TestClassifierMatchesLinearScan: random installs, deletes and lookups,
// compared with the model after every step, and the tables' invariants.
func TestClassifierMatchesLinearScan(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 42))
		c := newClassifier(seed)
		m := &model{flows: map[packet.Mask][]*flow{}}
		var live []*flow
		for step := range 3000 {
			switch op := r.IntN(10); {
			case op < 5: // install unless the same flow exists
				k, mask := randomKey(r), randomMask(r)
				var mk packet.Key
				k.ApplyMask(&mask, &mk)
				if c.get(&mk, &mask) != nil {
					continue
				}
				f := &flow{key: mk}
				c.insert(f, &mask)
				m.insert(f, mask)
				live = append(live, f)
			case op < 7 && len(live) > 0:
				i := r.IntN(len(live))
				f := live[i]
				mask := f.sub.mask
				c.remove(f)
				m.remove(f, mask)
				live = append(live[:i], live[i+1:]...)
			default:
				k := randomKey(r)
				got, probed := c.lookup(&k)
				if want := m.lookup(&k); got != want {
					t.Fatalf("seed %d step %d: classifier %p, linear scan %p", seed, step, got, want)
				}
				// Subtables probed: the matching one's position, from 1.
				wantProbed := 0
				if got != nil {
					wantProbed = slices.Index(*c.subs.Load(), got.sub) + 1
				}
				if probed != wantProbed {
					t.Fatalf("seed %d step %d: %d subtables probed, want %d", seed, step, probed, wantProbed)
				}
			}
		}
		n := 0
		c.forEach(func(*flow) { n++ })
		if n != len(live) || c.numSubtables() != len(m.masks) {
			t.Fatalf("seed %d: %d flows/%d subtables, model %d/%d", seed, n, c.numSubtables(), len(live), len(m.masks))
		}
		for _, f := range live {
			if got, _ := c.lookup(&f.key); got == nil {
				t.Fatalf("seed %d: installed flow not found by its own key", seed)
			}
		}
	}
}

// TestClassifierGrowsAndShrinks exercises rebuilds with many flows in one
// subtable.
func TestClassifierGrowsAndShrinks(t *testing.T) {
	c := newClassifier(1)
	mask := packet.Mask{InPort: ^uint32(0)}
	var fs []*flow
	for i := range 5000 {
		f := &flow{key: packet.Key{InPort: uint32(i)}}
		c.insert(f, &mask)
		fs = append(fs, f)
	}
	for i, f := range fs {
		if i%2 == 0 {
			c.remove(f)
		}
	}
	for i := range 5000 {
		k := packet.Key{InPort: uint32(i), SrcMAC: mac(1)}
		if got, _ := c.lookup(&k); (got != nil) != (i%2 == 1) {
			t.Fatalf("flow %d: found %v", i, got != nil)
		}
	}
	if slots := len((*c.subs.Load())[0].table.Load().slots); slots > 16384 {
		t.Fatalf("table of %d slots for 2500 flows", slots)
	}
}
