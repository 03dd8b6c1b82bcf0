package netdev

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// MemoryBudget bounds the memory that devices reserve for their receive
// rings, machine-wide: the datapath makes one and hands it to every device
// it opens. Each ring joins with its minimum, reserved whatever the budget
// says (Join: a port must be able to receive), and reserves anything
// beyond that only within the limit (Reserve, which grants part of a
// request when only part is left); Share is an equal part of the limit
// per ring. Rings release what they reserved when they shrink (Release)
// or close (Leave). A ring made ahead of time for a device not yet known
// (afpacket's spare sockets) is reserved with Reserve, and the device
// that takes it becomes its holder with Adopt.
//
// It also bounds how many new rings are being allocated at once
// (StartResize, MaxConcurrentResizes), so that a change that makes every
// port want a new ring (userspace-sock-buf-size) allocates them a few at
// a time, not all at once.
//
// All methods may be called from any goroutine; none allocates, and only
// StartResize blocks. A nil *MemoryBudget is an unlimited budget that
// does not bound resizes.
type MemoryBudget struct {
	limit   atomic.Int64
	used    atomic.Int64
	holders atomic.Int64  // rings that joined (Join) and did not leave
	resizes chan struct{} // a token per resize being prepared
}

// MaxConcurrentResizes is how many new rings are allocated at once under
// one budget.
const MaxConcurrentResizes = 2

// Bounds of the default receive-ring budget (DefaultRxRingBudget).
const (
	MinDefaultRxRingBudget = 64 << 20
	MaxDefaultRxRingBudget = 4 << 30
)

// NewMemoryBudget returns a budget of limit bytes (<= 0: DefaultRxRingBudget).
func NewMemoryBudget(limit int64) *MemoryBudget {
	b := &MemoryBudget{resizes: make(chan struct{}, MaxConcurrentResizes)}
	b.SetLimit(limit)
	return b
}

// DefaultRxRingBudget is the budget for all receive rings when
// other_config:gvs-rx-ring-budget is not set: 1/16 of the machine's
// memory, at least 64 MiB and at most 4 GiB. A sixteenth leaves the
// machine's memory to its workloads (1.5 GiB on a 24 GiB host is room for
// 24 ports at the 64 MiB a ring grows to at most, or 6,000 idle ones),
// and the floor keeps a small VM able to grow a few rings.
func DefaultRxRingBudget() int64 {
	total, err := MemTotal()
	if err != nil {
		return MinDefaultRxRingBudget * 4
	}
	return min(max(total/16, MinDefaultRxRingBudget), MaxDefaultRxRingBudget)
}

// MemTotal reads the machine's memory (MemTotal in /proc/meminfo), in bytes.
func MemTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/meminfo: MemTotal %q: %w", rest, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/meminfo: no MemTotal")
}

// SetLimit changes the limit (<= 0: DefaultRxRingBudget). Reservations
// above a lowered limit stay until their holders release them; devices
// see Over and shrink what they can.
func (b *MemoryBudget) SetLimit(limit int64) {
	if limit <= 0 {
		limit = DefaultRxRingBudget()
	}
	b.limit.Store(limit)
}

// Limit is the budget in bytes (0 for a nil, unlimited budget).
func (b *MemoryBudget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit.Load()
}

// Used is what is reserved now; it may exceed Limit by minimum
// reservations or after the limit was lowered.
func (b *MemoryBudget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Over reports whether more is reserved than the limit allows.
func (b *MemoryBudget) Over() bool {
	return b != nil && b.used.Load() > b.limit.Load()
}

// Join counts one more holder (a ring) and reserves its minimum of n
// bytes whatever is left: a port must be able to receive.
func (b *MemoryBudget) Join(n int64) {
	if b != nil {
		b.holders.Add(1)
		b.used.Add(max(n, 0))
	}
}

// Adopt counts one more holder whose minimum was reserved already
// (Reserve) by someone who hands it over: a ring made ahead of time for a
// device that takes it later. Unlike Release then Join, no window opens
// in which the bytes are free for others. The holder leaves with Leave.
func (b *MemoryBudget) Adopt() {
	if b != nil {
		b.holders.Add(1)
	}
}

// Leave releases n bytes and counts one holder fewer.
func (b *MemoryBudget) Leave(n int64) {
	if b != nil {
		b.holders.Add(-1)
		b.used.Add(-max(n, 0))
	}
}

// Share is an equal part of the limit for each holder: what a ring may
// take when every ring asks at once (userspace-sock-buf-size). A nil
// budget has no bound.
func (b *MemoryBudget) Share() int64 {
	if b == nil {
		return 1 << 62
	}
	return b.limit.Load() / max(b.holders.Load(), 1)
}

// Reserve reserves up to n bytes within the limit and returns how many it
// granted: n, part of it, or 0 when the budget is spent.
func (b *MemoryBudget) Reserve(n int64) int64 {
	if b == nil {
		return max(n, 0)
	}
	if n <= 0 {
		return 0
	}
	for {
		used := b.used.Load()
		grant := min(n, b.limit.Load()-used)
		if grant <= 0 {
			return 0
		}
		if b.used.CompareAndSwap(used, used+grant) {
			return grant
		}
	}
}

// Release gives back n bytes reserved earlier.
func (b *MemoryBudget) Release(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
	}
}

// StartResize waits until fewer than MaxConcurrentResizes rings are being
// prepared, and counts one more; EndResize counts it done. Call them on
// the goroutine that allocates the ring, never on a PMD.
func (b *MemoryBudget) StartResize() {
	if b != nil {
		b.resizes <- struct{}{}
	}
}

// EndResize ends what StartResize started.
func (b *MemoryBudget) EndResize() {
	if b != nil {
		<-b.resizes
	}
}

// PollFDRenewer is a device whose PollFD(q) keeps its number but may come
// to refer to a new file (afpacket: a resized ring's new socket, dup3'd
// onto the old descriptor). poll(2) users need not care; an epoll set,
// which registers files, must add the descriptor again when the
// generation changes. PollFDGeneration may be called from any goroutine.
type PollFDRenewer interface {
	PollFDGeneration(q int) uint64
}

// Housekeeper is a device with upkeep of a receive queue that Recv does
// only every so many calls while packets flow (afpacket: deciding a
// ring's size, handing over a prepared ring): a datapath that stops
// calling Recv on idle queues calls Housekeep for each of them about once
// a second instead, on the queue's polling goroutine.
type Housekeeper interface {
	Housekeep(q int)
}

// RxRingMemory is a device whose receive queues own memory of their own
// beside the packet pools (AF_PACKET rings), for memory/show and metrics.
// RxRingBytes may be called from any goroutine.
type RxRingMemory interface {
	// RxRingBytes is the memory of the device's receive rings in
	// effect now, summed over its queues.
	RxRingBytes() int64
}
