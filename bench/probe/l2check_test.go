package probe

import (
	"net"
	"testing"
	"time"
)

func TestProbeFrameRoundTrip(t *testing.T) {
	src := net.HardwareAddr{2, 0, 0, 0, 0, 7}
	dst := net.HardwareAddr{2, 0, 0, 0, 0, 9}
	frame := make([]byte, 60)
	encodeProbe(frame, dst, src, 0xdeadbeef, 999)
	if got, ok := decodeProbe(frame, 0xdeadbeef); !ok || got != 999 {
		t.Errorf("decode = %d, %v; want 999, true", got, ok)
	}
	if net.HardwareAddr(frame[0:6]).String() != dst.String() || net.HardwareAddr(frame[6:12]).String() != src.String() {
		t.Errorf("addresses not in place: % x", frame[:12])
	}
	if _, ok := decodeProbe(frame, 1); ok {
		t.Error("a frame of another run (other nonce) was accepted")
	}
	encodeProbe(frame, broadcastMAC, src, 5, -1)
	if _, ok := decodeProbe(frame, 5); ok {
		t.Error("the sink's announcement (index -1) was counted as a port")
	}
	if _, ok := decodeProbe(frame[:20], 5); ok {
		t.Error("a short frame was accepted")
	}
}

func TestSeenSet(t *testing.T) {
	s := newSeenSet(3)
	t0 := time.Unix(100, 0)
	s.mark(0, t0)
	s.mark(0, t0.Add(time.Hour)) // a repeat does not move the time
	s.mark(7, t0)                // out of range: ignored
	if n, all := s.summary(); n != 1 || all != 0 {
		t.Errorf("summary = %d, %d; want 1, 0", n, all)
	}
	if s.waitAll(0) {
		t.Error("waitAll true with peers missing")
	}
	s.mark(2, t0.Add(2*time.Second))
	s.mark(1, t0.Add(time.Second))
	if !s.waitAll(time.Second) {
		t.Error("waitAll false with every peer seen")
	}
	if n, all := s.summary(); n != 3 || all != t0.Add(time.Second).UnixNano() {
		t.Errorf("summary = %d, %d; want 3 and the last new arrival", n, all)
	}
}
