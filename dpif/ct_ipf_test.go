package dpif

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"gvs/dpif/conntrack"
	"gvs/packet"
)

// fragmentsOf cuts the IPv4 packet of frame (Ethernet, 20-byte IPv4
// header) into fragments carrying size bytes of data each (a multiple of
// 8), with id as the identification.
func fragmentsOf(frame []byte, size int, id uint16) [][]byte {
	const l3, hdr = packet.EthHeaderLen, packet.IPv4MinLen
	data := frame[l3+hdr:]
	var out [][]byte
	for off := 0; off < len(data); off += size {
		end := min(off+size, len(data))
		f := append(append([]byte(nil), frame[:l3+hdr]...), data[off:end]...)
		ip := f[l3:]
		binary.BigEndian.PutUint16(ip[2:], uint16(hdr+end-off))
		binary.BigEndian.PutUint16(ip[4:], id)
		fo := uint16(off / 8)
		if end < len(data) {
			fo |= 0x2000
		}
		binary.BigEndian.PutUint16(ip[6:], fo)
		ip[10], ip[11] = 0, 0
		binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip[:hdr]))
		out = append(out, f)
	}
	return out
}

// TestCTReassemblesFragments: fragments of one UDP datagram, received
// last first, hit a flow that runs ct and recirculates; the tracker sees
// one packet, the reassembled datagram with its ports, and every
// fragment leaves on the second pass, unchanged, carrying the tracker's
// verdict (+trk+new in zone 5), in offset order. dpctl/ipf-get-status's
// counters follow.
func TestCTReassemblesFragments(t *testing.T) {
	ct := newFakeTracker()
	fx := newFixture(t, Config{Tracker: ct}, 2)
	if fx.dp.IPF() == nil {
		t.Fatal("a datapath with a tracker has no fragment reassembler")
	}
	h := &recordingHandler{answer: func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		if u.Key.RecircID == 0 {
			u.Actions = append(u.Actions, CT(conntrack.Request{Zone: 5, Commit: true}), Recirc(1))
		} else {
			u.Mask.CTState = 0xff
			u.Actions = append(u.Actions, Output(2))
		}
		return UpcallInstall
	}}
	fx.dp.SetUpcallHandler(h)
	whole := buildFrame(fspec{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), ttl: 64,
		proto: packet.ProtoUDP, sport: 1000, dport: 2000, payload: bytes.Repeat([]byte{7}, 3000)})
	frags := fragmentsOf(whole, 1400, 0x4242)
	for i := len(frags) - 1; i >= 0; i-- {
		fx.devs[1].Inject(0, frags[i])
	}
	sent := fx.devs[2].WaitSent(len(frags), 5*time.Second)
	if len(sent) != len(frags) {
		t.Fatalf("port 2 sent %d frames, want the %d fragments", len(sent), len(frags))
	}
	for i, f := range sent {
		if !bytes.Equal(f.Data, frags[i]) {
			t.Errorf("frame %d is not fragment %d", i, i)
		}
	}
	if n := ct.calls.Load(); n != 1 {
		t.Errorf("tracker ran %d times, want once (the reassembled datagram)", n)
	}
	for _, k := range h.seen() {
		if k.RecircID == 1 && (k.CTState != conntrack.StateTracked|conntrack.StateNew || k.CTZone != 5) {
			t.Errorf("second pass key: ct_state %#x zone %d", k.CTState, k.CTZone)
		}
	}
	s := fx.dp.IPF().Status()
	if s.V4.Accepted != 3 || s.V4.Completed != 3 || s.NFrag != 0 {
		t.Errorf("ipf status %+v", s)
	}
}

// TestCTNonFragmentsSkipReassembly: a packet that is not a fragment pays
// one test and allocates nothing more on the ct action.
func TestCTNonFragmentsSkipReassembly(t *testing.T) {
	ct := newFakeTracker()
	fx := newFixture(t, Config{Tracker: ct}, 2)
	b := packet.NewBuffer(packet.DefaultHeadroom, 2048)
	frame := testFrame()
	b.SetLen(len(frame))
	copy(b.Data(), frame)
	b.Parse()
	c := &execCtx{dp: fx.dp}
	if c.isFragment(b) {
		t.Fatal("a whole datagram taken for a fragment")
	}
	if allocs := testing.AllocsPerRun(1000, func() { c.isFragment(b) }); allocs != 0 {
		t.Errorf("%v allocations", allocs)
	}
}
