package afpacket

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"gvs/netdev"
)

// DefaultSpares is how many ready sockets a SparePool keeps: enough for
// ports added one call after another, which is where the wait hurts
// (ports opened together by one AddPorts wait for their grace periods
// concurrently, so a few spares more would buy them little).
const DefaultSpares = 2

// spareMTU is the MTU the spares' slots are sized for: the common one.
// Any MTU whose slot size comes out the same takes a spare too.
const spareMTU = 1500

// SpareConfig makes a SparePool.
type SpareConfig struct {
	// Spares is how many ready sockets to keep; 0 means DefaultSpares.
	Spares int
	// Budget is the ring budget the devices that take the spares
	// reserve from (nil: unlimited). A spare's ring is reserved from it
	// while the spare waits; a spare is made only within its limit.
	Budget *netdev.MemoryBudget
	Logger *slog.Logger // nil: slog.Default()
}

// SparePool keeps a few AF_PACKET sockets of the common queue's shape
// ready (see the package documentation, "Spare sockets"): the default
// receive mode (TPACKET_V2) with its options set and the minimum ring of
// MTU-sized slots mapped, but tied to no device. Open of a queue of that
// shape (Config.Spares) takes one and only adds the membership and binds
// it; setting up a ring waits for an RCU grace period in the kernel
// (packet_set_ring calls synchronize_net even on a fresh socket), which
// binding a socket that is not yet receiving does not.
//
// A goroutine of the pool's own refills it after every take (and after
// every Open that found it empty), one socket at a time, and exits on
// Close. All methods may be called from any goroutine. The sockets are
// made in the network namespace of the thread the refilling goroutine
// runs on, as Open's are on its caller's: the daemon's.
type SparePool struct {
	cfg    Config    // the spares' Config: defaults, TPACKET_V2, spareMTU
	shape  ringShape // the spares' ring
	target int
	budget *netdev.MemoryBudget
	log    *slog.Logger

	mu     sync.Mutex // guards spares and closed
	spares []spareSocket
	closed bool

	wake chan struct{} // one pending refill request
	done chan struct{} // closed by Close
	wg   sync.WaitGroup

	taken, missed, failed atomic.Uint64
}

// spareSocket is one ready socket and its mapped ring.
type spareSocket struct {
	fd   int
	ring []byte
}

func (s spareSocket) close() { closeSocket(s.fd, s.ring) }

// errSpareBudget: the ring budget has no room for a spare.
var errSpareBudget = errors.New("receive ring budget spent")

// NewSparePool returns a pool and starts filling it in the background.
func NewSparePool(cfg SpareConfig) *SparePool {
	if cfg.Spares <= 0 {
		cfg.Spares = DefaultSpares
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := Config{RxMode: RxRingV2, RxQueues: 1, Logger: cfg.Logger}.withDefaults()
	c.mtu = spareMTU
	p := &SparePool{cfg: c, shape: c.initialShape(0), target: cfg.Spares, budget: cfg.Budget, log: cfg.Logger,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	p.wg.Add(1)
	go p.refill()
	p.kick()
	return p
}

// fits reports whether a queue of cfg (with defaults, its MTU set) whose
// ring opens with shape can use a spare: one queue (a fanout group's
// sockets are opened together), the spares' receive mode, the same ring
// (which covers the MTU, MinRingSize and V2FrameSize) and the same
// budget (the ring's reservation passes to the taker).
func (p *SparePool) fits(cfg Config, shape ringShape) bool {
	return cfg.RxQueues == 1 && cfg.RxMode == p.cfg.RxMode && shape == p.shape && cfg.Budget == p.budget
}

// take hands out a spare for a queue of cfg opening with shape, and asks
// for a refill; ok is false when none fits or none is ready (nil pool:
// never). The spare's ring stays reserved in the budget: the taker
// adopts the reservation (MemoryBudget.Adopt) instead of joining, and
// owns the socket and ring (closing them on failure, releasing the
// reservation with Leave as any ring).
func (p *SparePool) take(cfg Config, shape ringShape) (fd int, ring []byte, ok bool) {
	if p == nil || !p.fits(cfg, shape) {
		return -1, nil, false
	}
	p.mu.Lock()
	n := len(p.spares)
	closed := p.closed
	var s spareSocket
	if n > 0 && !closed {
		s = p.spares[n-1]
		p.spares = p.spares[:n-1]
	}
	p.mu.Unlock()
	if closed {
		return -1, nil, false
	}
	p.kick()
	if n == 0 {
		p.missed.Add(1)
		return -1, nil, false
	}
	p.taken.Add(1)
	return s.fd, s.ring, true
}

// kick asks the refilling goroutine to top the pool up.
func (p *SparePool) kick() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// refill keeps the pool at its target until Close. A spare it cannot make
// (the budget spent, the kernel out of memory) is tried again at the next
// kick, so a failing kernel costs one attempt per Open, not a loop.
func (p *SparePool) refill() {
	defer p.wg.Done()
	for {
		select {
		case <-p.wake:
		case <-p.done:
			return
		}
		for p.short() {
			s, err := p.make()
			if err != nil {
				if p.failed.Add(1) == 1 || !errors.Is(err, errSpareBudget) {
					p.log.Debug("afpacket: no spare socket made", "err", err)
				}
				break
			}
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				s.close()
				p.budget.Release(int64(p.shape.bytes()))
				return
			}
			p.spares = append(p.spares, s)
			p.mu.Unlock()
		}
	}
}

// short reports whether the pool holds fewer spares than its target.
func (p *SparePool) short() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed && len(p.spares) < p.target
}

// make reserves a ring from the budget and makes one spare.
func (p *SparePool) make() (spareSocket, error) {
	n := int64(p.shape.bytes())
	if got := p.budget.Reserve(n); got < n {
		p.budget.Release(got)
		return spareSocket{}, fmt.Errorf("%w (a spare takes %d bytes)", errSpareBudget, n)
	}
	fd, ring, err := newUnboundSocket(p.cfg, p.shape)
	if err != nil {
		p.budget.Release(n)
		return spareSocket{}, err
	}
	return spareSocket{fd: fd, ring: ring}, nil
}

// Ready is how many spares the pool holds now.
func (p *SparePool) Ready() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.spares)
}

// SpareCounts are a pool's counters since it was made.
type SpareCounts struct {
	Taken  uint64 // queues opened from a spare
	Missed uint64 // queues of the spares' shape that found none ready
	Failed uint64 // spares the pool could not make (budget, kernel)
}

// Counts returns the pool's counters.
func (p *SparePool) Counts() SpareCounts {
	if p == nil {
		return SpareCounts{}
	}
	return SpareCounts{Taken: p.taken.Load(), Missed: p.missed.Load(), Failed: p.failed.Load()}
}

// Close stops the refilling goroutine, closes the spares and gives their
// rings back to the budget. Devices opened from spares are not affected;
// later takes find none.
func (p *SparePool) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	spares := p.spares
	p.spares = nil
	p.mu.Unlock()
	close(p.done)
	p.wg.Wait()
	for _, s := range spares {
		s.close()
		p.budget.Release(int64(p.shape.bytes()))
	}
	return nil
}
