package afpacket

import (
	"os"
	"testing"
	"time"

	"gvs/netdev"
	"gvs/netdev/internal/nettest"
)

// newSparesT makes a pool that is closed in cleanup and waits until it
// holds want spares.
func newSparesT(t *testing.T, cfg SpareConfig, want int) *SparePool {
	t.Helper()
	p := NewSparePool(cfg)
	t.Cleanup(func() { p.Close() })
	waitReady(t, p, want)
	return p
}

func waitReady(t *testing.T, p *SparePool, want int) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); p.Ready() != want; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("pool holds %d spares, want %d (%+v)", p.Ready(), want, p.Counts())
		}
	}
}

// TestSpareTakenForwards opens both ports of the forwarding topology from
// spares and checks that pings pass both ways through them (each port
// receives and sends), that the pool refills, and that the budget counts
// the spares' rings and the ports' rings once each.
func TestSpareTakenForwards(t *testing.T) {
	budget := netdev.NewMemoryBudget(64 << 20)
	spares := newSparesT(t, SpareConfig{Spares: 2, Budget: budget}, 2)
	ring := int64(spares.shape.bytes())
	if got := budget.Used(); got != 2*ring {
		t.Fatalf("budget used %d with two spares, want %d", got, 2*ring)
	}
	tp := newTopo(t, Config{Spares: spares, Budget: budget})
	if c := spares.Counts(); c.Taken != 2 || c.Missed != 0 {
		t.Fatalf("counts after opening two ports: %+v, want both taken", c)
	}
	waitReady(t, spares, 2)
	if got := budget.Used(); got != 4*ring {
		t.Errorf("budget used %d with two ports and two spares, want %d", got, 4*ring)
	}
	if got := tp.d1.RxRingBytes(); got != ring {
		t.Errorf("port's ring %d bytes, want the spare's %d", got, ring)
	}
	fw := nettest.StartForwarder(t, tp.d1, tp.d2)
	if rtts := pingRTTs(t, tp.ns1, addr2, 10, 56, false); len(rtts) < 9 {
		t.Errorf("only %d of 10 pings answered through ports opened from spares", len(rtts))
	}
	// Large pings: frames beyond the MTU come fragmented, each one
	// filling most of a slot.
	if rtts := pingRTTs(t, tp.ns2, addr1, 5, 4000, false); len(rtts) < 4 {
		t.Errorf("only %d of 5 pings of 4000 bytes answered", len(rtts))
	}
	fw.Stop()
	tp.d1.Close()
	tp.d2.Close()
	if got := budget.Used(); got != 2*ring {
		t.Errorf("budget used %d after closing the ports, want the spares' %d", got, 2*ring)
	}
}

// TestSpareShapeMismatchOpensAsBefore checks that queues of another shape
// open sockets of their own and leave the spares alone, and that a
// socket buffer size (which does not change the opening ring) takes one.
func TestSpareShapeMismatchOpensAsBefore(t *testing.T) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	spares := newSparesT(t, SpareConfig{Spares: 2}, 2)
	for _, tc := range []struct {
		name string
		cfg  Config
		mtu  string
	}{
		{name: "ring-v3", cfg: Config{RxMode: RxRing}},
		{name: "mmsg", cfg: Config{RxMode: RxRecvmmsg}},
		{name: "two queues", cfg: Config{RxQueues: 2}},
		{name: "larger minimum ring", cfg: Config{MinRingSize: 1 << 20}},
		{name: "own slot size", cfg: Config{V2FrameSize: 4096}},
		{name: "jumbo MTU", mtu: "9000"},
		{name: "another budget", cfg: Config{Budget: netdev.NewMemoryBudget(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mtu := "1500"
			if tc.mtu != "" {
				mtu = tc.mtu
			}
			env.Run("ip", "link", "set", a, "mtu", mtu)
			before := spares.Counts()
			cfg := tc.cfg
			cfg.Spares = spares
			d := openT(t, a, cfg)
			if c := spares.Counts(); c != before || spares.Ready() != 2 {
				t.Errorf("counts %+v -> %+v, %d ready: a spare was used", before, c, spares.Ready())
			}
			if st := d.Status(); st["rx_ring"] != cfg.withDefaults().RxMode {
				t.Errorf("status %v", st)
			}
			d.Close()
		})
	}
	env.Run("ip", "link", "set", a, "mtu", "1500")
	d := openT(t, a, Config{Spares: spares, SocketBuffer: 4 << 20})
	if c := spares.Counts(); c.Taken != 1 {
		t.Errorf("counts %+v after opening with a socket buffer size: want one taken", c)
	}
	if st := d.Status(); st["socket_buf_requested"] != "4194304" {
		t.Errorf("status %v: socket buffer not applied to a spare", st)
	}
}

// TestSparePoolBudgetAndClose checks that spares are made only within the
// budget, that Close gives their rings back and closes their sockets,
// and that a closed pool hands out nothing.
func TestSparePoolBudgetAndClose(t *testing.T) {
	fdsBefore := openFDs(t)
	c := Config{RxMode: RxRingV2, RxQueues: 1}.withDefaults()
	c.mtu = spareMTU
	ring := int64(c.initialShape(0).bytes())
	budget := netdev.NewMemoryBudget(ring + ring/2) // room for one
	p := NewSparePool(SpareConfig{Spares: 3, Budget: budget})
	waitReady(t, p, 1)
	for end := time.Now().Add(5 * time.Second); p.Counts().Failed == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no failure recorded with a budget for one spare: %+v", p.Counts())
		}
	}
	if p.Ready() != 1 || budget.Used() != ring {
		t.Errorf("%d spares, budget used %d; want 1 and %d", p.Ready(), budget.Used(), ring)
	}
	if fds := openFDs(t); fds != fdsBefore+1 {
		t.Errorf("%d descriptors open with one spare, %d before", fds, fdsBefore)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if p.Ready() != 0 || budget.Used() != 0 {
		t.Errorf("after Close: %d spares, budget used %d", p.Ready(), budget.Used())
	}
	if fds := openFDs(t); fds != fdsBefore {
		t.Errorf("%d descriptors open after Close, %d before", fds, fdsBefore)
	}
	if _, _, ok := p.take(c, c.initialShape(0)); ok {
		t.Error("a closed pool handed out a spare")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
