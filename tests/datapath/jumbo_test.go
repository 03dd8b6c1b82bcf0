package datapathtest

import (
	"testing"
	"time"
)

// TestJumboTCP: with MTU 9000 on every link (and on the internal port),
// 9000-byte IP packets cross the switch unfragmented and a TCP stream of
// jumbo segments neither stalls nor corrupts data (300 MB, SHA-256).
func TestJumboTCP(t *testing.T) {
	for _, v := range portVariants {
		t.Run(v.name, func(t *testing.T) {
			e := buildTwoEnds(t, v, jumboMTU)
			p := newPinger(t, e.a.NS)
			if _, err := p.reach(e.bIP, 56, 5*time.Second); err != nil {
				t.Fatalf("ping: %v", err)
			}
			if _, err := p.reach(e.bIP, jumboMTU-28, 2*time.Second); err != nil {
				t.Errorf("9000-byte ping with DF: %v", err)
			}
			needIperf(t)
			r, err := iperfTCP(e.bNS, e.a.NS, e.bIP, 2)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s MTU %d: TCP %.2f Gbit/s, %d retransmits, bytes per interval %v", v.name, jumboMTU, r.RecvGbps, r.Retransmits, r.IntervalBytes)
			for i, b := range r.IntervalBytes {
				if b == 0 {
					t.Errorf("TCP stalled: interval %d sent 0 bytes (%v)", i, r.IntervalBytes)
				}
			}
			if r.RecvBytes <= 0 {
				t.Errorf("TCP delivered nothing: %+v", r)
			}
			sent, got, err := transfer(t, e.a.NS, e.bNS, e.bIP, transferSize)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s MTU %d: 300 MB in %.2f s", v.name, jumboMTU, got.Seconds)
			if got.Bytes != transferSize || got.SHA256 != sent.SHA256 {
				t.Errorf("received %d bytes with SHA-256 %s; sent %d with %s", got.Bytes, got.SHA256, sent.Bytes, sent.SHA256)
			}
			logSwitch(t, e.sw.stats())
		})
	}
}
