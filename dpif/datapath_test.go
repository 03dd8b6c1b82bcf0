package dpif

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"gvs/netdev/netdevtest"
	"gvs/packet"
)

// hubHandler forwards everything from port a to port b and back, one
// megaflow per (in_port, src, dst).
func hubHandler(a, b uint32) handlerFunc {
	return func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		out := b
		if u.Key.InPort == b {
			out = a
		}
		u.Actions = append(u.Actions, Output(out))
		return UpcallInstall
	}
}

func TestForwardThroughUpcallThenCaches(t *testing.T) {
	fx := newFixture(t, Config{EMCInsertInvProb: 1}, 2)
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	frame := udpFrame(mac(2), mac(1), 0, [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}, 1000, 2000)
	for i := range 5 {
		fx.devs[1].Inject(0, frame)
		got := fx.devs[2].WaitSent(i+1, 5*time.Second)
		if len(got) != i+1 {
			t.Fatalf("packet %d: port 2 sent %d frames", i, len(got))
		}
		if !bytes.Equal(got[i].Data, frame) {
			t.Fatalf("frame changed in flight")
		}
	}
	waitFor(t, "stats", func() bool { return fx.totals().Packets == 5 })
	s := fx.totals()
	if s.Upcalls != 1 || s.Misses != 1 || s.MegaflowHits != 1 || s.EMCHits != 3 {
		t.Fatalf("upcalls %d misses %d megaflow %d emc %d; want 1 1 1 3", s.Upcalls, s.Misses, s.MegaflowHits, s.EMCHits)
	}
	flows := fx.dp.Dump()
	// The upcall's packet is not counted on the flow it installed.
	if len(flows) != 1 || flows[0].Stats.Packets != 4 || flows[0].Stats.Bytes != uint64(4*len(frame)) {
		t.Fatalf("flows %+v", flows)
	}
	if flows[0].Actions.String() != "2" {
		t.Fatalf("actions %s", flows[0].Actions)
	}
	if n := len(fx.devs[1].Sent()); n != 0 {
		t.Fatalf("hairpin: port 1 sent %d", n)
	}
}

func TestActionsMultipleOutputs(t *testing.T) {
	fx := newFixture(t, Config{}, 4)
	frame := udpFrame(mac(2), mac(1), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, 1, 2)
	var k packet.Key
	packet.Parse(frame, &k)
	k.InPort = 1
	err := fx.dp.Put(FlowSpec{Key: k, Mask: l2Mask(), Actions: Actions{
		SetEthDst(mac(9)), Output(2), PushVLAN(100 | 3<<13), Output(3), PopVLAN(), SetEthSrc(mac(8)), Output(4),
	}})
	if err != nil {
		t.Fatal(err)
	}
	fx.devs[1].Inject(0, frame)
	f2 := fx.devs[2].WaitSent(1, 5*time.Second)
	f3 := fx.devs[3].WaitSent(1, 5*time.Second)
	f4 := fx.devs[4].WaitSent(1, 5*time.Second)
	if len(f2) != 1 || len(f3) != 1 || len(f4) != 1 {
		t.Fatalf("sent %d %d %d; pmds %+v; pending %d", len(f2), len(f3), len(f4), fx.dp.PMDStats(), fx.devs[1].Pending(0))
	}
	var k2, k3, k4 packet.Key
	packet.Parse(f2[0].Data, &k2)
	packet.Parse(f3[0].Data, &k3)
	packet.Parse(f4[0].Data, &k4)
	if k2.DstMAC != mac(9) || k2.SrcMAC != mac(1) || k2.NumVLANs() != 0 {
		t.Errorf("port 2 key %+v", k2)
	}
	if k3.DstMAC != mac(9) || k3.VLANs[0].VID() != 100 || k3.VLANs[0].PCP() != 3 || k3.DstPort != 2 {
		t.Errorf("port 3 key %+v", k3)
	}
	if k4.SrcMAC != mac(8) || k4.NumVLANs() != 0 || len(f4[0].Data) != len(frame) {
		t.Errorf("port 4 key %+v", k4)
	}
	waitFor(t, "pools refilled", func() bool { s := fx.totals(); return s.PoolFree == s.PoolSize })
}

func TestExecuteAndDrop(t *testing.T) {
	fx := newFixture(t, Config{}, 2)
	frame := udpFrame(mac(2), mac(1), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, 1, 2)
	if err := fx.dp.Execute(frame, 1, Actions{Output(2), Output(77)}); err != nil {
		t.Fatal(err)
	}
	if err := fx.dp.Execute(frame, 1, nil); err != nil {
		t.Fatal(err)
	}
	if got := fx.devs[2].Sent(); len(got) != 1 || !bytes.Equal(got[0].Data, frame) {
		t.Fatalf("sent %v", got)
	}
	if free := fx.dp.nonPMD.ctx.pool.Stats().Free; free != 256 {
		t.Fatalf("non-PMD pool leaked: %d free", free)
	}
}

