package afxdp

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// membarrierCmdGlobal is MEMBARRIER_CMD_GLOBAL: the kernel runs
// synchronize_rcu() before returning.
const membarrierCmdGlobal = 1

// rcuFence waits until every XDP program run and AF_XDP receive that
// started before it has finished: both run inside RCU read-side sections,
// so an RCU grace period (membarrier(MEMBARRIER_CMD_GLOBAL) waits for
// one) after the program is detached means no frame is still being
// written into a chunk of a socket about to close. Without membarrier a
// sleep stands in.
func rcuFence() {
	if _, _, e := unix.Syscall(unix.SYS_MEMBARRIER, membarrierCmdGlobal, 0, 0); e != 0 {
		time.Sleep(50 * time.Millisecond)
	}
}

// reclaimUnbound gives back what a socket that never bound holds: the
// chunks topUpFill put in its fill ring and its caches.
func (s *xsk) reclaimUnbound() {
	g := s.group
	if s.fill.mem != nil {
		var back []uint64
		for i := uint32(0); i < s.fill.cachedProd-s.fill.cachedCons; i++ {
			back = append(back, s.fill.addrs[(s.fill.cachedCons+i)&s.fill.mask])
		}
		g.give(back)
	}
	s.lender.cache.drain(g)
	s.txCache.drain(g)
}

// txDrainTimeout bounds how long Close waits for the completion ring to
// report frames the kernel took from the tx ring (in copy mode they
// complete when the skb is freed, usually at once).
const txDrainTimeout = 20 * time.Millisecond

// reclaim gives back the chunks of a bound socket that leaves: frames in
// the rx ring not yet read, chunks in the fill ring the kernel has not
// taken, descriptors in the tx ring it has not sent, completions, the
// caches. Loans still out become the group's orphans (they come back
// through Return). What the kernel took and did not hand back (its own
// free list, frames in flight past the timeout) is counted lost. It
// runs after the socket left the redirect path (rcuFence), with no Recv
// or Send running.
func (s *xsk) reclaim() {
	g := s.group
	var back []uint64
	// Transmit: wait for the kernel to complete what it took.
	deadline := time.Now().Add(txDrainTimeout)
	for {
		s.reap()
		pending := s.tx.cachedProd - atomic.LoadUint32(s.tx.consumer)
		if s.txInflight <= int(pending) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cons := atomic.LoadUint32(s.tx.consumer)
	for i := cons; i != s.tx.cachedProd; i++ {
		back = append(back, s.chunkOf(s.tx.descs[i&s.tx.mask].Addr))
		s.txInflight--
	}
	lost := uint64(max(s.txInflight, 0))
	// Receive: frames not read yet, then the fill ring's untaken chunks.
	n := s.rx.available(s.rx.size)
	for i := range n {
		back = append(back, s.chunkOf(s.rx.descs[(s.rx.cachedCons+i)&s.rx.mask].Addr))
	}
	s.rx.release(n)
	s.rxTaken += uint64(n)
	fillCons := atomic.LoadUint32(s.fill.consumer)
	for i := fillCons; i != s.fill.cachedProd; i++ {
		back = append(back, s.fill.addrs[i&s.fill.mask])
	}
	untaken := uint64(s.fill.cachedProd - fillCons)
	if kept := s.fillGiven - s.rxTaken - untaken; s.fillGiven >= s.rxTaken+untaken {
		lost += kept
	}
	g.give(back)
	s.lender.cache.drain(g)
	s.txCache.drain(g)
	if s.lender.lent > 0 {
		g.orphaned(s.lender.lent)
	}
	s.lender.closed.Store(true)
	if lost > 0 {
		g.lose(lost)
	}
}

// chunkOf returns the start of the chunk holding addr.
func (s *xsk) chunkOf(addr uint64) uint64 { return addr &^ (s.chunk - 1) }

// frame returns n bytes at addr, or nil if they cross the chunk's end
// (which only a kernel bug or a corrupted ring would produce).
func (s *xsk) frame(addr uint64, n uint32) []byte {
	end := addr + uint64(n)
	if end > uint64(len(s.mem)) || s.chunkOf(addr) != s.chunkOf(end-1) && n > 0 {
		return nil
	}
	return s.mem[addr:end:end]
}
