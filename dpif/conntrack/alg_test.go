package conntrack

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"gvs/packet"
)

func TestALGFTPParse(t *testing.T) {
	for _, c := range []struct {
		msg      string
		v6       bool
		interest bool
		ok       bool
		want     algFTPMsg
		addrText string
	}{
		{msg: "PORT 198,18,0,1,156,64\r\n", interest: true, ok: true,
			want: algFTPMsg{mode: algFTPActive, addr: ntAddr("198.18.0.1"), port: 40000, addrAt: 5, addrLen: 10}, addrText: "198,18,0,1"},
		{msg: "port 198,18,0,1,0,21\r\n", interest: true, ok: true,
			want: algFTPMsg{mode: algFTPActive, addr: ntAddr("198.18.0.1"), port: 21, addrAt: 5, addrLen: 10}, addrText: "198,18,0,1"},
		{msg: "227 Entering Passive Mode (198,18,1,2,195,80).\r\n", interest: true, ok: true,
			want: algFTPMsg{mode: algFTPPassive, addr: ntAddr("198.18.1.2"), port: 50000, addrAt: 27, addrLen: 10}, addrText: "198,18,1,2"},
		{msg: "EPRT |1|198.18.0.1|40000|\r\n", interest: true, ok: true,
			want: algFTPMsg{mode: algFTPActive, extended: true, addr: ntAddr("198.18.0.1"), port: 40000, addrAt: 8, addrLen: 10}, addrText: "198.18.0.1"},
		{msg: "229 Entering Extended Passive Mode (|||50000|)\r\n", interest: true, ok: true,
			want: algFTPMsg{mode: algFTPPassive, extended: true, port: 50000}},
		{msg: "EPRT |2|2001:2::1|40000|\r\n", v6: true, interest: true, ok: true,
			want: algFTPMsg{mode: algFTPActive, extended: true, addr: ntAddr("2001:2::1"), port: 40000, addrAt: 8, addrLen: 9}, addrText: "2001:2::1"},
		{msg: "229 Entering Extended Passive Mode (|||50000|)\r\n", v6: true, interest: true, ok: true,
			want: algFTPMsg{mode: algFTPPassive, extended: true, port: 50000}},
		// Not of interest.
		{msg: "USER anonymous\r\n"},
		{msg: "PORT 198,18,0,1,156,64\r\n", v6: true},
		{msg: "227 Entering Passive Mode (198,18,1,2,195,80)", v6: true},
		{msg: "\x00PORT 198,18,0,1,156,64"},
		// Malformed.
		{msg: "PORT\r\n", interest: true},
		{msg: "PORT 198,18,0,1\r\n", interest: true},
		{msg: "PORT 300,18,0,1,1,1\r\n", interest: true},
		{msg: "PORT 198,18,0,1,256,1\r\n", interest: true},
		{msg: "PORT 198,18,0,1,1,\r\n", interest: true},
		{msg: "PORT 198,018,0,1,1,1\r\n", interest: true},
		{msg: "227 no address\r\n", interest: true},
		{msg: "EPRT |2|2001:2::1|40000|\r\n", interest: true},
		{msg: "EPRT |1|198.18.0.1|70000|\r\n", interest: true},
		{msg: "EPRT |12|198.18.0.1|7|\r\n", interest: true},
		{msg: "EPRT |1|2001:2::1|40000|\r\n", v6: true, interest: true},
		{msg: "EPRT |2|198.18.0.1|40000|\r\n", v6: true, interest: true},
		{msg: "229 Entering Extended Passive Mode (|||99999|)", v6: true, interest: true},
		{msg: "229 EXTENDED PASSIVE but no port", v6: true, interest: true},
	} {
		if got := algFTPInterest([]byte(c.msg), c.v6); got != c.interest {
			t.Errorf("%q v6=%v: interest %v, want %v", c.msg, c.v6, got, c.interest)
		}
		if !c.interest {
			continue
		}
		m, ok := algFTPParse([]byte(c.msg), c.v6)
		if ok != c.ok {
			t.Errorf("%q v6=%v: ok %v, want %v (%+v)", c.msg, c.v6, ok, c.ok, m)
			continue
		}
		if ok && m != c.want {
			t.Errorf("%q: got %+v, want %+v", c.msg, m, c.want)
		}
		if ok && c.msg[m.addrAt:m.addrAt+m.addrLen] != c.addrText {
			t.Errorf("%q: address text %q, want %q", c.msg, c.msg[m.addrAt:m.addrAt+m.addrLen], c.addrText)
		}
	}
}

