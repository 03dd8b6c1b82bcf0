package dpif

import (
	"strings"
	"testing"
	"time"
)

// A flow installed by an upcall does not count the upcall's packet, as
// Open vSwitch's datapath: packets:0, used:never until the next packet
// takes it.
func TestUpcallPacketNotCountedOnNewFlow(t *testing.T) {
	fx := newFixture(t, Config{}, 2)
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	frame := udpFrame(mac(2), mac(1), 0, [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}, 1000, 2000)
	fx.devs[1].Inject(0, frame)
	if got := fx.devs[2].WaitSent(1, 5*time.Second); len(got) != 1 {
		t.Fatalf("port 2 sent %d frames, want the upcall's packet", len(got))
	}
	flows := fx.dp.Dump()
	if len(flows) != 1 {
		t.Fatalf("%d flows, want 1", len(flows))
	}
	if s := flows[0].Stats; s.Packets != 0 || s.Bytes != 0 {
		t.Fatalf("new flow counts its upcall's packet: %+v", s)
	}
	if text := flows[0].Format(time.Now()); !strings.Contains(text, "packets:0, bytes:0, used:never,") {
		t.Fatalf("new flow: %s", text)
	}
	fx.devs[1].Inject(0, frame)
	fx.devs[2].WaitSent(2, 5*time.Second)
	waitFor(t, "second packet counted", func() bool {
		f := fx.dp.Dump()
		return len(f) == 1 && f[0].Stats.Packets == 1 && f[0].Stats.Bytes == uint64(len(frame))
	})
}
