package dpif

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"gvs/packet"
)

// recordingHandler answers misses with answer and records the keys it
// saw; as a UserspaceHandler it records userspace packets.
type recordingHandler struct {
	mu     sync.Mutex
	keys   []packet.Key
	user   []UserspaceUpcall
	frames [][]byte
	answer func(u *Upcall) UpcallResult
}

func (h *recordingHandler) Upcall(u *Upcall) UpcallResult {
	h.mu.Lock()
	h.keys = append(h.keys, *u.Key)
	h.mu.Unlock()
	return h.answer(u)
}

func (h *recordingHandler) UserspaceAction(u *UserspaceUpcall) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := *u
	k := *u.Key
	c.Key = &k
	h.user = append(h.user, c)
	h.frames = append(h.frames, bytes.Clone(u.Packet))
}

func (h *recordingHandler) seen() []packet.Key {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]packet.Key(nil), h.keys...)
}

func (h *recordingHandler) userspace() ([]UserspaceUpcall, [][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]UserspaceUpcall(nil), h.user...), append([][]byte(nil), h.frames...)
}

func testFrame() []byte {
	return buildFrame(fspec{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), ttl: 64,
		proto: packet.ProtoUDP, sport: 1000, dport: 2000, payload: make([]byte, 100)})
}

