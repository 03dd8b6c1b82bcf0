package upcall_test

import (
	"sync"
	"testing"
	"time"

	"gvs/dpif"
	"gvs/dpif/conntrack"
	"gvs/netdev/netdevtest"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/upcall"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
	"gvs/packet"
)

// firewallTracker is a minimal connection tracker: a connection per
// (zone, 5-tuple) in either direction, created by commit; +new until
// then, +est (+rpl from the other side) after.
type firewallTracker struct {
	conntrack.Conntrack // the rest is unused here
	mu                  sync.Mutex
	conns               map[[13]byte]bool
}

func ctKey(zone uint16, src, dst [4]byte, proto uint8, sp, dp uint16) [13]byte {
	var k [13]byte
	k[0], k[1] = byte(zone>>8), byte(zone)
	copy(k[2:], src[:])
	copy(k[6:], dst[:])
	k[10] = proto
	k[11], k[12] = byte(sp), byte(dp) // enough for the test's ports
	return k
}

func (t *firewallTracker) Execute(b *packet.Buffer, req *conntrack.Request) {
	k := &b.Key
	t.mu.Lock()
	defer t.mu.Unlock()
	k.CTZone = req.Zone
	fwd := ctKey(req.Zone, k.SrcIPv4, k.DstIPv4, k.IPProto, k.SrcPort, k.DstPort)
	rev := ctKey(req.Zone, k.DstIPv4, k.SrcIPv4, k.IPProto, k.DstPort, k.SrcPort)
	switch {
	case t.conns[fwd]:
		k.CTState = conntrack.StateTracked | conntrack.StateEstablished
	case t.conns[rev]:
		k.CTState = conntrack.StateTracked | conntrack.StateEstablished | conntrack.StateReply
	default:
		k.CTState = conntrack.StateTracked | conntrack.StateNew
		if req.Commit {
			t.conns[fwd] = true
		}
	}
}

// A stateful firewall through the datapath: the first packet of A->B is
// tracked (ct, recirc), resumed +trk+new and committed; B->A comes back
// +est+rpl; B may not open to A. The first pass's megaflow ignores
// ct_state beyond the -trk its rule matched; each resumed pass's
// megaflow has its recirc_id and the ct_state bits its lookups read.
func TestConntrackFirewallThroughDatapath(t *testing.T) {
	ct := &firewallTracker{conns: map[[13]byte]bool{}}
	dp, err := dpif.New(dpif.Config{PMDs: 1, PoolBuffers: 512, FrameSize: 2048, Tracker: ct})
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{t: t, dp: dp, br: xlatetest.NewBridge("br0"), devs: map[uint32]*netdevtest.Device{}, dpPort: map[uint32]uint32{}}
	fx.h = upcall.New(dp, upcall.Config{RevalidateInterval: time.Hour})
	dp.SetUpcallHandler(fx.h)
	t.Cleanup(func() { fx.h.Close(); dp.Close() })
	ports := upcall.Ports{}
	for i := uint32(1); i <= 2; i++ {
		d := netdevtest.MustNew(netdevtest.Config{Name: "p" + string(rune('0'+i)), TxQueues: 4})
		no, err := dp.PortAdd(d, dpif.AutoPortNo)
		if err != nil {
			t.Fatal(err)
		}
		p := &xlate.Port{OFPort: i, DPPort: no, Name: d.Name(), Live: true}
		fx.br.AddPort(p)
		fx.devs[i], fx.dpPort[i] = d, no
		ports[no] = upcall.Binding{Bridge: fx.br, Port: p}
	}
	fx.h.SetPorts(ports)

	ctMatch := func(in uint32, st, mask uint32) mf.Match {
		var m mf.Match
		m.Flow.EtherType, m.Wildcards.Masks.EtherType = packet.EtherTypeIPv4, 0xffff
		m.Flow.CTState, m.Wildcards.Masks.CTState = st, mask
		if in != 0 {
			m.Flow.InPort, m.Wildcards.Masks.InPort = in, ^uint32(0)
		}
		return m
	}
	const trk, nw, est = conntrack.StateTracked, conntrack.StateNew, conntrack.StateEstablished
	fx.br.AddRule(&xlatetest.Rule{Prio: 10, M: ctMatch(0, 0, trk), Acts: []xlate.Action{&ofpact.CT{ZoneImm: 5, RecircTable: 1}}})
	fx.br.AddRule(&xlatetest.Rule{Table: 1, Prio: 10, M: ctMatch(1, trk|nw, trk|nw), Acts: []xlate.Action{
		&ofpact.CT{ZoneImm: 5, Flags: ofpact.CTCommit, RecircTable: ofpact.CTNoRecirc}, &ofpact.Output{Port: 2}}})
	fx.br.AddRule(&xlatetest.Rule{Table: 1, Prio: 9, M: ctMatch(1, trk|est, trk|est), Acts: []xlate.Action{&ofpact.Output{Port: 2}}})
	fx.br.AddRule(&xlatetest.Rule{Table: 1, Prio: 9, M: ctMatch(2, trk|est, trk|est), Acts: []xlate.Action{&ofpact.Output{Port: 1}}})
	fx.h.Changed()

	a2b := frame(mac(2), mac(1), 2)    // 198.18.0.1 -> 198.18.0.2, udp 12345 -> 53
	b2a := append([]byte(nil), a2b...) // the reply: addresses and ports swapped
	copy(b2a[26:30], a2b[30:34])       // ip src
	copy(b2a[30:34], a2b[26:30])       // ip dst
	b2a[34], b2a[35], b2a[36], b2a[37] = a2b[36], a2b[37], a2b[34], a2b[35]
	binaryFixIPChecksum(b2a)
	other := frame(mac(1), mac(2), 1) // B opening to A: 198.18.0.1 -> 198.18.0.1 from port 2, no connection

	if got := fx.send(2, other); len(got) != 0 {
		t.Fatalf("B opening to A before anything: out %v", got)
	}
	if got := fx.send(1, a2b); !eq(got, 2) {
		t.Fatalf("A->B new: out %v, want [2]", got)
	}
	if got := fx.send(2, b2a); !eq(got, 1) {
		t.Fatalf("B->A reply: out %v, want [1]", got)
	}
	if got := fx.send(1, a2b); !eq(got, 2) {
		t.Fatalf("A->B established: out %v, want [2]", got)
	}
	if got := fx.send(2, other); len(got) != 0 {
		t.Fatalf("B opening to A: out %v", got)
	}

	// The installed megaflows.
	var first, resumed int
	for _, h := range dp.Handles() {
		fe, ok := dp.FlowGet(h)
		if !ok {
			continue
		}
		if fe.Key.RecircID == 0 {
			first++
			if fe.Mask.CTState != trk {
				t.Errorf("first pass %v: ct_state mask %#x, want just +trk", fe.Key, fe.Mask.CTState)
			}
			if len(fe.Actions) != 2 || fe.Actions[0].Kind != dpif.ActCT || fe.Actions[1].Kind != dpif.ActRecirc {
				t.Errorf("first pass actions %v", fe.Actions)
			}
			continue
		}
		resumed++
		if fe.Mask.RecircID != ^uint32(0) || fe.Mask.CTState&(trk|nw|est) == 0 {
			t.Errorf("resumed pass: recirc_id mask %#x ct_state mask %#x", fe.Mask.RecircID, fe.Mask.CTState)
		}
		if fe.Key.CTState&trk == 0 {
			t.Errorf("resumed pass key without +trk: %v", fe.Key)
		}
	}
	if first == 0 || resumed < 3 {
		t.Fatalf("%d first-pass and %d resumed megaflows, want some and 3+", first, resumed)
	}
}

