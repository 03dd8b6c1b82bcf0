package dpif

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"gvs/dpif/conntrack"
	"gvs/netdev"
	"gvs/packet"
)

// DefaultSpinTime is how long an idle PMD polls before it sleeps: about
// one empty pass over its queues. On a machine with few cores the PMD
// shares the CPUs with the hosts it serves, and every microsecond it
// spins is taken from them: through gvs-vswitchd on 2 cores (make bench
// QUICK, interleaved A/B pairs) TCP went from 8.8-9.6 Gbit/s with 50 µs
// to 10.1-11.9 with 2 µs, at 0.06 instead of 0.09 CPU-seconds per Gbit.
// The price is latency under light load: 1-byte UDP request/response
// 9.0-11.9k/s against 11.1-13.9k/s (ping unchanged, 305-463 µs).
const DefaultSpinTime = 2 * time.Microsecond

// Config configures a Datapath; zero fields take the defaults.
type Config struct {
	Logger *slog.Logger
	// PMDCPUMask, as Open vSwitch's other_config:pmd-cpu-mask: a hex CPU
	// mask ("0x6" or "6"); one PMD goroutine per set bit, its OS thread
	// pinned to that CPU. Empty: PMDs unpinned.
	PMDCPUMask string
	// PMDs is the number of unpinned PMDs when PMDCPUMask is empty;
	// default runtime.NumCPU()-1, at least 1.
	PMDs int
	// PoolBuffers and FrameSize size each PMD's buffer pool.
	PoolBuffers int
	FrameSize   int
	// EMCEntries per PMD; default DefaultEMCEntries; negative disables.
	EMCEntries int
	// EMCInsertInvProb, as emc-insert-inv-prob: a megaflow hit enters
	// the EMC with probability 1/N; default 100, 1 means always.
	EMCInsertInvProb int
	// MaxIdle: a flow with no packets for this long is deleted (Open
	// vSwitch's default max-idle, 10 s).
	MaxIdle time.Duration
	// RevalidateInterval: how often the revalidator looks for idle flows;
	// default 500 ms.
	RevalidateInterval time.Duration
	// SpinTime: how long an idle PMD keeps polling before it sleeps;
	// default DefaultSpinTime.
	SpinTime time.Duration
	// MaxSleep (pmd-maxsleep): the longest a sleeping PMD waits before
	// polling queues that have no PollFD; default 1 ms. When every queue
	// of a PMD has a PollFD the PMD sleeps in epoll_wait(2) until a
	// packet or a reconfiguration wakes it (at most IdleWakeup, for
	// housekeeping).
	MaxSleep time.Duration
	// SlowQueueLen bounds each PMD's queue of upcalls for slow work.
	SlowQueueLen int
	// RxqAssign (pmd-rxq-assign): how RebalanceRxQueues assigns receive
	// queues to PMDs: "roundrobin", "cycles" (default) or "group".
	RxqAssign string
	// RxqInterval: how often receive queue load is sampled; the load is
	// measured over the last RxqIntervals samples. Default 5 s, as Open
	// vSwitch; sampled by the revalidator, so no finer than
	// RevalidateInterval.
	RxqInterval time.Duration

	// Conntrack configures the datapath's connection tracker (the ct
	// action): its maximum number of connections, TCP liberal mode.
	Conntrack conntrack.Config
	// Tracker, when set, is used instead of a tracker of the
	// datapath's own (tests: a fake). It stays the caller's: the
	// datapath neither starts nor closes it.
	Tracker conntrack.Conntrack

	// manual (tests in this package): start no PMD goroutines; the test
	// drives pmd.pollOnce itself.
	manual bool
	// sweep (tests in this package): how often a PMD polls every queue
	// even if epoll reported none; default sweepInterval.
	sweep time.Duration
}

// IdleWakeup bounds a PMD's sleep when all its queues have a PollFD.
const IdleWakeup = 100 * time.Millisecond

// sweepInterval is how often a PMD that polls only the queues epoll
// reports polls every queue once anyway, asleep or busy: a device's Recv
// also does its housekeeping (an AF_PACKET ring resize waiting for the
// ring to drain, a pending socket error to clear), which must not wait
// for a packet that may never come. A memory read per idle queue per
// second.
const sweepInterval = time.Second