// ntFTPPacket builds a TCP segment with seq, ack and payload.
func ntFTPPacket(src, dst string, sport, dport uint16, seq, ack uint32, payload string) []byte {
	ip := ntIP(ntPkt{src: ntAddr(src), dst: ntAddr(dst), proto: packet.ProtoTCP, sport: sport, dport: dport, payload: []byte(payload)})
	l4, _, _ := ntL4(ip)
	binary.BigEndian.PutUint32(l4[4:], seq)
	binary.BigEndian.PutUint32(l4[8:], ack)
	ntFixL4(ip, false)
	return ip
}

// ntALG runs algFTP on ip and checks the result is a valid packet equal
// to want and with an unchanged key.
func ntALG(t *testing.T, ip, want []byte, orig, reply *Tuple, kind NATKind, nat, isReply bool, st *algFTPState) (algExpectation, algFTPResult) {
	t.Helper()
	b := ntBuffer(ntFrame(ip, false))
	key := b.Key
	exp, res := algFTP(b, orig, reply, kind, nat, isReply, st)
	got := ntIPOf(b.Data())
	if err := ntCheckIP(got); err != nil {
		t.Errorf("after the helper: %v", err)
	}
	if want != nil && !bytes.Equal(got, want) {
		t.Errorf("after the helper:\n got %x\nwant %x", got, want)
	}
	if b.Key != key {
		t.Error("the key changed")
	}
	return exp, res
}

// Active FTP through SNAT: the client's PORT names its NATed address, the
// data connection is expected from the server to it and NATed back to
// the client, and sequence numbers follow the longer text.
func TestALGFTPActiveSNAT(t *testing.T) {
	orig := Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.1.2"), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP, Zone: 5}
	reply := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP, Zone: 5}
	var st algFTPState

	in := ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1000, 5000, "PORT 198,18,0,1,156,64\r\n")
	want := ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1000, 5000, "PORT 198,18,2,10,156,64\r\n")
	exp, res := ntALG(t, in, want, &orig, &reply, NATSrc, true, false, &st)
	if res != algFTPExpected {
		t.Fatalf("result %v", res)
	}
	wantExp := algExpectation{
		Key:    Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), DstPort: 40000, Proto: packet.ProtoTCP, Zone: 5},
		Parent: orig, NATAddr: ntAddr("198.18.0.1"),
	}
	if exp != wantExp {
		t.Errorf("expectation %+v\nwant %+v", exp, wantExp)
	}
	if st != (algFTPState{Skew: 1}) {
		t.Errorf("state %+v", st)
	}
	// The server's data connection from port 20 matches, and is NATed
	// back to the client.
	data := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), SrcPort: 20, DstPort: 40000, Proto: packet.ProtoTCP, Zone: 5}
	if algExpectKey(data) != exp.Key {
		t.Errorf("data connection key %+v does not match %+v", algExpectKey(data), exp.Key)
	}
	r, kind := exp.NATReply(Tuple{Src: data.Dst, Dst: data.Src, SrcPort: 40000, DstPort: 20, Proto: packet.ProtoTCP, Zone: 5})
	if kind != NATDst || r.Src != ntAddr("198.18.0.1") || r.Dst != data.Src {
		t.Errorf("data connection reply %+v %v", r, kind)
	}

	// The client's next segment is one byte later on the wire; the
	// server's acknowledgement is one byte less for the client.
	ntALG(t, ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1025, 5000, "LIST\r\n"),
		ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1026, 5000, "LIST\r\n"), &orig, &reply, NATSrc, true, false, &st)
	ntALG(t, ntFTPPacket("198.18.1.2", "198.18.2.10", 21, 40000, 5000, 1032, "200 OK\r\n"),
		ntFTPPacket("198.18.1.2", "198.18.2.10", 21, 40000, 5000, 1031, "200 OK\r\n"), &orig, &reply, NATSrc, true, true, &st)

	// A second PORT adds to the skew.
	in = ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1031, 5008, "PORT 198,18,0,1,156,65\r\n")
	want = ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1032, 5008, "PORT 198,18,2,10,156,65\r\n")
	if _, res := ntALG(t, in, want, &orig, &reply, NATSrc, true, false, &st); res != algFTPExpected || st.Skew != 2 {
		t.Errorf("second PORT: %v, state %+v", res, st)
	}
}