// TestRecirculationKeepsMetadataAndClassifiesAgain: a packet received
// on a PMD hits a flow that sets pkt_mark, hashes and recirculates; the
// second pass misses, and the handler sees recirc_id, pkt_mark and
// dp_hash in the key; both megaflows then carry later packets without
// upcalls, and each pass matches its recirc_id exactly.
func TestRecirculationKeepsMetadataAndClassifiesAgain(t *testing.T) {
	fx := newFixture(t, Config{EMCInsertInvProb: 1}, 2)
	h := &recordingHandler{answer: func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		if u.Key.RecircID == 0 {
			u.Actions = append(u.Actions, SetPktMark(0x55, 0xff), Hash(HashL4, 0), Recirc(7))
		} else {
			u.Mask.PktMark = ^uint32(0)
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
	if len(keys) != 2 {
		t.Fatalf("%d upcalls, want 2", len(keys))
	}
	if k := keys[0]; k.RecircID != 0 || k.PktMark != 0 || k.DPHash != 0 {
		t.Fatalf("first pass has metadata: %+v", k)
	}
	var want packet.Key
	packet.Parse(frame, &want)
	want.InPort = 1
	if k := keys[1]; k.RecircID != 7 || k.PktMark != 0x55 || k.DPHash != hashL4(&want, 0, false) || k.InPort != 1 || k.SrcIPv4 != want.SrcIPv4 {
		t.Fatalf("second pass key %+v", k)
	}
	flows := fx.dp.Dump()
	if len(flows) != 2 {
		t.Fatalf("%d flows", len(flows))
	}
	for _, f := range flows {
		if f.Mask.RecircID != ^uint32(0) {
			t.Fatalf("recirc_id not exact in %s", f)
		}
		if f.Stats.Packets != 2 { // 3 packets, the first of each pass an upcall's
			t.Fatalf("flow %s", f)
		}
	}
	// A packet received after them, in a buffer they used, starts with
	// zero metadata.
	other := buildFrame(fspec{dst: mac(2), src: mac(3), src4: ip4("198.18.0.3"), dst4: ip4("198.18.0.2"), ttl: 64, proto: packet.ProtoUDP, sport: 1, dport: 2})
	fx.devs[1].Inject(0, other)
	fx.devs[2].WaitSent(4, 5*time.Second)
	keys = h.seen()
	if len(keys) != 4 {
		t.Fatalf("%d upcalls, want 4", len(keys))
	}
	if k := keys[2]; k.RecircID != 0 || k.PktMark != 0 || k.DPHash != 0 || k.SrcMAC != mac(3) {
		t.Fatalf("new packet has metadata: %+v", k)
	}
	waitFor(t, "stats", func() bool { return fx.totals().Packets == 4 })
	var recircs uint64
	for _, s := range fx.dp.PMDStats() {
		recircs += s.Recircs
	}
	if recircs != 4 {
		t.Fatalf("recircs %d", recircs)
	}
}

// TestRecirculationDepthIsBounded: a flow that recirculates into itself
// drops the packet after maxRecircDepth recirculated passes (each of
// which outputs a copy), and counts the drop.
func TestRecirculationDepthIsBounded(t *testing.T) {
	fx := newFixture(t, Config{}, 2)
	var k packet.Key
	packet.Parse(testFrame(), &k)
	k.InPort = 1
	m := l2Mask()
	if err := fx.dp.Put(FlowSpec{Key: k, Mask: m, Actions: Actions{Recirc(1)}}); err != nil {
		t.Fatal(err)
	}
	k.RecircID = 1
	if err := fx.dp.Put(FlowSpec{Key: k, Mask: m, Actions: Actions{Output(2), Recirc(1)}}); err != nil {
		t.Fatal(err)
	}
	fx.devs[1].Inject(0, testFrame())
	waitFor(t, "recirc drop", func() bool {
		var d uint64
		for _, s := range fx.dp.PMDStats() {
			d += s.RecircDrops
		}
		return d == 1
	})
	if got := fx.devs[2].WaitSent(maxRecircDepth, 5*time.Second); len(got) != maxRecircDepth {
		t.Fatalf("port 2 got %d copies, want %d", len(got), maxRecircDepth)
	}
}

// TestCloneCheckPktLenTrunc: clone works on a copy; check_pkt_len picks
// its branch by length (after a trunc); trunc cuts only the next output.
func TestCloneCheckPktLenTrunc(t *testing.T) {
	fx := newFixture(t, Config{}, 4)
	frame := testFrame() // 142 bytes
	var eth packet.Key
	eth.SrcMAC, eth.DstMAC = mac(0x77), mac(0x88)
	cases := []struct {
		name    string
		actions Actions
		want    map[uint32][]int // port -> lengths of the frames it gets
		check   func(t *testing.T, sent map[uint32][][]byte)
	}{
		{"clone", Actions{Clone(Actions{Set(AttrEthernet, &eth), Output(2)}), Output(3)}, map[uint32][]int{2: {142}, 3: {142}},
			func(t *testing.T, sent map[uint32][][]byte) {
				var k2, k3 packet.Key
				packet.Parse(sent[2][0], &k2)
				packet.Parse(sent[3][0], &k3)
				if k2.SrcMAC != mac(0x77) || k3.SrcMAC != mac(1) {
					t.Fatalf("clone leaked: %v %v", k2.SrcMAC, k3.SrcMAC)
				}
			}},
		{"clone last", Actions{Output(3), Clone(Actions{Output(2)})}, map[uint32][]int{2: {142}, 3: {142}}, nil},
		{"check_pkt_len greater", Actions{CheckPktLen(100, Actions{Output(2)}, Actions{Output(3)}), Output(4)}, map[uint32][]int{2: {142}, 4: {142}}, nil},
		{"check_pkt_len equal is le", Actions{CheckPktLen(142, Actions{Output(2)}, Actions{Output(3)})}, map[uint32][]int{3: {142}}, nil},
		{"check_pkt_len after trunc", Actions{Trunc(60), CheckPktLen(100, Actions{Output(2)}, Actions{Output(3)})}, map[uint32][]int{3: {142}}, nil},
		{"trunc next output only", Actions{Trunc(60), Output(2), Output(3), Trunc(20), Output(4)}, map[uint32][]int{2: {60}, 3: {142}, 4: {20}}, nil},
		{"trunc longer than frame", Actions{Trunc(1000), Output(2)}, map[uint32][]int{2: {142}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for p := uint32(2); p <= 4; p++ {
				fx.devs[p].TakeSent()
			}
			if err := fx.dp.Execute(frame, 1, c.actions); err != nil {
				t.Fatal(err)
			}
			sent := map[uint32][][]byte{}
			for p := uint32(2); p <= 4; p++ {
				for _, f := range fx.devs[p].TakeSent() {
					sent[p] = append(sent[p], f.Data)
				}
				if len(sent[p]) != len(c.want[p]) {
					t.Fatalf("port %d got %d frames, want %d", p, len(sent[p]), len(c.want[p]))
				}
				for i, n := range c.want[p] {
					if len(sent[p][i]) != n || !bytes.Equal(sent[p][i][12:n], frame[12:n]) {
						t.Fatalf("port %d frame %d: %d bytes, want %d of the original", p, i, len(sent[p][i]), n)
					}
				}
			}
			if c.check != nil {
				c.check(t, sent)
			}
			if s := fx.dp.nonPMD.ctx.pool.Stats(); s.Free != s.Buffers {
				t.Fatalf("non-PMD pool leak: %d of %d free", s.Free, s.Buffers)
			}
		})
	}
}

// TestMeterDropsOverRate: a 10 packets/s meter with a burst of 10 passes
// the first 10 of 50 back-to-back packets and counts the rest in its
// band; 0.5 s later 5 more pass. A kbit/s meter charges by size. The
// meter runs on a clock the test sets; through Execute, a meter action
// drops what its meter refuses. Deleting the meter lets everything
// through.
func TestMeterDropsOverRate(t *testing.T) {
	fx := newFixture(t, Config{}, 2)
	if err := fx.dp.MeterSet(3, MeterConfig{PktPS: true, Bands: []MeterBand{{Rate: 10, Burst: 10}}}); err != nil {
		t.Fatal(err)
	}
	frame := testFrame()
	passed := func(id uint32, n int, now int64) int {
		p := 0
		for range n {
			if fx.dp.meterPass(id, len(frame), now) {
				p++
			}
		}
		return p
	}
	now := fx.dp.now()
	if got := passed(3, 50, now); got != 10 {
		t.Fatalf("%d of 50 passed, want 10", got)
	}
	st, ok := fx.dp.MeterStats(3)
	if !ok || st.Packets != 50 || st.Bytes != uint64(50*len(frame)) || st.Bands[0].Packets != 40 {
		t.Fatalf("stats %+v", st)
	}
	if got := passed(3, 20, now+int64(500*time.Millisecond)); got != 5 {
		t.Fatalf("after 0.5 s, %d passed, want 5", got)
	}
	// 8 kbit/s, burst 8 kbit = 1000 bytes: seven 142-byte frames.
	if err := fx.dp.MeterSet(4, MeterConfig{Bands: []MeterBand{{Rate: 8, Burst: 8}}}); err != nil {
		t.Fatal(err)
	}
	if got := passed(4, 20, now); got != 1000/len(frame) {
		t.Fatalf("kbps meter passed %d, want %d", got, 1000/len(frame))
	}
	// Two bands: the packet is counted by the highest-rate band it
	// exceeds.
	if err := fx.dp.MeterSet(5, MeterConfig{PktPS: true, Bands: []MeterBand{{Rate: 1, Burst: 1}, {Rate: 2, Burst: 2}}}); err != nil {
		t.Fatal(err)
	}
	passed(5, 3, now)
	if st, _ := fx.dp.MeterStats(5); st.Bands[0].Packets != 1 || st.Bands[1].Packets != 1 {
		t.Fatalf("two bands %+v", st)
	}
	// Through Execute: a 1 packet/s meter passes one of two packets
	// sent back to back (unless a second passes between them).
	if err := fx.dp.MeterSet(6, MeterConfig{PktPS: true, Bands: []MeterBand{{Rate: 1, Burst: 1}}}); err != nil {
		t.Fatal(err)
	}
	fx.devs[2].TakeSent()
	start := time.Now()
	for range 2 {
		fx.dp.Execute(frame, 1, Actions{Meter(6), Output(2)})
	}
	if got := len(fx.devs[2].TakeSent()); got != 1 && time.Since(start) < time.Second {
		t.Fatalf("meter action passed %d of 2", got)
	}
	if _, err := fx.dp.MeterDel(3); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		fx.dp.Execute(frame, 1, Actions{Meter(3), Output(2)})
	}
	if got := len(fx.devs[2].TakeSent()); got != 20 {
		t.Fatalf("deleted meter passed %d of 20", got)
	}
	if _, err := fx.dp.MeterDel(3); err != ErrNoMeter {
		t.Fatalf("second delete: %v", err)
	}
	if err := fx.dp.MeterSet(MaxMeters, MeterConfig{Bands: []MeterBand{{Rate: 1}}}); err != ErrMeterID {
		t.Fatalf("id out of range: %v", err)
	}
	if err := fx.dp.MeterSet(1, MeterConfig{}); err != ErrMeterBands {
		t.Fatalf("no bands: %v", err)
	}
}

// TestMeterSharedByPMDsHoldsTheRate: many goroutines metering at once
// (as PMDs do) pass no more than the burst in total.
func TestMeterSharedByPMDsHoldsTheRate(t *testing.T) {
	fx := newFixture(t, Config{}, 0)
	if err := fx.dp.MeterSet(0, MeterConfig{PktPS: true, Bands: []MeterBand{{Rate: 1, Burst: 1000}}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	passed := 0
	now := fx.dp.now()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for range 1000 {
				if fx.dp.meterPass(0, 64, now) {
					n++
				}
			}
			mu.Lock()
			passed += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if passed != 1000 {
		t.Fatalf("%d passed, want the burst of 1000", passed)
	}
}

// TestUserspaceActionSendsACopyUp: a cached megaflow with a userspace
// action gives the handler the packet, its metadata and the cookie on
// the slow path, for every packet, while its other actions go on.
func TestUserspaceActionSendsACopyUp(t *testing.T) {
	fx := newFixture(t, Config{EMCInsertInvProb: 1}, 2)
	cookie := UserspaceCookie{Type: CookieController, Reason: 1, RecircID: 2, MaxLen: 65535, Userdata: []byte{1, 2}}
	h := &recordingHandler{answer: func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		u.Actions = append(u.Actions, SetPktMark(9, ^uint32(0)), Userspace(cookie), Output(2))
		return UpcallInstall
	}}
	fx.dp.SetUpcallHandler(h)
	frame := testFrame()
	for range 3 {
		fx.devs[1].Inject(0, frame)
	}
	fx.devs[2].WaitSent(3, 5*time.Second)
	waitFor(t, "userspace packets", func() bool { u, _ := h.userspace(); return len(u) == 3 })
	us, frames := h.userspace()
	for i, u := range us {
		if u.PMD < 0 || u.Cookie == nil || u.Cookie.Type != CookieController || u.Cookie.RecircID != 2 || !bytes.Equal(u.Cookie.Userdata, []byte{1, 2}) {
			t.Fatalf("upcall %d: %+v", i, u)
		}
		if u.Key.PktMark != 9 || u.Key.InPort != 1 || !bytes.Equal(frames[i], frame) {
			t.Fatalf("upcall %d: key %+v", i, u.Key)
		}
	}
	if len(h.seen()) != 1 {
		t.Fatalf("%d misses", len(h.seen()))
	}
	// From Execute, the packet comes up once the call's locks are gone.
	if err := fx.dp.Execute(frame, 1, Actions{Userspace(UserspaceCookie{Type: CookieSlowPath, SlowPathReasons: SlowAction})}); err != nil {
		t.Fatal(err)
	}
	us, _ = h.userspace()
	if len(us) != 4 || us[3].PMD != -1 || us[3].Cookie.SlowPathReasons != SlowAction {
		t.Fatalf("execute userspace: %+v", us)
	}
}

// TestHashL4 is deterministic, depends on the basis and the 5-tuple, and
// sym_l4 hashes both directions alike.
func TestHashL4(t *testing.T) {
	var a packet.Key
	packet.Parse(testFrame(), &a)
	b := a
	b.SrcIPv4, b.DstIPv4, b.SrcPort, b.DstPort = a.DstIPv4, a.SrcIPv4, a.DstPort, a.SrcPort
	if hashL4(&a, 0, false) == hashL4(&b, 0, false) {
		t.Fatal("l4 hash symmetric")
	}
	if hashL4(&a, 0, true) != hashL4(&b, 0, true) {
		t.Fatal("sym_l4 not symmetric")
	}
	if hashL4(&a, 0, false) == hashL4(&a, 1, false) {
		t.Fatal("basis ignored")
	}
	c := a
	c.SrcPort++
	if hashL4(&a, 0, false) == hashL4(&c, 0, false) {
		t.Fatal("port ignored")
	}
}

// TestFlowHandles: Dump's handles modify and delete the flow they name;
// packets follow the new actions; a deleted flow's handle is refused.
func TestFlowHandles(t *testing.T) {
	fx := newFixture(t, Config{EMCInsertInvProb: 1}, 3)
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	frame := testFrame()
	fx.devs[1].Inject(0, frame)
	fx.devs[2].WaitSent(1, 5*time.Second)
	flows := fx.dp.Dump()
	if len(flows) != 1 {
		t.Fatalf("%d flows", len(flows))
	}
	// The entry has the masked key and the packet's full one.
	if e := flows[0]; e.Unmasked.SrcIPv4 != ip4("198.18.0.1") || e.Unmasked.InPort != 1 || e.Key.SrcIPv4 != ([4]byte{}) || e.Key.SrcMAC != mac(1) {
		t.Fatalf("keys: masked %+v unmasked %+v", e.Key, e.Unmasked)
	}
	h := flows[0].Handle
	if hs := fx.dp.Handles(); len(hs) != 1 || hs[0] != h {
		t.Fatalf("handles %v, dump's %v", hs, h)
	}
	if err := fx.dp.FlowModify(h, Actions{Output(3)}); err != nil {
		t.Fatal(err)
	}
	fx.devs[1].Inject(0, frame)
	if got := fx.devs[3].WaitSent(1, 5*time.Second); len(got) != 1 {
		t.Fatal("modified actions not used")
	}
	e, ok := fx.dp.FlowGet(h)
	// Two packets, the first the upcall's, which the flow does not count.
	if !ok || e.Actions.String() != "3" || e.Stats.Packets != 1 || e.Handle != h {
		t.Fatalf("get %+v %v", e, ok)
	}
	st, err := fx.dp.FlowDelete(h)
	if err != nil || st.Packets != 1 {
		t.Fatalf("delete %+v %v", st, err)
	}
	if err := fx.dp.FlowModify(h, nil); err != ErrNoFlow {
		t.Fatalf("modify deleted: %v", err)
	}
	if _, err := fx.dp.FlowDelete(h); err != ErrNoFlow {
		t.Fatalf("delete deleted: %v", err)
	}
	if _, ok := fx.dp.FlowGet(h); ok || fx.dp.NumFlows() != 0 {
		t.Fatal("deleted flow still there")
	}
	if err := fx.dp.FlowModify(FlowHandle{}, nil); err != ErrNoFlow {
		t.Fatalf("zero handle: %v", err)
	}
}

// TestInstallOnceWhenPMDsRace: installs of the same megaflow, or of one
// that overlaps a flow already covering the packet, return the existing
// flow instead of adding another.
func TestInstallOnceWhenPMDsRace(t *testing.T) {
	fx := newFixture(t, Config{}, 2)
	var k packet.Key
	packet.Parse(testFrame(), &k)
	k.InPort = 1
	var wg sync.WaitGroup
	flows := make([]*flow, 8)
	for i := range flows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := &Upcall{Key: &k, Mask: l2Mask(), Actions: Actions{Output(2)}}
			if i%2 == 1 {
				u.Mask.DstPort = 0xffff // a different, overlapping megaflow
			}
			flows[i] = fx.dp.install(u)
		}()
	}
	wg.Wait()
	if fx.dp.NumFlows() != 1 {
		t.Fatalf("%d flows installed", fx.dp.NumFlows())
	}
	for _, f := range flows {
		if f != flows[0] {
			t.Fatal("installs returned different flows")
		}
	}
}

