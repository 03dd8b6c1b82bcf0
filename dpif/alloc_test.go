package dpif

import (
	"strings"
	"testing"

	"gvs/dpif/conntrack"
	"gvs/netdev/netdevtest"
	"gvs/packet"
)

// manualFixture is a datapath whose single PMD the test drives itself:
// port 1 replays frames for ever, ports 2 and 3 discard what they get.
func manualFixture(t testing.TB, cfg Config, frames [][]byte, h UpcallHandler) (*fixture, *pmd, *pmdPlan) {
	cfg.manual = true
	cfg.PMDs = 1
	fx := newFixture(t, cfg, 0)
	for _, name := range []string{"in", "out1", "out2"} {
		fx.addPort(netdevtest.Config{Name: name, Discard: true})
	}
	fx.devs[1].Loop(0, frames)
	fx.dp.SetUpcallHandler(h)
	p := fx.dp.pmdList()[0]
	return fx, p, p.takePlan(nil)
}

func flowFrames(n int) [][]byte {
	var frames [][]byte
	for i := range n {
		frames = append(frames, udpFrame(mac(2), mac(byte(i)), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, 1, 2))
	}
	return frames
}

// TestPacketPathAllocatesNothing: receive -> parse -> EMC or megaflow
// lookup -> execute (with copies for several outputs, VLAN push) -> send,
// once flows are installed, allocates nothing.
func TestPacketPathAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("alloc counts are meaningful in full runs only")
	}
	twoOutputs := handlerFunc(func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		u.Actions = append(u.Actions, Output(2), PushVLAN(10), Output(3))
		return UpcallInstall
	})
	withActions := func(acts func(u *Upcall) Actions) handlerFunc {
		return func(u *Upcall) UpcallResult {
			u.Mask = l2Mask()
			u.Actions = append(u.Actions, acts(u)...)
			return UpcallInstall
		}
	}
	var v packet.Key
	v.SrcIPv4, v.IPTTL, v.SrcPort, v.DstPort = [4]byte{198, 18, 9, 9}, 9, 7, 8
	setMask := packet.Mask{SrcIPv4: [4]byte{255, 255, 255, 255}, IPTTL: 0xff}
	setFields := withActions(func(*Upcall) Actions {
		return Actions{SetMasked(AttrIPv4, &v, &setMask), Set(AttrUDP, &v), SetPktMark(1, 1), Output(2)}
	})
	recirc := withActions(func(u *Upcall) Actions {
		if u.Key.RecircID == 0 {
			return Actions{Hash(HashL4, 0), Recirc(5)}
		}
		return Actions{Output(2)}
	})
	nested := withActions(func(*Upcall) Actions {
		return Actions{Clone(Actions{PushVLAN(5), Output(3)}), CheckPktLen(40, Actions{Trunc(30), Output(2)}, Actions{Output(3)})}
	})
	metered := withActions(func(*Upcall) Actions { return Actions{Meter(1), Output(2), Meter(2), Output(3)} })
	ctReq := conntrack.Request{Zone: 3, Commit: true, SetMark: true, Mark: 1, MarkMask: 1}
	ctRecirc := withActions(func(u *Upcall) Actions {
		if u.Key.RecircID == 0 {
			return Actions{CT(ctReq), Recirc(5)}
		}
		return Actions{CTClear(), Output(2)}
	})
	userspace := withActions(func(*Upcall) Actions {
		return Actions{Userspace(UserspaceCookie{Type: CookieController, MaxLen: 128}), Output(2)}
	})
	cases := []struct {
		name    string
		cfg     Config
		wantEMC bool
		handler UpcallHandler
		nFlows  int
	}{
		{"emc hit", Config{EMCInsertInvProb: 1}, true, hubHandler(1, 2), 4},
		{"megaflow hit", Config{EMCEntries: -1}, false, hubHandler(1, 2), 4},
		{"two outputs and push_vlan", Config{EMCInsertInvProb: 1}, true, twoOutputs, 4},
		{"set fields", Config{EMCInsertInvProb: 1}, true, setFields, 4},
		{"hash and recirc", Config{EMCInsertInvProb: 1}, true, recirc, 4},
		{"clone, check_pkt_len, trunc", Config{EMCInsertInvProb: 1}, true, nested, 4},
		{"meters passing and dropping", Config{EMCInsertInvProb: 1}, true, metered, 4},
		{"userspace (slow queue full)", Config{EMCInsertInvProb: 1}, true, userspaceSink{userspace}, 4},
		// The datapath's side of ct (the tracker here is a fake that
		// allocates nothing for known connections; the tracker's own
		// test covers it).
		{"ct, recirc, ct_clear", Config{EMCInsertInvProb: 1, Tracker: newFakeTracker()}, true, ctRecirc, 4},
		// The same through the datapath's own tracker: established
		// connections.
		{"ct with the datapath's tracker", Config{EMCInsertInvProb: 1}, true, ctRecirc, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx, p, plan := manualFixture(t, c.cfg, flowFrames(c.nFlows), c.handler)
			if strings.Contains(c.name, "datapath's tracker") && fx.dp.Conntrack() == nil {
				t.Skip("the datapath has no tracker")
			}
			// Meter 1 passes everything, meter 2 (1 packet/s) almost
			// nothing.
			fx.dp.MeterSet(1, MeterConfig{PktPS: true, Bands: []MeterBand{{Rate: 1 << 30}}})
			fx.dp.MeterSet(2, MeterConfig{PktPS: true, Bands: []MeterBand{{Rate: 1}}})
			// Install flows, fill the EMC, and fill the slow queue (256
			// entries, each allocating its frame copy once) so the run
			// measures the steady state: AllocsPerRun rounds down.
			for range 16 {
				p.pollOnce(plan)
			}
			before := p.cnt
			if n := testing.AllocsPerRun(200, func() { p.pollOnce(plan) }); n != 0 {
				t.Fatalf("%v allocations per batch", n)
			}
			after := p.cnt
			if after.misses != before.misses {
				t.Fatalf("misses during the run: %d", after.misses-before.misses)
			}
			if c.wantEMC && after.emcHits == before.emcHits || !c.wantEMC && after.megaflowHits == before.megaflowHits {
				t.Fatalf("wrong cache: emc %d megaflow %d", after.emcHits-before.emcHits, after.megaflowHits-before.megaflowHits)
			}
			if _, ok := c.handler.(userspaceSink); ok && len(p.slow) != cap(p.slow) {
				t.Fatalf("slow queue holds %d of %d: userspace copies not made", len(p.slow), cap(p.slow))
			}
			if got := p.pool.Stats(); got.Free != got.Buffers {
				t.Fatalf("pool leak: %d of %d free", got.Free, got.Buffers)
			}
			if fx.devs[2].Stats().TxPackets == 0 {
				t.Fatal("nothing sent")
			}
		})
	}
}

// userspaceSink is a handler that takes userspace packets (and drops
// them), so userspace actions copy packets into the slow queue.
type userspaceSink struct{ handlerFunc }

func (userspaceSink) UserspaceAction(*UserspaceUpcall) {}