func TestALGFTPCarriesControl(t *testing.T) {
	for _, c := range []struct {
		ip   []byte
		want bool
	}{
		{ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1, 2, "PORT 198,18,0,1,156,64\r\n"), true},
		{ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1, 2, "LIST\r\n"), false},
		{ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1, 2, ""), false},
		{ntFTPPacket("2001:2::1", "2001:2::2", 40000, 21, 1, 2, "229 Entering Extended Passive Mode (|||5|)"), true},
		{ntIP(ntPkt{src: ntAddr("198.18.0.1"), dst: ntAddr("198.18.1.2"), proto: packet.ProtoUDP, sport: 1, dport: 21, payload: []byte("PORT 1,2,3,4,5,6")}), false},
	} {
		if got := algFTPCarriesControl(ntBuffer(ntFrame(c.ip, false))); got != c.want {
			t.Errorf("%x: %v, want %v", c.ip, got, c.want)
		}
	}
}

// Passive FTP to a DNATed server: its 227 names the virtual address.
func TestALGFTPPassiveDNAT(t *testing.T) {
	orig := Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.4.80"), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP}
	reply := Tuple{Src: ntAddr("198.18.5.1"), Dst: ntAddr("198.18.0.1"), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP}
	var st algFTPState
	in := ntFTPPacket("198.18.5.1", "198.18.0.1", 21, 40000, 7000, 100, "227 Entering Passive Mode (198,18,5,1,195,80).\r\n")
	want := ntFTPPacket("198.18.5.1", "198.18.0.1", 21, 40000, 7000, 100, "227 Entering Passive Mode (198,18,4,80,195,80).\r\n")
	exp, res := ntALG(t, in, want, &orig, &reply, NATDst, true, true, &st)
	if res != algFTPExpected || st != (algFTPState{Skew: 1, SkewReply: true}) {
		t.Fatalf("result %v, state %+v", res, st)
	}
	wantExp := algExpectation{
		Key:    Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.4.80"), DstPort: 50000, Proto: packet.ProtoTCP},
		Parent: orig, NATAddr: ntAddr("198.18.5.1"),
	}
	if exp != wantExp {
		t.Errorf("expectation %+v\nwant %+v", exp, wantExp)
	}
	// The client's acknowledgement of the longer reply is shifted back.
	ntALG(t, ntFTPPacket("198.18.0.1", "198.18.4.80", 40000, 21, 100, 7049, "LIST\r\n"),
		ntFTPPacket("198.18.0.1", "198.18.4.80", 40000, 21, 100, 7048, "LIST\r\n"), &orig, &reply, NATDst, true, false, &st)
}