func TestPutModifyDelFlushDump(t *testing.T) {
	fx := newFixture(t, Config{}, 2)
	var k packet.Key
	k.InPort, k.SrcMAC = 1, mac(5)
	m := packet.Mask{InPort: ^uint32(0)}
	if err := fx.dp.Put(FlowSpec{Key: k, Mask: m, Actions: Actions{Output(2)}}); err != nil {
		t.Fatal(err)
	}
	// Same mask, same masked key (SrcMAC is wildcarded): a modify.
	k2 := k
	k2.SrcMAC = mac(6)
	fx.dp.Put(FlowSpec{Key: k2, Mask: m, Actions: Actions{PopVLAN(), Output(2)}})
	flows := fx.dp.Dump()
	if len(flows) != 1 || flows[0].Actions.String() != "pop_vlan,2" || flows[0].Key.SrcMAC != ([6]byte{}) {
		t.Fatalf("dump %+v", flows)
	}
	if _, err := fx.dp.Del(k, m); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.dp.Del(k, m); !errors.Is(err, ErrNoFlow) {
		t.Fatalf("second Del: %v", err)
	}
	for i := range 10 {
		k.InPort = uint32(i)
		fx.dp.Put(FlowSpec{Key: k, Mask: m})
	}
	if fx.dp.NumFlows() != 10 || fx.dp.Stats().Subtables != 1 {
		t.Fatalf("flows %d subtables %d", fx.dp.NumFlows(), fx.dp.Stats().Subtables)
	}
	fx.dp.Flush()
	if fx.dp.NumFlows() != 0 || len(fx.dp.Dump()) != 0 || fx.dp.Stats().Subtables != 0 {
		t.Fatalf("after flush: %d flows", fx.dp.NumFlows())
	}
}

func TestFlowsExpireWhenIdle(t *testing.T) {
	fx := newFixture(t, Config{MaxIdle: 100 * time.Millisecond, RevalidateInterval: 10 * time.Millisecond}, 2)
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	frame := udpFrame(mac(2), mac(1), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, 1, 2)
	start := time.Now() // the flow cannot be used before this
	fx.devs[1].Inject(0, frame)
	waitFor(t, "flow installed", func() bool { return fx.dp.NumFlows() == 1 })
	waitFor(t, "flow expired", func() bool { return fx.dp.NumFlows() == 0 })
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Fatalf("expired %v after it was installed, before its idle time", el)
	}
}

func TestExpireIdleKeepsUsedFlows(t *testing.T) {
	fx := newFixture(t, Config{MaxIdle: time.Hour}, 2)
	var k packet.Key
	fx.dp.Put(FlowSpec{Key: k, Mask: packet.Mask{InPort: ^uint32(0)}})
	if n := fx.dp.ExpireIdle(time.Now().Add(30 * time.Minute)); n != 0 {
		t.Fatalf("expired %d flows still within their idle time", n)
	}
	if n := fx.dp.ExpireIdle(time.Now().Add(2 * time.Hour)); n != 1 {
		t.Fatalf("expired %d flows, want 1", n)
	}
}

func TestNoHandlerLosesUpcalls(t *testing.T) {
	fx := newFixture(t, Config{}, 2)
	frame := udpFrame(mac(2), mac(1), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, 1, 2)
	for range 3 {
		fx.devs[1].Inject(0, frame)
	}
	waitFor(t, "lost upcalls", func() bool { return fx.totals().LostUpcalls == 3 })
	if s := fx.totals(); s.PoolFree != s.PoolSize {
		t.Fatalf("pool leak: %d of %d free", s.PoolFree, s.PoolSize)
	}
}

func TestRxQueuesRoundRobinAndSharedTx(t *testing.T) {
	fx := newFixture(t, Config{PMDs: 2}, 0)
	fx.addPort(netdevtest.Config{Name: "multi", RxQueues: 4, TxQueues: 3})
	fx.addPort(netdevtest.Config{Name: "single", RxQueues: 1, TxQueues: 1})
	ports := fx.dp.Ports()
	if len(ports) != 2 || ports[0].Name != "multi" {
		t.Fatalf("ports %+v", ports)
	}
	if got := ports[0].RxQueuePMDs; len(got) != 4 || got[0] == got[1] || got[0] != got[2] || got[1] != got[3] {
		t.Fatalf("multi queues on PMDs %v, want alternating", got)
	}
	if ports[0].SharedTx || !ports[1].SharedTx {
		t.Fatalf("shared tx: %v %v", ports[0].SharedTx, ports[1].SharedTx)
	}
	// All four queues of "multi" send to "single" (one shared tx queue)
	// from both PMDs at once.
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	for i := range 400 {
		fx.devs[1].Inject(i%4, udpFrame(mac(2), mac(byte(i%7)), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, uint16(i), 2))
	}
	if got := fx.devs[2].WaitSent(400, 5*time.Second); len(got) != 400 {
		t.Fatalf("sent %d of 400", len(got))
	}
	if v := fx.devs[1].Violations() + fx.devs[2].Violations(); v != 0 {
		t.Fatalf("%d concurrent calls on one queue", v)
	}
}

