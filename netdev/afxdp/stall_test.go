package afxdp

import (
	"testing"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

// strandDescriptors leaves descriptors in a's tx ring the way a kernel
// that drains less per kick than was queued does (64 queued, one kick,
// the kernel's per-call budget is 32) and marks the socket as Send's
// bounded kick loop would. It returns how many were left.
func strandDescriptors(t *testing.T, a *Device, n uint32) uint32 {
	t.Helper()
	frame := buildFrame(frameSpec{payload: 200})
	s := a.socks[0]
	if got := s.txCache.ensure(s.group, int(n)); got < int(n) {
		t.Fatalf("only %d free chunks", got)
	}
	for i := range n {
		addr := s.txCache.get()
		copy(s.mem[addr:], frame)
		s.tx.descs[(s.tx.cachedProd+i)&s.tx.mask] = unix.XDPDesc{Addr: addr, Len: uint32(len(frame))}
	}
	s.tx.submit(n)
	s.txInflight += int(n)
	s.kickTx()
	left := s.tx.outstanding()
	if left == 0 {
		t.Skipf("the kernel sent %d frames in one call: no leftovers to test", n)
	}
	s.txStuck.Store(stuckMark | uint64(s.tx.cachedProd))
	return left
}

// TestLeftoverDescriptorsKickedByRecv: descriptors left in the tx ring
// must not wait for the next Send (the Open vSwitch stall): Recv calls on
// the queue, with nothing to receive, push them out and clear the mark.
func TestLeftoverDescriptorsKickedByRecv(t *testing.T) {
	_, a, b := loopPair(t, Config{XDPMode: ModeNative}, 1)
	pool := newTestPool(t)
	const n = 64
	left := strandDescriptors(t, a, n)
	t.Logf("after one kick: %d of %d descriptors left in the tx ring", left, n)
	s := a.socks[0]
	var batch packet.Batch
	calls := 0
	for ; s.tx.outstanding() != 0 && calls < 100; calls++ {
		if _, err := a.Recv(0, &batch, pool); err != nil {
			t.Fatal(err)
		}
		pool.PutBatch(&batch)
	}
	if left := s.tx.outstanding(); left != 0 {
		t.Fatalf("%d descriptors still in the tx ring after %d Recv calls", left, calls)
	}
	a.Recv(0, &batch, pool) // the call that sees the ring empty clears the mark
	if s.txStuck.Load() != 0 {
		t.Error("stuck mark not cleared")
	}
	if got := recvFrames(t, b, 0, pool, n); len(got) != n {
		t.Fatalf("peer received %d of %d frames", len(got), n)
	}
}

// TestLeftoverDescriptorsSentByPoll: a PMD that sleeps in poll(2) on
// PollFD instead of calling Recv also gets them out: in copy mode the
// kernel's poll transmits what the tx ring holds.
func TestLeftoverDescriptorsSentByPoll(t *testing.T) {
	_, a, b := loopPair(t, Config{XDPMode: ModeGeneric}, 1)
	pool := newTestPool(t)
	const n = 64
	strandDescriptors(t, a, n)
	fds := []unix.PollFd{{Fd: int32(a.PollFD(0)), Events: unix.POLLIN}}
	for range 4 {
		_, _ = unix.Poll(fds, 0)
	}
	if left := a.socks[0].tx.outstanding(); left != 0 {
		t.Fatalf("%d descriptors still in the tx ring after poll(2)", left)
	}
	if got := recvFrames(t, b, 0, pool, n); len(got) != n {
		t.Fatalf("peer received %d of %d frames", len(got), n)
	}
}