// Passive FTP through SNAT: the 227 needs no rewrite (the server's own
// address), the client's data connection is expected and SNATed.
func TestALGFTPPassiveSNAT(t *testing.T) {
	orig := Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.1.2"), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP}
	reply := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP}
	var st algFTPState
	in := ntFTPPacket("198.18.1.2", "198.18.2.10", 21, 40000, 7000, 100, "227 Entering Passive Mode (198,18,1,2,195,80).\r\n")
	exp, res := ntALG(t, in, in, &orig, &reply, NATSrc, true, true, &st)
	if res != algFTPExpected || st.Skew != 0 {
		t.Fatalf("result %v, state %+v", res, st)
	}
	if !exp.NATReplyDst || exp.NATAddr != ntAddr("198.18.2.10") || exp.Key.Src != orig.Src || exp.Key.Dst != orig.Dst || exp.Key.DstPort != 50000 {
		t.Errorf("expectation %+v", exp)
	}
	r, kind := exp.NATReply(Tuple{Src: orig.Dst, Dst: orig.Src, SrcPort: 50000, DstPort: 41000, Proto: packet.ProtoTCP})
	if kind != NATSrc || r.Dst != ntAddr("198.18.2.10") {
		t.Errorf("data reply %+v %v", r, kind)
	}
}

// IPv6 EPRT through SNAT: the address text grows by five characters.
func TestALGFTPEPRTv6(t *testing.T) {
	orig := Tuple{Src: ntAddr("2001:2::1"), Dst: ntAddr("2001:2:0:1::2"), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP}
	reply := Tuple{Src: ntAddr("2001:2:0:1::2"), Dst: ntAddr("2001:2:0:2::10"), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP}
	var st algFTPState
	in := ntFTPPacket("2001:2::1", "2001:2:0:1::2", 40000, 21, 1, 2, "EPRT |2|2001:2::1|40001|\r\n")
	want := ntFTPPacket("2001:2::1", "2001:2:0:1::2", 40000, 21, 1, 2, "EPRT |2|2001:2:0:2::10|40001|\r\n")
	exp, res := ntALG(t, in, want, &orig, &reply, NATSrc, true, false, &st)
	if res != algFTPExpected || st.Skew != 5 || exp.Key.DstPort != 40001 || exp.Key.Dst != reply.Dst {
		t.Fatalf("result %v, state %+v, expectation %+v", res, st, exp)
	}
}

// IPv4 EPRT keeps its dots; a shorter address shrinks the segment.
func TestALGFTPEPRTv4Shrinks(t *testing.T) {
	orig := Tuple{Src: ntAddr("198.18.100.100"), Dst: ntAddr("198.18.1.2"), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP}
	reply := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.1"), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP}
	var st algFTPState
	in := ntFTPPacket("198.18.100.100", "198.18.1.2", 40000, 21, 1, 2, "EPRT |1|198.18.100.100|40001|\r\n")
	want := ntFTPPacket("198.18.100.100", "198.18.1.2", 40000, 21, 1, 2, "EPRT |1|198.18.2.1|40001|\r\n")
	if _, res := ntALG(t, in, want, &orig, &reply, NATSrc, true, false, &st); res != algFTPExpected || st.Skew != -4 {
		t.Fatalf("result %v, state %+v", res, st)
	}
	// The next segment moves back by four.
	ntALG(t, ntFTPPacket("198.18.100.100", "198.18.1.2", 40000, 21, 33, 2, "x"),
		ntFTPPacket("198.18.100.100", "198.18.1.2", 40000, 21, 29, 2, "x"), &orig, &reply, NATSrc, true, false, &st)
}

// Without nat the message is left as it is, but the expectation made.
func TestALGFTPNoNAT(t *testing.T) {
	orig := Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.1.2"), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP}
	reply := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.0.1"), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP}
	var st algFTPState
	in := ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1, 2, "PORT 198,18,0,1,156,64\r\n")
	exp, res := ntALG(t, in, in, &orig, &reply, NATApply, false, false, &st)
	if res != algFTPExpected || st.Skew != 0 || exp.Key.Dst != orig.Src || exp.Key.DstPort != 40000 {
		t.Fatalf("result %v, state %+v, expectation %+v", res, st, exp)
	}
}