func TestCPUMask(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
	}{{"", nil}, {"0x1", []int{0}}, {"6", []int{1, 2}}, {"0x10", []int{4}}, {"F0", []int{4, 5, 6, 7}}} {
		got, err := parseCPUMask(c.in)
		if err != nil || len(got) != len(c.want) {
			t.Fatalf("%q: %v %v", c.in, got, err)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%q: %v", c.in, got)
			}
		}
	}
	if _, err := parseCPUMask("0xzz"); err == nil {
		t.Fatal("bad mask accepted")
	}
	// A datapath pinned to CPU 0 runs.
	fx := newFixture(t, Config{PMDCPUMask: "0x1"}, 2)
	if fx.dp.NumPMDs() != 1 || fx.dp.PMDStats()[0].CPU != 0 {
		t.Fatalf("pmds %+v", fx.dp.PMDStats())
	}
}

func TestFlowEntryFormat(t *testing.T) {
	var k packet.Key
	k.InPort, k.SrcMAC, k.DstMAC = 3, mac(1), mac(2)
	k.VLANs[0] = packet.VLANTag{TPID: packet.EtherTypeVLAN, TCI: 10}
	m := l2Mask()
	m.VLANs[0] = packet.VLANTag{TPID: 0xffff, TCI: 0xffff}
	now := time.Now()
	e := FlowEntry{Key: k, Mask: m, Actions: Actions{PopVLAN(), Output(2)}, Stats: FlowStats{Packets: 2, Bytes: 128, Used: now.Add(-time.Second)}}
	// As Open vSwitch's netdev datapath prints it: recirc_id always, the
	// tag as eth_type(TPID),vlan(...) with what follows in encap().
	want := "recirc_id(0),in_port(3),packet_type(ns=0,id=0),eth(src=02:00:00:00:00:01,dst=02:00:00:00:00:02),eth_type(0x8100),vlan(vid=10,pcp=0),encap(), packets:2, bytes:128, used:1.000s, actions:pop_vlan,2"
	if got := e.Format(now); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := (FlowEntry{}).Format(now); got != "recirc_id(0),packet_type(ns=0,id=0), packets:0, bytes:0, used:never, actions:drop" {
		t.Fatalf("empty flow: %s", got)
	}
}

// TestSubtableLookupsCountTheMatchingSubtablesPosition: with the EMC off,
// every packet of a known flow is a megaflow hit, and the PMD counts the
// subtables probed for it: 1 for flows of the first mask installed, 2 for
// the second (Open vSwitch's PMD_STAT_MASKED_LOOKUP).
func TestSubtableLookupsCountTheMatchingSubtablesPosition(t *testing.T) {
	fx := newFixture(t, Config{EMCEntries: -1}, 2)
	fx.dp.SetUpcallHandler(handlerFunc(func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		out := uint32(2)
		if u.Key.InPort == 2 {
			u.Mask.DstPort = ^uint16(0) // a second mask: a second subtable
			out = 1
		}
		u.Actions = append(u.Actions, Output(out))
		return UpcallInstall
	}))
	fromA := udpFrame(mac(2), mac(1), 0, [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}, 1000, 2000)
	fromB := udpFrame(mac(1), mac(2), 0, [4]byte{198, 18, 0, 2}, [4]byte{198, 18, 0, 1}, 2000, 1000)
	send := func(in, out uint32, frame []byte, n int) {
		t.Helper()
		for range n {
			want := len(fx.devs[out].Sent()) + 1
			fx.devs[in].Inject(0, frame)
			if got := fx.devs[out].WaitSent(want, 5*time.Second); len(got) != want {
				t.Fatalf("port %d sent %d frames, want %d", out, len(got), want)
			}
		}
	}
	send(1, 2, fromA, 1) // miss: installs the first subtable's flow
	send(2, 1, fromB, 1) // miss: the second subtable
	send(2, 1, fromB, 5)
	send(1, 2, fromA, 3)
	waitFor(t, "stats", func() bool { return fx.totals().Packets == 10 })
	var hits, lookups uint64
	for _, p := range fx.dp.PMDStats() {
		hits += p.MegaflowHits
		lookups += p.SubtableLookups
	}
	if hits != 8 || lookups != 5*2+3*1 {
		t.Fatalf("megaflow hits %d, subtable lookups %d; want 8 and 13", hits, lookups)
	}
}
