package conntrack

import (
	"strings"
	"testing"
	"time"
)

const (
	fSYN = tcpSYN
	fACK = tcpACK
	fFIN = tcpFIN
	fRST = tcpRST
	fPSH = tcpPSH
)

// handshake opens A:40000 -> B:5201 in zone 1 and returns the next
// sequence numbers of each side.
func handshake(t *testing.T, ct *Tracker, zone uint16) (aSeq, bSeq uint32) {
	t.Helper()
	commit := Request{Zone: zone, Commit: true}
	wantState(t, "syn", run(ct, tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fSYN, seq: 1000, win: 64240, wscale: 7}), commit), trk|nw)
	wantState(t, "syn-ack", run(ct, tcpPkt(ipB, ipA, 5201, 40000, seg{flags: fSYN | fACK, seq: 5000, ack: 1001, win: 65160, wscale: 7}), commit), trk|est|rpl)
	wantState(t, "ack", run(ct, tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fACK, seq: 1001, ack: 5001, win: 502, wscale: -1}), commit), trk|est)
	return 1001, 5001
}

func TestTCPHandshakeDataClose(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	a, b := handshake(t, ct, 1)
	if got := dumpAll(ct); len(got) != 1 || got[0] != "tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=40000,dport=5201),reply=(src=198.18.0.2,dst=198.18.0.1,sport=5201,dport=40000),zone=1,protoinfo=(state=ESTABLISHED)" {
		t.Fatalf("dump: %q", got)
	}
	req := Request{Zone: 1}
	wantState(t, "data", run(ct, tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fACK | fPSH, seq: a, ack: b, win: 502, wscale: -1, payload: 100}), req), trk|est)
	a += 100
	wantState(t, "data ack", run(ct, tcpPkt(ipB, ipA, 5201, 40000, seg{flags: fACK, seq: b, ack: a, win: 509, wscale: -1}), req), trk|est|rpl)
	wantState(t, "fin a", run(ct, tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fFIN | fACK, seq: a, ack: b, win: 502, wscale: -1}), req), trk|est)
	a++
	wantState(t, "fin b", run(ct, tcpPkt(ipB, ipA, 5201, 40000, seg{flags: fFIN | fACK, seq: b, ack: a, win: 509, wscale: -1}), req), trk|est|rpl)
	b++
	wantState(t, "last ack", run(ct, tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fACK, seq: a, ack: b, win: 502, wscale: -1}), req), trk|est)
	got := dumpAll(ct)
	if len(got) != 1 || !strings.HasSuffix(got[0], "protoinfo=(state=TIME_WAIT)") {
		t.Fatalf("dump after close: %q", got)
	}
	// A new SYN on the closed connection's tuple reopens it.
	wantState(t, "reopen", run(ct, tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fSYN, seq: 90000, win: 64240, wscale: 7}), Request{Zone: 1, Commit: true}), trk|nw)
	got = dumpAll(ct)
	if len(got) != 1 || !strings.HasSuffix(got[0], "protoinfo=(state=SYN_SENT)") {
		t.Fatalf("dump after reopen: %q", got)
	}
	if s := ct.Stats(); s.Created != 2 || s.Conns != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestTCPWindowViolationInvalid(t *testing.T) {
	for _, liberal := range []bool{false, true} {
		ct, _ := newTestTracker(t, Config{TCPLiberal: liberal})
		a, b := handshake(t, ct, 0)
		st := run(ct, tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fACK, seq: a + 50000000, ack: b, win: 502, wscale: -1, payload: 10}), Request{})
		want := trk | inv
		if liberal {
			want = trk | est
		}
		wantState(t, "out of window", st, want)
		if ct.TCPSeqCheck() == liberal {
			t.Fatal("TCPSeqCheck")
		}
		ct.SetTCPSeqCheck(liberal)
		st = run(ct, tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fACK, seq: a + 90000000, ack: b, win: 502, wscale: -1, payload: 10}), Request{})
		if want := trk | inv; !liberal {
			wantState(t, "unchecked", st, trk|est)
		} else {
			wantState(t, "checked", st, want)
		}
		if !liberal && ct.Stats().Invalid != 1 {
			t.Fatalf("invalid counter %d", ct.Stats().Invalid)
		}
	}
}

func TestTCPRst(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	a, b := handshake(t, ct, 0)
	// A reset whose sequence is far off is refused.
	wantState(t, "bad rst", run(ct, tcpPkt(ipB, ipA, 5201, 40000, seg{flags: fRST | fACK, seq: b + 100000, ack: a, wscale: -1}), Request{}), trk|inv)
	wantState(t, "rst", run(ct, tcpPkt(ipB, ipA, 5201, 40000, seg{flags: fRST | fACK, seq: b, ack: a, wscale: -1}), Request{}), trk|est|rpl)
	got := dumpAll(ct)
	if len(got) != 1 || !strings.HasSuffix(got[0], "protoinfo=(state=TIME_WAIT)") {
		t.Fatalf("dump after rst: %q", got)
	}
}

func TestTCPInvalidFlagsAndSynAck(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	commit := Request{Commit: true}
	// SYN+FIN is never valid; a SYN+ACK cannot open a connection.
	wantState(t, "syn+fin", run(ct, tcpPkt(ipA, ipB, 1, 2, seg{flags: fSYN | fFIN, seq: 1, wscale: -1}), commit), trk|inv)
	wantState(t, "syn+ack", run(ct, tcpPkt(ipA, ipB, 1, 2, seg{flags: fSYN | fACK, seq: 1, ack: 5, wscale: -1}), commit), trk|inv)
	wantState(t, "no flags", run(ct, tcpPkt(ipA, ipB, 1, 2, seg{seq: 1, wscale: -1}), commit), trk|inv)
	if n := ct.Stats().Conns; n != 0 {
		t.Fatalf("%d conns from invalid packets", n)
	}
	// A mid-stream ACK may pick up a connection (as after a restart).
	wantState(t, "pickup", run(ct, tcpPkt(ipA, ipB, 1, 2, seg{flags: fACK, seq: 1, ack: 5, win: 1000, wscale: -1}), commit), trk|nw)
	wantState(t, "pickup reply", run(ct, tcpPkt(ipB, ipA, 2, 1, seg{flags: fACK, seq: 5, ack: 1, win: 1000, wscale: -1}), commit), trk|est|rpl)
}

func TestTCPTimeouts(t *testing.T) {
	ct, clk := newTestTracker(t, Config{})
	handshake(t, ct, 0)
	var e Entry
	ct.Dump(AllZones, func(x *Entry) bool { e = *x; return false })
	if e.Timeout != 24*time.Hour {
		t.Fatalf("established timeout %v", e.Timeout)
	}
	clk.advance(24*time.Hour - time.Second)
	if ct.sweep(ct.now()) != 0 {
		t.Fatal("swept before expiry")
	}
	clk.advance(time.Second)
	if got := dumpAll(ct); len(got) != 0 {
		t.Fatalf("expired connection dumped: %q", got)
	}
	if n := ct.sweep(ct.now()); n != 1 {
		t.Fatalf("swept %d", n)
	}
	if s := ct.Stats(); s.Conns != 0 || s.Expired != 1 {
		t.Fatalf("stats %+v", s)
	}
}