// A PORT naming a third party (an FTP bounce) or malformed is invalid and
// changes nothing.
func TestALGFTPInvalid(t *testing.T) {
	orig := Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.1.2"), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP}
	reply := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP}
	for _, msg := range []string{"PORT 198,18,9,9,156,64\r\n", "PORT 198,18,0,1,999,1\r\n"} {
		st := algFTPState{Skew: 3}
		in := ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1, 2, msg)
		if _, res := ntALG(t, in, in, &orig, &reply, NATSrc, true, false, &st); res != algFTPInvalid || st.Skew != 3 {
			t.Errorf("%q: result %v, state %+v", msg, res, st)
		}
	}
}

// Ethernet padding after a short packet goes when it grows; a frame
// without room to grow keeps its text (and the expectation is made).
func TestALGFTPPaddingAndRoom(t *testing.T) {
	orig := Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.1.2"), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP}
	reply := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP}
	in := ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1, 2, "PORT 198,18,0,1,0,1")
	want := ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1, 2, "PORT 198,18,2,10,0,1")
	frame := append(ntFrame(in, false), make([]byte, 20)...) // padding
	b := ntBuffer(frame)
	var st algFTPState
	if _, res := algFTP(b, &orig, &reply, NATSrc, true, false, &st); res != algFTPExpected {
		t.Fatal(res)
	}
	if got := ntIPOf(b.Data()); !bytes.Equal(got, want) {
		t.Errorf("padded:\n got %x\nwant %x", got, want)
	}

	full := ntFrame(in, false)
	tight := packet.NewBuffer(0, len(full))
	tight.SetLen(len(full))
	copy(tight.Data(), full)
	tight.Parse()
	st = algFTPState{}
	if _, res := algFTP(tight, &orig, &reply, NATSrc, true, false, &st); res != algFTPExpected || st.Skew != 0 {
		t.Fatalf("no room: %v %+v", res, st)
	}
	if !bytes.Equal(tight.Data(), full) {
		t.Error("no room: the frame changed")
	}
}

// A partial checksum stays partial, for the new length.
func TestALGFTPPartialChecksum(t *testing.T) {
	orig := Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.1.2"), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP}
	reply := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP}
	b := ntBuffer(ntFrame(ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1, 2, "PORT 198,18,0,1,0,1\r\n"), false))
	ntPartial(t, b)
	var st algFTPState
	algFTP(b, &orig, &reply, NATSrc, true, false, &st)
	if !packet.IsPartialChecksum(b.Data(), &b.Key, b.Offsets) {
		t.Fatal("not the partial sum of the new pseudo-header")
	}
	b.CompleteVnetChecksum()
	want := ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1, 2, "PORT 198,18,2,10,0,1\r\n")
	if got := ntIPOf(b.Data()); !bytes.Equal(got, want) {
		t.Errorf("got %x\nwant %x", got, want)
	}
}

