package dpif

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gvs/dpif/conntrack"
	"gvs/packet"
)

// fakeTracker is a connection tracker for tests of the datapath's side
// of ct: IPv4 only, a connection per (zone, 5-tuple) in either direction,
// created by commit; anything else is +inv. Execute allocates nothing
// once its map has room (tests warm it up).
type fakeTracker struct {
	mu    sync.Mutex
	conns map[fakeConnKey]*fakeConn
	calls atomic.Uint64
	// reqs counts the distinct *Request pointers Execute was given.
	reqs map[*conntrack.Request]int
}

type fakeConnKey struct {
	zone             uint16
	src, dst         [4]byte
	proto            uint8
	srcPort, dstPort uint16
}

type fakeConn struct {
	orig fakeConnKey
	mark uint32
}

var _ conntrack.Conntrack = (*fakeTracker)(nil)

func newFakeTracker() *fakeTracker {
	return &fakeTracker{conns: make(map[fakeConnKey]*fakeConn, 64), reqs: make(map[*conntrack.Request]int, 16)}
}

func (t *fakeTracker) Execute(b *packet.Buffer, req *conntrack.Request) {
	t.calls.Add(1)
	k := &b.Key
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reqs[req]++
	k.CTZone = req.Zone
	if k.EtherType != packet.EtherTypeIPv4 || b.Offsets.L3 == 0 {
		k.CTState = conntrack.StateTracked | conntrack.StateInvalid
		return
	}
	fwd := fakeConnKey{req.Zone, k.SrcIPv4, k.DstIPv4, k.IPProto, k.SrcPort, k.DstPort}
	rev := fakeConnKey{req.Zone, k.DstIPv4, k.SrcIPv4, k.IPProto, k.DstPort, k.SrcPort}
	c, reply := t.conns[fwd], false
	if c == nil {
		if c = t.conns[rev]; c != nil {
			reply = true
		}
	}
	switch {
	case c != nil:
		k.CTState = conntrack.StateTracked | conntrack.StateEstablished
		if reply {
			k.CTState |= conntrack.StateReply
		}
	case req.Commit:
		c = &fakeConn{orig: fwd}
		t.conns[fwd] = c
		k.CTState = conntrack.StateTracked | conntrack.StateNew
	default:
		k.CTState = conntrack.StateTracked | conntrack.StateNew
		c = &fakeConn{orig: fwd} // not kept
	}
	if req.Commit && req.SetMark {
		c.mark = c.mark&^req.MarkMask | req.Mark&req.MarkMask
	}
	k.CTMark = c.mark
	k.CTNwSrc, k.CTNwDst, k.CTNwProto, k.CTTpSrc, k.CTTpDst = c.orig.src, c.orig.dst, c.orig.proto, c.orig.srcPort, c.orig.dstPort
}

func (t *fakeTracker) Dump(zone int32, fn func(*conntrack.Entry) bool)  {}
func (t *fakeTracker) Flush(zone int32, orig *conntrack.Tuple) int      { return 0 }
func (t *fakeTracker) Stats() conntrack.Stats                           { return conntrack.Stats{} }
func (t *fakeTracker) SetMaxConns(uint32)                               {}
func (t *fakeTracker) MaxConns() uint32                                 { return 0 }
func (t *fakeTracker) SetZoneLimits([]conntrack.ZoneLimit)              {}
func (t *fakeTracker) ZoneLimits([]uint16) []conntrack.ZoneLimit        { return nil }
func (t *fakeTracker) DelZoneLimits([]uint16)                           {}
func (t *fakeTracker) SetTimeoutPolicy(uint32, conntrack.TimeoutPolicy) {}
func (t *fakeTracker) DelTimeoutPolicy(uint32)                          {}
func (t *fakeTracker) SetZonePolicy(uint16, uint32)                     {}

func (t *fakeTracker) distinctRequests() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.reqs)
}