func (c *Config) setDefaults() error {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.PMDs <= 0 {
		c.PMDs = max(runtime.NumCPU()-1, 1)
	}
	if c.EMCEntries == 0 {
		c.EMCEntries = DefaultEMCEntries
	}
	if c.EMCInsertInvProb <= 0 {
		c.EMCInsertInvProb = 100
	}
	if c.MaxIdle <= 0 {
		c.MaxIdle = 10 * time.Second
	}
	if c.RevalidateInterval <= 0 {
		c.RevalidateInterval = 500 * time.Millisecond
	}
	if c.SpinTime <= 0 {
		c.SpinTime = DefaultSpinTime
	}
	if c.MaxSleep <= 0 {
		c.MaxSleep = time.Millisecond
	}
	if c.SlowQueueLen <= 0 {
		c.SlowQueueLen = 256
	}
	alg, err := checkRxqAssign(c.RxqAssign)
	if err != nil {
		return err
	}
	c.RxqAssign = alg
	if c.RxqInterval <= 0 {
		c.RxqInterval = rxqIntervalDefault
	}
	if c.sweep <= 0 {
		c.sweep = sweepInterval
	}
	return nil
}

// Datapath is a userspace datapath: ports, PMD goroutines, flow caches.
// See the package documentation for its concurrency contract.
type Datapath struct {
	cfg   Config
	log   *slog.Logger
	epoch time.Time

	cls    *classifier
	flowMu sync.Mutex // the one flow writer
	nflows atomic.Int64

	handler atomic.Pointer[handlerBox]

	meterMu sync.Mutex // meter changes (meter.go)
	meters  atomic.Pointer[meterTable]

	portMu sync.Mutex // port changes; taken before nonPMD.mu and flowMu
	ports  atomic.Pointer[portTable]
	assign map[rxqID]int // rx queue -> PMD index (-1: moving); changed by PortAdd and RebalanceRxQueues
	planEp uint64
	load   rxqLoad

	// PMDs change with SetPMDConfig (pmdconfig.go): pmds is the current
	// set, nslots the statistics slots new flows get (PMDs + 1, under
	// flowMu), pmdStop and pmdWG the running generation's stop signal and
	// goroutines. maxSleep is Config.MaxSleep in ns, read by the PMDs.
	pmds     atomic.Pointer[pmdSet]
	nslots   int
	pmdStop  chan struct{}
	pmdWG    sync.WaitGroup
	maxSleep atomic.Int64
	nonPMD   struct {
		mu  sync.Mutex
		ctx execCtx
	}

	// ct is the connection tracker the ct action runs packets through;
	// ctClose closes it when the datapath made it (nil for
	// Config.Tracker).
	ct      conntrack.Conntrack
	ctClose func()

	stop     chan struct{}
	wg       sync.WaitGroup
	closed   bool
	closeErr error
}

type handlerBox struct{ h UpcallHandler }

// ErrClosed is returned by operations on a closed datapath.
var ErrClosed = errors.New("dpif: datapath closed")

// New starts a datapath with no ports: its PMD goroutines (idle until
// ports arrive), their slow-upcall goroutines and the revalidator.
func New(cfg Config) (*Datapath, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if _, err := parseCPUMask(cfg.PMDCPUMask); err != nil {
		return nil, err
	}
	dp := &Datapath{
		cfg:    cfg,
		log:    cfg.Logger,
		epoch:  time.Now(),
		cls:    newClassifier(rand.Uint64()),
		assign: make(map[rxqID]int),
		stop:   make(chan struct{}),
	}
	dp.ports.Store(&portTable{idx: map[uint32]int32{}})
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: cfg.PoolBuffers, FrameSize: cfg.FrameSize})
	if err != nil {
		return nil, err
	}
	if cfg.Tracker != nil {
		dp.ct = cfg.Tracker
	} else {
		dp.ct, dp.ctClose = newTracker(cfg.Conntrack)
	}
	dp.nonPMD.ctx = execCtx{dp: dp, pool: pool}
	dp.pmds.Store(&pmdSet{retired: PMDStats{PMD: -1, CPU: -1}})
	dp.maxSleep.Store(int64(cfg.MaxSleep))
	if err := dp.startPMDs(); err != nil {
		if dp.ctClose != nil {
			dp.ctClose()
		}
		return nil, err
	}
	dp.wg.Add(1)
	go dp.revalidate()
	return dp, nil
}