func binaryFixIPChecksum(f []byte) {
	ip := f[14:34]
	ip[10], ip[11] = 0, 0
	c := packet.IPv4HeaderChecksum(ip)
	ip[10], ip[11] = byte(c>>8), byte(c)
}

type execRecorder struct{ actions dpif.Actions }

func (e *execRecorder) Execute(_ []byte, _ uint32, actions dpif.Actions) error {
	e.actions = append(e.actions[:0], actions...)
	return nil
}

// NXT_RESUME of a paused translation: the frame has no conntrack state,
// the continuation does, and the resumed lookups see it.
func TestResumeKeepsConntrackState(t *testing.T) {
	br := xlatetest.NewBridge("br0")
	for i := uint32(1); i <= 3; i++ {
		br.AddPort(&xlate.Port{OFPort: i, DPPort: 10 + i, Name: "p" + string(rune('0'+i)), Live: true})
	}
	var m mf.Match
	m.Flow.EtherType, m.Wildcards.Masks.EtherType = packet.EtherTypeIPv4, 0xffff
	m.Flow.CTState, m.Wildcards.Masks.CTState = conntrack.StateTracked|conntrack.StateEstablished, conntrack.StateTracked|conntrack.StateEstablished
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 10, M: m, Acts: []xlate.Action{&ofpact.Output{Port: 2}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 1, Acts: []xlate.Action{&ofpact.Output{Port: 3}}})
	h := newFixture(t, 1).h
	var fz xlate.Frozen
	fz.Bridge, fz.Table, fz.Pause, fz.Conntracked = br, 1, true, true
	fz.Flow.InPort = 1
	fz.Flow.CTState, fz.Flow.CTZone = conntrack.StateTracked|conntrack.StateEstablished, 5
	rec := &execRecorder{}
	if err := h.Resume(rec, br, &fz, frame(mac(2), mac(1), 2)); err != nil {
		t.Fatal(err)
	}
	if got := rec.actions.String(); got != "12" {
		t.Fatalf("resumed actions %q, want 12 (ct_state=+trk+est)", got)
	}
}
