package conntrack

import (
	"net/netip"
	"strings"
	"testing"

	"gvs/packet"
)

// tcpData builds a TCP segment carrying text.
func tcpData(src, dst [4]byte, sp, dp uint16, flags uint16, seq, ack uint32, text string) *packet.Buffer {
	h := tcpHdr(sp, dp, seg{flags: flags, seq: seq, ack: ack, win: 1000, wscale: -1})
	h = append(h, text...)
	return frame(ipPacket(ipFrom4(src), ipFrom4(dst), packet.ProtoTCP, h))
}

func TestALGFTPPassive(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	ftp := Request{Zone: 1, Commit: true, Helper: HelperFTP, SetMark: true, Mark: 7, MarkMask: 0xff}
	a, b := ipA.As4(), ipB.As4()
	wantState(t, "syn", run(ct, tcpData(a, b, 40000, 21, fSYN, 100, 0, ""), ftp), trk|nw)
	wantState(t, "syn-ack", run(ct, tcpData(b, a, 21, 40000, fSYN|fACK, 500, 101, ""), ftp), trk|est|rpl)
	wantState(t, "ack", run(ct, tcpData(a, b, 40000, 21, fACK, 101, 501, ""), ftp), trk|est)
	msg := "227 Entering Passive Mode (198,18,0,2,39,16).\r\n"
	wantState(t, "227", run(ct, tcpData(b, a, 21, 40000, fACK|fPSH, 501, 101, msg), ftp), trk|est|rpl)
	if got := dumpAll(ct); len(got) != 1 || !strings.Contains(got[0], ",helper=ftp") {
		t.Fatalf("dump %q", got)
	}
	// The data connection the reply announced is related, inherits the
	// mark, and carries the control connection's original tuple.
	d := tcpData(a, b, 40001, 10000, fSYN, 9000, 0, "")
	wantState(t, "data syn", run(ct, d, Request{Zone: 1, Commit: true}), trk|nw|rel)
	if d.Key.CTMark != 7 || d.Key.CTTpDst != 21 || d.Key.CTTpSrc != 40000 {
		t.Fatalf("data conn md: mark %d orig ports %d %d", d.Key.CTMark, d.Key.CTTpSrc, d.Key.CTTpDst)
	}
	wantState(t, "data syn-ack", run(ct, tcpData(b, a, 10000, 40001, fSYN|fACK, 1, 9001, ""), Request{Zone: 1}), trk|est|rpl|rel)
	// Another port was not announced.
	wantState(t, "unannounced", run(ct, tcpData(a, b, 40002, 10001, fSYN, 1, 0, ""), Request{Zone: 1}), trk|nw)
	// A bounce attempt (an address not the sender's) is invalid.
	bounce := "227 Entering Passive Mode (198,18,7,7,39,17).\r\n"
	wantState(t, "bounce", run(ct, tcpData(b, a, 21, 40000, fACK|fPSH, 501+uint32(len(msg)), 101, bounce), ftp), trk|inv)
	// Flushing the control connection forgets its expectations.
	ct.Flush(1, &Tuple{Src: ipA, Dst: ipB, SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP})
	if ct.exp.n.Load() != 0 {
		t.Fatal("expectation outlived its parent")
	}
}

func TestALGTFTP(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	wantState(t, "request", run(ct, udpPkt(ipA, ipB, 5000, 69), Request{Commit: true, Helper: HelperTFTP}), trk|nw)
	// The server answers from a new port: related.
	r := udpPkt(ipB, ipA, 7000, 5000)
	wantState(t, "transfer", run(ct, r, Request{Commit: true}), trk|nw|rel)
	if r.Key.CTTpDst != 69 {
		t.Fatalf("orig tuple dport %d", r.Key.CTTpDst)
	}
	wantState(t, "ack", run(ct, udpPkt(ipA, ipB, 5000, 7000), Request{}), trk|est|rpl|rel)
	// Without the helper, nothing is expected.
	ct2, _ := newTestTracker(t, Config{})
	run(ct2, udpPkt(ipA, ipB, 5000, 69), Request{Commit: true})
	wantState(t, "no helper", run(ct2, udpPkt(ipB, ipA, 7000, 5000), Request{Commit: true}), trk|nw)
}

func ipFrom4(a [4]byte) netip.Addr { return netip.AddrFrom4(a) }

func TestALGFTPActiveThroughSNAT(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	snat := &NAT{Kind: NATSrc, AddrMin: ipN}
	out := Request{Commit: true, Helper: HelperFTP, NAT: snat}
	in := Request{NAT: &NAT{Kind: NATApply}}
	a, b, n := ipA.As4(), ipB.As4(), ipN.As4()
	wantState(t, "syn", run(ct, tcpData(a, b, 40000, 21, fSYN, 100, 0, ""), out), trk|nw|StateSrcNAT)
	wantState(t, "syn-ack", run(ct, tcpData(b, n, 21, 40000, fSYN|fACK, 500, 101, ""), in), trk|est|rpl|StateDstNAT)
	wantState(t, "ack", run(ct, tcpData(a, b, 40000, 21, fACK, 101, 501, ""), out), trk|est|StateSrcNAT)
	port := tcpData(a, b, 40000, 21, fACK|fPSH, 101, 501, "PORT 198,18,0,1,39,16\r\n")
	wantState(t, "PORT", run(ct, port, out), trk|est|StateSrcNAT)
	if !strings.Contains(string(port.Data()), "PORT 198,18,1,100,39,16\r\n") {
		t.Fatalf("PORT not rewritten: %q", port.Data()[14+40:])
	}
	if !extract(frame(port.Data()[14:]), 0, &lookupCtx{}) {
		t.Fatal("rewritten PORT has bad checksums")
	}
	// The server connects to the NAT address; nat sends it to A.
	d := tcpData(b, n, 20, 10000, fSYN, 1, 0, "")
	wantState(t, "data syn", run(ct, d, Request{Commit: true, NAT: &NAT{Kind: NATApply}}), trk|nw|rel|StateDstNAT)
	if d.Key.DstIPv4 != a || d.Key.DstPort != 10000 {
		t.Fatalf("data conn to %v:%d", d.Key.DstIPv4, d.Key.DstPort)
	}
	// The skew the longer address added is taken off A's acknowledgements
	// and put on its sequence numbers.
	grow := uint32(len("198,18,1,100") - len("198,18,0,1"))
	ack := tcpData(b, n, 21, 40000, fACK, 501, 101+uint32(len("PORT 198,18,0,1,39,16\r\n"))+grow, "")
	wantState(t, "ack of PORT", run(ct, ack, in), trk|est|rpl|StateDstNAT)
}