// startPMDs creates and starts the first PMDs, those dp.cfg asks for
// (New; SetPMDConfig changes them later).
func (dp *Datapath) startPMDs() error {
	cpus, err := parseCPUMask(dp.cfg.PMDCPUMask)
	if err != nil {
		return err
	}
	n := dp.cfg.PMDs
	if len(cpus) > 0 {
		n = len(cpus)
	}
	var pmds []*pmd
	for i := range n {
		cpu := -1
		if len(cpus) > 0 {
			cpu = cpus[i]
		}
		p, err := newPMD(dp, i, cpu)
		if err != nil {
			for _, p := range pmds {
				p.closeFDs()
			}
			return err
		}
		pmds = append(pmds, p)
	}
	dp.flowMu.Lock()
	dp.nslots = n + 1
	dp.flowMu.Unlock()
	dp.nonPMD.mu.Lock()
	dp.nonPMD.ctx.slot = n
	dp.nonPMD.mu.Unlock()
	dp.pmdStop = make(chan struct{})
	for _, p := range pmds {
		p.stop = dp.pmdStop
	}
	dp.pmds.Store(&pmdSet{list: pmds, retired: dp.pmds.Load().retired})
	dp.publishPlans()
	if dp.cfg.manual {
		return nil
	}
	for _, p := range pmds {
		dp.pmdWG.Add(2)
		go p.run()
		go p.runSlow()
	}
	return nil
}

// stopPMDs stops the PMD and slow-upcall goroutines and waits for them.
// Caller holds portMu.
func (dp *Datapath) stopPMDs() {
	close(dp.pmdStop)
	for _, p := range dp.pmdList() {
		p.wake()
	}
	dp.pmdWG.Wait()
	for _, p := range dp.pmdList() {
		p.closeFDs()
	}
}

// pmdSet is the PMDs as published: the current ones, and the summed
// counters of those SetPMDConfig retired, swapped together so totals
// never count a PMD twice or not at all.
type pmdSet struct {
	list    []*pmd
	retired PMDStats
}

func (dp *Datapath) pmdList() []*pmd { return dp.pmds.Load().list }

// NumPMDs returns the number of PMD goroutines.
func (dp *Datapath) NumPMDs() int { return len(dp.pmdList()) }

// SetUpcallHandler sets who decides about packets that miss every flow;
// nil drops them (counted as lost upcalls).
func (dp *Datapath) SetUpcallHandler(h UpcallHandler) {
	if h == nil {
		dp.handler.Store(nil)
		return
	}
	dp.handler.Store(&handlerBox{h})
}

// Close stops the PMDs and the revalidator and closes every port's
// device. It returns the first device Close error.
func (dp *Datapath) Close() error {
	dp.portMu.Lock()
	defer dp.portMu.Unlock()
	if dp.closed {
		return dp.closeErr
	}
	dp.closed = true
	dp.stopPMDs()
	close(dp.stop)
	dp.wg.Wait()
	list := dp.ports.Load().list
	devs := make([]netdev.Device, len(list))
	for i, pt := range list {
		devs[i] = pt.dev
	}
	for i, err := range CloseDevices(devs) {
		if err != nil && dp.closeErr == nil {
			dp.closeErr = fmt.Errorf("close %s: %w", devs[i].Name(), err)
		}
	}
	dp.ports.Store(&portTable{idx: map[uint32]int32{}})
	// No PMD or non-PMD execution runs any more: the tracker can go.
	if dp.ctClose != nil {
		dp.ctClose()
	}
	return dp.closeErr
}

// Conntrack returns the datapath's connection tracker, for the control
// plane (dpctl conntrack commands, NXT_CT_FLUSH_ZONE, the reconciler's
// zone limits and timeout policies). It is safe to use concurrently with
// the PMDs; nil when the datapath has none.
func (dp *Datapath) Conntrack() conntrack.Conntrack { return dp.ct }

// now returns the datapath clock: monotonic nanoseconds since New.
func (dp *Datapath) now() int64 { return int64(time.Since(dp.epoch)) }

func (dp *Datapath) clockTime(ns int64) time.Time { return dp.epoch.Add(time.Duration(ns)) }