// TestExecuteKeyRecirculatesWithMetadata: a packet-out with metadata
// that recirculates is classified again in the non-PMD context; its miss
// reaches the handler with the metadata, and the answer is carried out.
func TestExecuteKeyRecirculatesWithMetadata(t *testing.T) {
	fx := newFixture(t, Config{}, 2)
	h := &recordingHandler{answer: func(u *Upcall) UpcallResult {
		u.Actions = append(u.Actions, Output(2))
		return UpcallExecute
	}}
	fx.dp.SetUpcallHandler(h)
	frame := testFrame()
	meta := packet.Key{InPort: 1, PktMark: 3, DstMAC: mac(0x99)} // packet fields are ignored
	if err := fx.dp.ExecuteKey(frame, &meta, Actions{Recirc(9)}); err != nil {
		t.Fatal(err)
	}
	if got := fx.devs[2].WaitSent(1, 5*time.Second); len(got) != 1 || !bytes.Equal(got[0].Data, frame) {
		t.Fatalf("port 2 got %d", len(got))
	}
	keys := h.seen()
	if len(keys) != 1 || keys[0].RecircID != 9 || keys[0].PktMark != 3 || keys[0].InPort != 1 || keys[0].DstMAC != mac(2) {
		t.Fatalf("upcall keys %+v", keys)
	}
}

// TestPushVLANTPID: push_vlan puts the action's TPID on the wire (an
// 802.1ad tag for tpid=0x88a8), 802.1Q by default.
func TestPushVLANTPID(t *testing.T) {
	fx := newFixture(t, Config{}, 2)
	frame := testFrame()
	for _, c := range []struct {
		act  Action
		tpid uint16
	}{{PushVLAN(100), packet.EtherTypeVLAN}, {PushVLANTag(packet.EtherTypeQinQ, 100), packet.EtherTypeQinQ}} {
		fx.devs[2].TakeSent()
		if err := fx.dp.Execute(frame, 1, Actions{c.act, Output(2)}); err != nil {
			t.Fatal(err)
		}
		sent := fx.devs[2].TakeSent()
		if len(sent) != 1 || len(sent[0].Data) != len(frame)+4 {
			t.Fatalf("%v: %d frames", c.act, len(sent))
		}
		d := sent[0].Data
		if tpid, tci := uint16(d[12])<<8|uint16(d[13]), uint16(d[14])<<8|uint16(d[15]); tpid != c.tpid || tci != 100 {
			t.Fatalf("pushed tag tpid %#x tci %d, want %#x 100", tpid, tci, c.tpid)
		}
	}
}