// TestCTThenRecirculationSeesConntrackFields: a flow runs ct (zone 5,
// commit, mark) and recirculates; the second pass's upcall sees the
// tracker's ct_state, zone, mark and original tuple in the key, and a
// second-pass megaflow matching ct_state separates the first packet
// (+new) from the later ones (+est). The request the tracker gets is
// the flow's own, shared, not rebuilt per packet.
func TestCTThenRecirculationSeesConntrackFields(t *testing.T) {
	ct := newFakeTracker()
	fx := newFixture(t, Config{EMCInsertInvProb: 1, Tracker: ct}, 2)
	if fx.dp.Conntrack() != ct {
		t.Fatal("Conntrack() is not the configured tracker")
	}
	h := &recordingHandler{answer: func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		if u.Key.RecircID == 0 {
			u.Actions = append(u.Actions, CT(conntrack.Request{Zone: 5, Commit: true, SetMark: true, Mark: 0x11, MarkMask: 0xff}), Recirc(1))
		} else {
			u.Mask.CTState = 0xff
			u.Actions = append(u.Actions, Output(2))
		}
		return UpcallInstall
	}}
	fx.dp.SetUpcallHandler(h)
	frame := testFrame()
	for i := range 3 {
		fx.devs[1].Inject(0, frame)
		if got := fx.devs[2].WaitSent(i+1, 5*time.Second); len(got) != i+1 {
			t.Fatalf("packet %d: port 2 sent %d", i, len(got))
		}
	}
	keys := h.seen()
	if len(keys) != 3 {
		t.Fatalf("%d upcalls, want 3 (pass 1; pass 2 +new; pass 2 +est)", len(keys))
	}
	if k := keys[0]; k.CTState != 0 || k.CTZone != 0 || k.CTMark != 0 || k.CTNwProto != 0 {
		t.Fatalf("received packet has conntrack fields: %+v", k)
	}
	for i, wantState := range []uint32{conntrack.StateNew, conntrack.StateEstablished} {
		k := keys[i+1]
		if k.RecircID != 1 || k.CTState != conntrack.StateTracked|wantState || k.CTZone != 5 || k.CTMark != 0x11 {
			t.Fatalf("pass 2, packet %d: recirc %d state %#x zone %d mark %#x", i, k.RecircID, k.CTState, k.CTZone, k.CTMark)
		}
		if k.CTNwSrc != ip4("198.18.0.1") || k.CTNwDst != ip4("198.18.0.2") || k.CTNwProto != packet.ProtoUDP || k.CTTpSrc != 1000 || k.CTTpDst != 2000 {
			t.Fatalf("pass 2 original tuple: %+v", k)
		}
	}
	if n := ct.calls.Load(); n != 3 {
		t.Fatalf("tracker ran %d times, want 3", n)
	}
	if n := ct.distinctRequests(); n != 1 {
		t.Fatalf("tracker saw %d request pointers, want the flow's one", n)
	}
	// The dump shows the ct action as Open vSwitch prints it, and the
	// second pass's ct_state match.
	var sawCT, sawState bool
	for _, f := range fx.dp.Dump() {
		s := f.String()
		sawCT = sawCT || strings.Contains(s, "actions:ct(commit,zone=5,mark=0x11/0xff),recirc(0x1)")
		sawState = sawState || strings.Contains(s, "ct_state(-new+est-rel-rpl-inv+trk-snat-dnat),recirc_id(0x1)")
	}
	if !sawCT || !sawState {
		t.Fatalf("dump:\n%v", fx.dp.Dump())
	}
}

