package dpif

import (
	"testing"

	"gvs/netdev/netdevtest"
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx, p, plan := manualFixture(t, c.cfg, flowFrames(c.nFlows), c.handler)
			for range 4 {
				p.pollOnce(plan) // install flows, fill the EMC
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
			if got := p.pool.Stats(); got.Free != got.Buffers {
				t.Fatalf("pool leak: %d of %d free", got.Free, got.Buffers)
			}
			if fx.devs[2].Stats().TxPackets == 0 {
				t.Fatal("nothing sent")
			}
		})
	}
}
