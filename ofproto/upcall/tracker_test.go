package upcall_test

import (
	"testing"

	"gvs/dpif/conntrack"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
	"gvs/packet"
)

func tcpFrame(dst, src [6]byte, sip, dip byte, sport, dport uint16, flags byte, seq, ack uint32, payload string) []byte {
	f := append(append([]byte{}, dst[:]...), src[:]...)
	f = append(f, 0x08, 0x00)
	tl := 20 + len(payload)
	ip := []byte{0x45, 0, byte((20 + tl) >> 8), byte(20 + tl), 0, 0, 0x40, 0, 64, 6, 0, 0, 198, 18, 0, sip, 198, 18, 0, dip}
	c := packet.IPv4HeaderChecksum(ip)
	ip[10], ip[11] = byte(c>>8), byte(c)
	f = append(f, ip...)
	tcp := []byte{byte(sport >> 8), byte(sport), byte(dport >> 8), byte(dport), byte(seq >> 24), byte(seq >> 16), byte(seq >> 8), byte(seq),
		byte(ack >> 24), byte(ack >> 16), byte(ack >> 8), byte(ack), 0x50, flags, 0xff, 0xff, 0, 0, 0, 0}
	seg := append(tcp, payload...)
	pseudo := []byte{198, 18, 0, sip, 198, 18, 0, dip, 0, 6, byte(len(seg) >> 8), byte(len(seg))}
	cs := ^packet.Checksum(seg, packet.Checksum(pseudo, 0))
	seg[16], seg[17] = byte(cs>>8), byte(cs)
	return append(f, seg...)
}

// TestConntrackTCPThroughTracker: a TCP connection through the
// datapath's real tracker (conntrack.New) and a firewall like the FTP
// scenario's: the SYN to port 21 commits with alg=ftp, every later packet
// in either direction passes as +est; the passive data connection the
// server's 227 announced passes as +rel, another is refused.
func TestConntrackTCPThroughTracker(t *testing.T) {
	tr := conntrack.New(conntrack.Config{TCPLiberal: true})
	tr.Start()
	defer tr.Close()
	fx := newCTFixture(t, tr)
	m := func(in uint32, st, mask uint32, proto uint8, dport uint16) mf.Match {
		var m mf.Match
		m.Flow.EtherType, m.Wildcards.Masks.EtherType = packet.EtherTypeIPv4, 0xffff
		m.Flow.CTState, m.Wildcards.Masks.CTState = st, mask
		if in != 0 {
			m.Flow.InPort, m.Wildcards.Masks.InPort = in, ^uint32(0)
		}
		if proto != 0 {
			m.Flow.IPProto, m.Wildcards.Masks.IPProto = proto, 0xff
		}
		if dport != 0 {
			m.Flow.DstPort, m.Wildcards.Masks.DstPort = dport, 0xffff
		}
		return m
	}
	const trk, nw, est, rel, inv = conntrack.StateTracked, conntrack.StateNew, conntrack.StateEstablished, conntrack.StateRelated, conntrack.StateInvalid
	fx.br.AddRule(&xlatetest.Rule{Prio: 100, M: m(0, 0, 0, 0, 0), Acts: []xlate.Action{&ofpact.CT{ZoneImm: 11, RecircTable: 1}}})
	fx.br.AddRule(&xlatetest.Rule{Table: 1, Prio: 100, M: m(1, trk|nw, trk|nw|rel|inv, 6, 21), Acts: []xlate.Action{
		&ofpact.CT{ZoneImm: 11, Flags: ofpact.CTCommit, Alg: ofpact.CTAlgFTP, RecircTable: ofpact.CTNoRecirc}, &ofpact.Output{Port: 2}}})
	fx.br.AddRule(&xlatetest.Rule{Table: 1, Prio: 100, M: m(1, trk|nw|rel, trk|nw|rel|inv, 6, 0), Acts: []xlate.Action{
		&ofpact.CT{ZoneImm: 11, Flags: ofpact.CTCommit, RecircTable: ofpact.CTNoRecirc}, &ofpact.Output{Port: 2}}})
	fx.br.AddRule(&xlatetest.Rule{Table: 1, Prio: 90, M: m(1, trk|est, trk|est|inv, 0, 0), Acts: []xlate.Action{&ofpact.Output{Port: 2}}})
	fx.br.AddRule(&xlatetest.Rule{Table: 1, Prio: 90, M: m(2, trk|est, trk|est|inv, 0, 0), Acts: []xlate.Action{&ofpact.Output{Port: 1}}})
	fx.br.AddRule(&xlatetest.Rule{Table: 1, Prio: 1, Acts: nil})
	xlatetest.UseClassifier(fx.br)
	fx.h.Changed()
	a, b := mac(1), mac(2)
	steps := []struct {
		in   uint32
		f    []byte
		want uint32
	}{
		{1, tcpFrame(b, a, 1, 2, 40000, 21, 0x02, 100, 0, ""), 2},
		{2, tcpFrame(a, b, 2, 1, 21, 40000, 0x12, 500, 101, ""), 1},
		{1, tcpFrame(b, a, 1, 2, 40000, 21, 0x10, 101, 501, ""), 2},
		{2, tcpFrame(a, b, 2, 1, 21, 40000, 0x18, 501, 101, "220 hello\r\n"), 1},
		{1, tcpFrame(b, a, 1, 2, 40000, 21, 0x18, 101, 512, "PASV\r\n"), 2},
		{2, tcpFrame(a, b, 2, 1, 21, 40000, 0x18, 512, 107, "227 Entering Passive Mode (198,18,0,2,156,64).\r\n"), 1},
		// Not announced: refused.
		{1, tcpFrame(b, a, 1, 2, 40001, 40002, 0x02, 900, 0, ""), 0},
		// The data connection the 227 announced: +rel, committed.
		{1, tcpFrame(b, a, 1, 2, 40003, 40000, 0x02, 900, 0, ""), 2},
		{2, tcpFrame(a, b, 2, 1, 40000, 40003, 0x12, 7000, 901, ""), 1},
	}
	for i, s := range steps {
		got := fx.send(s.in, s.f)
		want := []uint32{s.want}
		if s.want == 0 {
			want = nil
		}
		if !eq(got, want...) {
			for _, h := range fx.dp.Handles() {
				fe, _ := fx.dp.FlowGet(h)
				t.Logf("%v", fe)
			}
			t.Fatalf("step %d: out %v, want %d", i, got, s.want)
		}
	}
}
