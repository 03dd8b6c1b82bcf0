package dpif

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"testing"
	"time"

	"gvs/dpif/conntrack"
	"gvs/dpif/ipf"
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

// fragmentsOf6 cuts the IPv6 packet of frame (Ethernet, IPv6 header, no
// extension header) into fragments carrying size bytes each (a multiple
// of 8), with a fragment header of identification id.
func fragmentsOf6(frame []byte, size int, id uint32) [][]byte {
	const l3, hdr = packet.EthHeaderLen, packet.IPv6HeaderLen
	data := frame[l3+hdr:]
	var out [][]byte
	for off := 0; off < len(data); off += size {
		end := min(off+size, len(data))
		f := append([]byte(nil), frame[:l3+hdr]...)
		offlg := uint16(off)
		if end < len(data) {
			offlg |= 1
		}
		f = append(f, frame[l3+6], 0, byte(offlg>>8), byte(offlg), byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
		f = append(f, data[off:end]...)
		f[l3+6] = packet.ProtoFragment
		binary.BigEndian.PutUint16(f[l3+4:], uint16(len(f)-l3-hdr))
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

// TestCTNATReachesFragments: through the datapath's real tracker, a UDP
// datagram in fragments committed with nat(src=198.18.9.9) leaves as
// fragments that all carry the new source address (header checksums
// right), and that reassemble into a datagram whose UDP checksum holds.
func TestCTNATReachesFragments(t *testing.T) {
	tr := conntrack.New(conntrack.Config{})
	fx := newFixture(t, Config{Tracker: tr}, 2)
	nat := &conntrack.NAT{Kind: conntrack.NATSrc, AddrMin: netip.MustParseAddr("198.18.9.9")}
	h := &recordingHandler{answer: func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		u.Actions = append(u.Actions, CT(conntrack.Request{Zone: 1, Commit: true, NAT: nat}), Output(2))
		return UpcallInstall
	}}
	fx.dp.SetUpcallHandler(h)
	payload := make([]byte, 2900)
	for i := range payload {
		payload[i] = byte(i * 13)
	}
	whole := buildFrame(fspec{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), ttl: 64,
		proto: packet.ProtoUDP, sport: 1000, dport: 2000, payload: payload})
	frags := fragmentsOf(whole, 1200, 7)
	for _, f := range frags {
		fx.devs[1].Inject(0, f)
	}
	sent := fx.devs[2].WaitSent(len(frags), 5*time.Second)
	if len(sent) != len(frags) {
		t.Fatalf("port 2 sent %d frames, want %d fragments", len(sent), len(frags))
	}
	r := ipf.New(nil)
	var re *ipf.Reassembly
	for i, f := range sent {
		ip := f.Data[packet.EthHeaderLen:]
		if [4]byte(ip[12:16]) != ip4("198.18.9.9") {
			t.Errorf("fragment %d source %v", i, ip[12:16])
		}
		if packet.IPv4HeaderChecksum(ip[:20]) != binary.BigEndian.Uint16(ip[10:]) {
			t.Errorf("fragment %d: bad header checksum", i)
		}
		b := packet.NewBuffer(packet.DefaultHeadroom, packet.DefaultFrameSize)
		b.SetLen(len(f.Data))
		copy(b.Data(), f.Data)
		b.Parse()
		if v, got := r.Preprocess(b, 0); v == ipf.Reassembled {
			re = got
		}
	}
	if re == nil {
		t.Fatal("the fragments sent do not reassemble")
	}
	d := re.Packet.Data()
	l3, l4 := int(re.Packet.Offsets.L3), int(re.Packet.Offsets.L4)
	src, dst := [4]byte(d[l3+12:l3+16]), [4]byte(d[l3+16:l3+20])
	udp := d[l4:]
	if sum := packet.Checksum(udp, packet.PseudoHeaderSumV4(src, dst, packet.ProtoUDP, uint16(len(udp)))); sum != 0xffff {
		t.Errorf("UDP checksum of the NATed datagram does not hold (sum %#x)", sum)
	}
	if !bytes.Equal(udp[8:], payload) {
		t.Error("payload changed")
	}
}

// TestFragmentsThroughCTMatchOpenVSwitch: the same frames (a set of
// fragments received last first, a duplicate, a fragment under
// min-frag, a set missing its last fragment, a datagram that is not
// fragmented) go through a ct(zone=3),output:2 flow on Debian's
// ovs-vswitchd (its userspace datapath, frames injected with
// netdev-dummy/receive, read back from p2's pcap) and on this datapath
// with its real tracker: the frames sent are the same, in the same order,
// and the fragment module's counters (ipf-get-status) are the same.
func TestFragmentsThroughCTMatchOpenVSwitch(t *testing.T) {
	r := startRefDatapath(t)
	r.addBridge()
	mgmt := "unix:" + r.dir + "/br0.mgmt"
	r.run("ovs-ofctl", "add-flow", mgmt, "ip,actions=ct(zone=3),output:2")
	r.run("ovs-ofctl", "add-flow", mgmt, "ipv6,actions=ct(zone=3),output:2")

	fx := newFixture(t, Config{Tracker: conntrack.New(conntrack.Config{})}, 2)
	fx.dp.SetUpcallHandler(&recordingHandler{answer: func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		u.Actions = append(u.Actions, CT(conntrack.Request{Zone: 3}), Output(2))
		return UpcallInstall
	}})
	whole := buildFrame(fspec{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), ttl: 64,
		proto: packet.ProtoUDP, sport: 1000, dport: 2000, payload: bytes.Repeat([]byte{3}, 3500)})
	set := fragmentsOf(whole, 1400, 11)
	var frames [][]byte
	frames = append(frames, set[2], set[0], set[0], set[1]) // last first, a duplicate
	frames = append(frames, fragmentsOf(whole, 800, 12)[0]) // too small
	frames = append(frames, fragmentsOf(whole, 1400, 13)[:2]...)
	frames = append(frames, testFrame())
	whole6 := buildFrame(fspec{v6: true, dst: mac(2), src: mac(1), src6: ip6("2001:2::1"), dst6: ip6("2001:2::2"), ttl: 64,
		proto: packet.ProtoUDP, sport: 1000, dport: 2000, payload: bytes.Repeat([]byte{5}, 3500)})
	set6 := fragmentsOf6(whole6, 1400, 21)
	frames = append(frames, set6[1], set6[2], set6[0], set6[2])    // out of order, then a duplicate after completion
	frames = append(frames, fragmentsOf6(whole6, 1400, 22)[1:]...) // missing its first
	for _, f := range frames {
		r.appctl("netdev-dummy/receive", "p1", hex.EncodeToString(f))
		fx.devs[1].Inject(0, f)
		time.Sleep(20 * time.Millisecond) // one at a time through both
	}
	var want [][]byte
	for range 50 {
		if want = pcapFrames(t, r.dir+"/p2.pcap"); len(want) >= 9 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// IPv4: the complete set's three fragments, the duplicate and the
	// small one (+inv, forwarded by a flow that does not look), the
	// whole datagram; the incomplete set is held. IPv6: the set's three,
	// then the late duplicate (a list of its own, held); the incomplete
	// set is held.
	if len(want) != 9 {
		t.Fatalf("Open vSwitch sent %d frames, want 9", len(want))
	}
	got := fx.devs[2].WaitSent(len(want), 5*time.Second)
	if len(got) != len(want) {
		t.Fatalf("sent %d frames, Open vSwitch %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].Data, want[i]) {
			t.Errorf("frame %d differs from Open vSwitch's (%d vs %d bytes)", i, len(got[i].Data), len(want[i]))
		}
	}
	ours := fx.dp.IPF().Status().Format()
	if theirs := r.appctl("dpctl/ipf-get-status"); theirs != ours {
		t.Errorf("ipf-get-status: Open vSwitch:\n%s\nours:\n%s", theirs, ours)
	}
}

