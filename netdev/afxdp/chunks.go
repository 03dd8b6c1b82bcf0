package afxdp

import (
	"sync/atomic"

	"gvs/packet"
)

// chunkCache is one goroutine's queue of free chunks in front of the
// group's free list: the receive side's (fill ring top-ups, loans coming
// back) and the transmit side's (copies, completions) of each socket.
// It moves batch chunks at a time to and from the group, so the group's
// lock is taken once per batch, never per packet. Its ring never grows
// (capacity set at creation), so it allocates nothing.
//
// It is a queue for the fill ring (get: the oldest first), so chunks go
// back into the fill ring in the order they were received and the kernel
// keeps writing them in one steady sequence, as when each chunk went
// straight back after a copy; a stack scrambled that order and cost the
// kernel's receive path about 10% more CPU per frame (cache and TLB
// misses on the chunks and its per-chunk descriptors). Copies take the
// newest (getNewest): writing into a chunk still in the CPU's caches
// costs less.
type chunkCache struct {
	addrs   []uint64 // ring of len(addrs) slots
	head, n int      // oldest chunk, count
	high    int      // give a batch back above this
	batch   int
}

// newChunkCache sizes a cache for a socket of ringSize entries: high is
// a quarter of the ring (at most 512), so caches hold little of the
// queue's reservation (2 × ringSize); the ring has room for what one
// top-up may need beyond that (a whole ring).
func newChunkCache(ringSize int) chunkCache {
	high := min(512, ringSize/4)
	return chunkCache{addrs: make([]uint64, ringSize+2*high), high: high, batch: high / 2}
}

// put adds a free chunk, giving a batch back to g when over high.
func (c *chunkCache) put(g *UMEMGroup, addr uint64) {
	c.addrs[c.slot(c.n)] = addr
	c.n++
	if c.n > c.high {
		c.trim(g)
	}
}

// slot returns the ring index of the i-th chunk from the oldest.
func (c *chunkCache) slot(i int) int {
	j := c.head + i
	if j >= len(c.addrs) {
		j -= len(c.addrs)
	}
	return j
}

// trim gives the oldest chunks back to g until the cache holds
// high - batch.
func (c *chunkCache) trim(g *UMEMGroup) {
	if k := c.n - (c.high - c.batch); k > 0 {
		c.giveOldest(g, k)
	}
}

// giveOldest gives the k oldest chunks to g (two runs if they wrap).
func (c *chunkCache) giveOldest(g *UMEMGroup, k int) {
	first := min(k, len(c.addrs)-c.head)
	g.give(c.addrs[c.head : c.head+first])
	if k > first {
		g.give(c.addrs[:k-first])
	}
	c.head = c.slot(k)
	c.n -= k
}

// ensure makes the cache hold n chunks if the group has them (plus a
// batch more, so the next calls need not lock), and returns how many it
// holds, at most n.
func (c *chunkCache) ensure(g *UMEMGroup, n int) int {
	if c.n < n {
		want := min(n-c.n+c.batch, len(c.addrs)-c.n)
		tail := c.slot(c.n)
		first := min(want, len(c.addrs)-tail)
		got := g.takeInto(c.addrs[tail : tail+first])
		if got == first && want > first {
			got += g.takeInto(c.addrs[:want-first])
		}
		c.n += got
	}
	return min(n, c.n)
}

// get takes the oldest chunk, for the fill ring; the caller made sure
// there is one (ensure).
func (c *chunkCache) get() uint64 {
	a := c.addrs[c.head]
	c.head = c.slot(1)
	c.n--
	return a
}

// getNewest takes the chunk freed last, for a copy into it: it is the
// likeliest to be in the CPU's caches still (writing a cold chunk costs
// a miss per cache line); the caller made sure there is one (ensure).
func (c *chunkCache) getNewest() uint64 {
	c.n--
	return c.addrs[c.slot(c.n)]
}

// drain gives everything back to g.
func (c *chunkCache) drain(g *UMEMGroup) {
	c.giveOldest(g, c.n)
	c.head = 0
}

// rxLender is a socket's receive side as a packet.Lender: Recv lends each
// received chunk to the buffer it delivers (packet.Buffer.Lend, token =
// the chunk's address), and Return puts it in the receive cache, from
// which Recv tops up the fill ring. A loan another member's Send takes
// over (handedOver) comes back through that socket's completion ring
// instead.
//
// A lent buffer comes from the pool of the goroutine that called Recv
// and stays on it (package netdev's contract): Return and handedOver run
// on that goroutine, which owns cache and lent, with no atomics. After
// the socket closes (closed, set by Close, which must not race with
// them), the chunks go to the group, which keeps the memory mapped until
// the last one is back.
type rxLender struct {
	group  *UMEMGroup
	mem    []byte // the group's memory
	chunk  uint64
	cache  chunkCache
	lent   int // loans out
	closed atomic.Bool
}

var _ packet.Lender = (*rxLender)(nil)

// Return takes a loan back when its buffer returns to its pool.
func (l *rxLender) Return(token int) {
	if l.closed.Load() {
		l.group.returnOrphan(uint64(token), true)
		return
	}
	l.lent--
	l.cache.put(l.group, uint64(token))
}

// handedOver records that a member's Send put the chunk in its transmit
// ring: the completion ring gives it back to the group.
func (l *rxLender) handedOver() {
	if l.closed.Load() {
		l.group.returnOrphan(0, false)
		return
	}
	l.lent--
}