// TestCTClearZeroesConntrackFields: ct then ct_clear leaves nothing of
// the tracker's work in the key the next pass sees.
func TestCTClearZeroesConntrackFields(t *testing.T) {
	ct := newFakeTracker()
	fx := newFixture(t, Config{Tracker: ct}, 2)
	h := &recordingHandler{answer: func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		if u.Key.RecircID == 0 {
			u.Actions = append(u.Actions, CT(conntrack.Request{Zone: 7, Commit: true, SetMark: true, Mark: 1, MarkMask: 1}), CTClear(), Recirc(2))
		} else {
			u.Actions = append(u.Actions, Output(2))
		}
		return UpcallInstall
	}}
	fx.dp.SetUpcallHandler(h)
	fx.devs[1].Inject(0, testFrame())
	fx.devs[2].WaitSent(1, 5*time.Second)
	keys := h.seen()
	if len(keys) != 2 {
		t.Fatalf("%d upcalls", len(keys))
	}
	k := keys[1]
	if k.RecircID != 2 || ct.calls.Load() != 1 {
		t.Fatalf("recirc %d, tracker calls %d", k.RecircID, ct.calls.Load())
	}
	var zero packet.Key
	clearCT(&zero) // no-op on zero; the fields must all be zero
	if k.CTState != 0 || k.CTZone != 0 || k.CTMark != 0 || k.CTLabel != zero.CTLabel || k.CTNwProto != 0 ||
		k.CTNwSrc != zero.CTNwSrc || k.CTNwDst != zero.CTNwDst || k.CTTpSrc != 0 || k.CTTpDst != 0 {
		t.Fatalf("ct_clear left %+v", k)
	}
}

// TestClearCTClearsEveryConntrackField: every field between the key's
// conntrack fields is zeroed, IPv6 tuple and label included, and
// nothing else.
func TestClearCTClearsEveryConntrackField(t *testing.T) {
	var k packet.Key
	k.CTState, k.CTZone, k.CTMark, k.CTNwProto, k.CTTpSrc, k.CTTpDst = 0x22, 3, 4, 6, 7, 8
	k.CTLabel[3], k.CTNwSrc[0], k.CTNwDst[1], k.CTIPv6Src[15], k.CTIPv6Dst[2] = 1, 2, 3, 4, 5
	k.PktMark, k.RecircID, k.InPort, k.TunTOS, k.SrcPort = 9, 10, 11, 12, 13
	clearCT(&k)
	want := packet.Key{PktMark: 9, RecircID: 10, InPort: 11, TunTOS: 12, SrcPort: 13}
	if k != want {
		t.Fatalf("after clearCT: %+v", k)
	}
}

// TestExecuteRunsCT: the non-PMD context (packet-out) runs ct on the
// same tracker.
func TestExecuteRunsCT(t *testing.T) {
	ct := newFakeTracker()
	fx := newFixture(t, Config{Tracker: ct}, 2)
	h := &recordingHandler{answer: func(u *Upcall) UpcallResult {
		u.Actions = append(u.Actions, Output(2))
		return UpcallExecute
	}}
	fx.dp.SetUpcallHandler(h)
	meta := packet.Key{InPort: 1}
	if err := fx.dp.ExecuteKey(testFrame(), &meta, Actions{CT(conntrack.Request{Zone: 9, Commit: true}), Recirc(3)}); err != nil {
		t.Fatal(err)
	}
	fx.devs[2].WaitSent(1, 5*time.Second)
	keys := h.seen()
	if len(keys) != 1 || keys[0].CTZone != 9 || keys[0].CTState != conntrack.StateTracked|conntrack.StateNew {
		t.Fatalf("upcall keys %+v", keys)
	}
}

// TestCTCommitWithoutOutput: a list that only commits (ct(commit) and
// nothing after it) still runs the tracker, then drops the packet.
func TestCTCommitWithoutOutput(t *testing.T) {
	ct := newFakeTracker()
	fx := newFixture(t, Config{Tracker: ct}, 2)
	meta := packet.Key{InPort: 1}
	if err := fx.dp.ExecuteKey(testFrame(), &meta, Actions{CT(conntrack.Request{Commit: true})}); err != nil {
		t.Fatal(err)
	}
	if ct.calls.Load() != 1 || len(ct.conns) != 1 {
		t.Fatalf("tracker calls %d, connections %d", ct.calls.Load(), len(ct.conns))
	}
	np := &fx.dp.nonPMD
	np.mu.Lock()
	st := np.ctx.pool.Stats()
	np.mu.Unlock()
	if st.Free != st.Buffers {
		t.Fatalf("buffer leaked: %d of %d free", st.Free, st.Buffers)
	}
}