func TestALGTFTPExpectation(t *testing.T) {
	orig := Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.1.2"), SrcPort: 5000, DstPort: 69, Proto: packet.ProtoUDP, Zone: 2}
	reply := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), SrcPort: 69, DstPort: 5000, Proto: packet.ProtoUDP, Zone: 2}
	exp := algTFTPExpectation(&orig, &reply, NATSrc, false)
	want := algExpectation{
		Key:    Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), DstPort: 5000, Proto: packet.ProtoUDP, Zone: 2},
		Parent: orig, NATAddr: ntAddr("198.18.0.1"),
	}
	if exp != want {
		t.Errorf("got %+v\nwant %+v", exp, want)
	}
	// The server's answer from a new port matches.
	ans := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), SrcPort: 33333, DstPort: 5000, Proto: packet.ProtoUDP, Zone: 2}
	if algExpectKey(ans) != exp.Key {
		t.Error("the answer does not match")
	}
	// When SNAT moved the client's port, the answer goes to the new one.
	moved := reply
	moved.DstPort = 5001
	if exp := algTFTPExpectation(&orig, &moved, NATSrc, false); exp.Key.DstPort != 5001 {
		t.Errorf("moved port: %+v", exp)
	}
	// Through DNAT the answer comes from the real server to the client
	// and is NATed to look as if from the virtual address.
	dorig := Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.4.80"), SrcPort: 5000, DstPort: 69, Proto: packet.ProtoUDP}
	dreply := Tuple{Src: ntAddr("198.18.5.1"), Dst: ntAddr("198.18.0.1"), SrcPort: 69, DstPort: 5000, Proto: packet.ProtoUDP}
	exp = algTFTPExpectation(&dorig, &dreply, NATDst, false)
	if exp.Key.Src != dreply.Src || exp.Key.Dst != dreply.Dst || !exp.NATReplyDst || exp.NATAddr != dorig.Dst {
		t.Errorf("DNAT: %+v", exp)
	}
}

func TestALGCtlType(t *testing.T) {
	k := func(proto uint8, sp, dp uint16) *packet.Key {
		return &packet.Key{IPProto: proto, SrcPort: sp, DstPort: dp}
	}
	for _, c := range []struct {
		k      *packet.Key
		helper Helper
		want   Helper
	}{
		{k(packet.ProtoTCP, 40000, 21), HelperNone, HelperFTP},
		{k(packet.ProtoTCP, 21, 40000), HelperNone, HelperFTP},
		{k(packet.ProtoTCP, 40000, 2121), HelperFTP, HelperFTP},
		{k(packet.ProtoTCP, 40000, 2121), HelperNone, HelperNone},
		{k(packet.ProtoUDP, 5000, 69), HelperNone, HelperTFTP},
		{k(packet.ProtoUDP, 69, 5000), HelperNone, HelperNone},
		{k(packet.ProtoUDP, 5000, 6969), HelperTFTP, HelperTFTP},
		{k(packet.ProtoUDP, 5000, 21), HelperFTP, HelperNone},
		{k(packet.ProtoTCP, 5000, 69), HelperTFTP, HelperNone},
	} {
		if got := algCtlType(c.k, c.helper); got != c.want {
			t.Errorf("%+v helper %v: %v, want %v", *c.k, c.helper, got, c.want)
		}
	}
	if !algHelperAllowed(HelperNone, HelperNone) || !algHelperAllowed(HelperFTP, HelperNone) ||
		algHelperAllowed(HelperNone, HelperFTP) || algHelperAllowed(HelperTFTP, HelperFTP) || !algHelperAllowed(HelperFTP, HelperFTP) {
		t.Error("algHelperAllowed")
	}
}

// FuzzALGFTPParse: no panic, and what parses has its address text where
// it says.
func FuzzALGFTPParse(f *testing.F) {
	for _, s := range []string{"PORT 198,18,0,1,156,64\r\n", "227 Entering Passive Mode (198,18,1,2,195,80).", "EPRT |1|198.18.0.1|40000|",
		"229 (|||50000|)", "EPRT |2|2001:2::1|40000|", "EXTENDED PASSIVE (|||1|)"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, msg []byte, v6 bool) {
		if !algFTPInterest(msg, v6) {
			return
		}
		m, ok := algFTPParse(msg, v6)
		if !ok || m.addrLen == 0 {
			return
		}
		if m.addrAt < 0 || m.addrAt+m.addrLen > len(msg) || !m.addr.IsValid() {
			t.Fatalf("%q: %+v", msg, m)
		}
	})
}