// TestNATFragmentsMatchOpenVSwitch: fragments committed with
// nat(src=198.18.9.9) leave Debian's ovs-vswitchd and this datapath
// (its real tracker) byte for byte the same.
func TestNATFragmentsMatchOpenVSwitch(t *testing.T) {
	r := startRefDatapath(t)
	r.addBridge()
	mgmt := "unix:" + r.dir + "/br0.mgmt"
	r.run("ovs-ofctl", "add-flow", mgmt, "ip,actions=ct(commit,zone=3,nat(src=198.18.9.9)),output:2")

	fx := newFixture(t, Config{Tracker: conntrack.New(conntrack.Config{})}, 2)
	nat := &conntrack.NAT{Kind: conntrack.NATSrc, AddrMin: netip.MustParseAddr("198.18.9.9")}
	fx.dp.SetUpcallHandler(&recordingHandler{answer: func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		u.Actions = append(u.Actions, CT(conntrack.Request{Zone: 3, Commit: true, NAT: nat}), Output(2))
		return UpcallInstall
	}})
	payload := make([]byte, 3000)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	var frames [][]byte
	for i, proto := range []uint8{packet.ProtoUDP, packet.ProtoTCP} {
		whole := buildFrame(fspec{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), ttl: 64,
			proto: proto, sport: 1000, dport: 2000, payload: payload})
		if proto == packet.ProtoTCP {
			// A SYN, so the tracker takes it as a new connection.
			tcp := whole[packet.EthHeaderLen+packet.IPv4MinLen:]
			old := append([]byte(nil), tcp[12:14]...)
			tcp[13] = 0x02
			c := packet.UpdateChecksum(binary.BigEndian.Uint16(tcp[16:]), old, tcp[12:14])
			binary.BigEndian.PutUint16(tcp[16:], c)
		}
		set := fragmentsOf(whole, 1200, uint16(30+i))
		frames = append(frames, set[1], set[2], set[0])
	}
	for _, f := range frames {
		r.appctl("netdev-dummy/receive", "p1", hex.EncodeToString(f))
		fx.devs[1].Inject(0, f)
		time.Sleep(20 * time.Millisecond)
	}
	var want [][]byte
	for range 50 {
		if want = pcapFrames(t, r.dir+"/p2.pcap"); len(want) >= 6 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(want) != 6 {
		t.Fatalf("Open vSwitch sent %d frames, want 6", len(want))
	}
	got := fx.devs[2].WaitSent(len(want), 5*time.Second)
	if len(got) != len(want) {
		t.Fatalf("sent %d frames, Open vSwitch %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].Data, want[i]) {
			t.Errorf("frame %d differs from Open vSwitch's:\n ours %x\novs's %x", i, got[i].Data[:64], want[i][:64])
		}
	}
}
