package afpacket

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

// TestPollFDWakes checks that PollFD is not readable with nothing queued
// and becomes readable when a frame arrives: a PMD sleeping in poll(2)
// must wake for a lone packet (in ring-v3 mode, once its block retires).
func TestPollFDWakes(t *testing.T) { eachMode(t, testPollFDWakes) }

func testPollFDWakes(t *testing.T, cfg Config) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	in, out := openT(t, a, Config{RxMode: RxRecvmmsg}), openT(t, b, cfg)
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: 64})
	if err != nil {
		t.Fatal(err)
	}
	var batch packet.Batch
	drain := func() {
		for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
			if _, err := out.Recv(0, &batch, pool); err != nil {
				t.Fatal(err)
			}
			pool.PutBatch(&batch)
		}
	}
	drain() // anything the link brought up (IPv6 router solicitations...)
	fds := []unix.PollFd{{Fd: int32(out.PollFD(0)), Events: unix.POLLIN}}
	if n, _ := unix.Poll(fds, 0); n != 0 {
		t.Fatalf("PollFD readable with nothing queued: revents %#x", fds[0].Revents)
	}
	batch.Append(udpFrame(t, pool, nil))
	start := time.Now()
	if err := in.Send(0, &batch); err != nil {
		t.Fatal(err)
	}
	n, err := unix.Poll(fds, 1000)
	if err != nil || n != 1 || fds[0].Revents&unix.POLLIN == 0 {
		t.Fatalf("poll after a frame was sent: n %d, revents %#x, err %v", n, fds[0].Revents, err)
	}
	t.Logf("woke after %v", time.Since(start))
	if got, err := out.Recv(0, &batch, pool); err != nil || got != 1 {
		t.Fatalf("Recv after wake-up: %d frames, %v", got, err)
	}
	pool.PutBatch(&batch)
}