// FuzzALGFTP: any segment of a control connection, NATed or not: no
// panic, and a valid packet stays valid.
func FuzzALGFTP(f *testing.F) {
	f.Add([]byte("PORT 198,18,0,1,156,64\r\n"), uint8(0), int32(0))
	f.Add([]byte("227 Entering Passive Mode (198,18,1,2,195,80)."), uint8(3), int32(-5))
	f.Add([]byte("EPRT |2|2001:2::1|40000|"), uint8(5), int32(7))
	f.Fuzz(func(t *testing.T, payload []byte, sel uint8, skew int32) {
		if len(payload) > 1200 {
			payload = payload[:1200]
		}
		v6 := sel&4 != 0
		a, b, n := "198.18.0.1", "198.18.1.2", "198.18.2.10"
		if v6 {
			a, b, n = "2001:2::1", "2001:2:0:1::2", "2001:2:0:2::10"
		}
		orig := Tuple{Src: ntAddr(a), Dst: ntAddr(b), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP}
		reply := Tuple{Src: ntAddr(b), Dst: ntAddr(n), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP}
		isReply := sel&2 != 0
		src, dst := a, b
		if isReply {
			src, dst = b, n
		}
		ip := ntFTPPacket(src, dst, 40000, 21, 1, 2, string(payload))
		buf := ntBuffer(ntFrame(ip, sel&8 != 0))
		st := algFTPState{Skew: skew, SkewReply: sel&16 != 0}
		algFTP(buf, &orig, &reply, NATSrc, sel&1 != 0, isReply, &st)
		if err := ntCheckIP(ntIPOf(buf.Data())); err != nil {
			t.Fatal(err)
		}
	})
}

// The helper allocates nothing per packet, control messages included.
func TestALGFTPAllocs(t *testing.T) {
	orig := Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.1.2"), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP}
	reply := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP}
	for _, msg := range []string{"LIST\r\n", "PORT 198,18,2,10,156,64\r\n", "227 Entering Passive Mode (198,18,1,2,195,80).\r\n"} {
		frame := ntFrame(ntFTPPacket("198.18.0.1", "198.18.1.2", 40000, 21, 1, 2, msg), false)
		b := ntBuffer(frame)
		st := algFTPState{Skew: 4}
		n := testing.AllocsPerRun(100, func() {
			algFTP(b, &orig, &reply, NATSrc, true, false, &st)
		})
		if n != 0 {
			t.Errorf("%q: %v allocations", msg, n)
		}
	}
	n := testing.AllocsPerRun(100, func() {
		natAllocate(orig, Tuple{Src: orig.Dst, Dst: orig.Src, SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP},
			&NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10")}, 1, func(Tuple) bool { return false })
	})
	if n != 0 {
		t.Errorf("natAllocate: %v allocations", n)
	}
}

// The address parsers agree with netip.ParseAddr (which follows
// inet_pton's rules: no leading zeros, one "::", a trailing dotted quad).
func FuzzALGParseAddr(f *testing.F) {
	for _, s := range []string{"198.18.0.1", "0.0.0.0", "255.255.255.255", "01.2.3.4", "1.2.3", "1.2.3.4.5", "256.1.1.1",
		"::", "::1", "1::", "2001:2::1", "2001:2:0:2::10", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "::ffff:198.18.0.1",
		"1:2:3:4:5:6:7::", "1:::2", ":1", "1:", "12345::", "fe80::1%eth0", "::1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := netip.ParseAddr(s)
		if got, ok := algParseIPv4([]byte(s)); ok != (err == nil && want.Is4()) || ok && got != want {
			t.Errorf("IPv4 %q: got %v %v, netip %v %v", s, got, ok, want, err)
		}
		if got, ok := algParseIPv6([]byte(s)); ok != (err == nil && want.Is6() && want.Zone() == "") || ok && got != want {
			t.Errorf("IPv6 %q: got %v %v, netip %v %v", s, got, ok, want, err)
		}
	})
}
