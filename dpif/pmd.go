package dpif

import (
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"gvs/netdev"
	"gvs/packet"
)

// pmdPlan is what a PMD polls, published by the port writer.
type pmdPlan struct {
	epoch uint64
	ports *portTable
	rxqs  []rxq
}

type rxq struct {
	port      *port
	q         int
	fd        int  // PollFD, -1 if none
	slow      bool // Recv is a system call (Capabilities.RecvSyscall)
	flushesTx bool // Recv pushes out leftover transmits (Capabilities.RecvFlushesTx)
	// renewer is the device when its PollFD may come to refer to another
	// socket under the same number (netdev.PollFDRenewer: an afpacket
	// ring resize); nil otherwise.
	renewer netdev.PollFDRenewer
	// housekeeper is the device when it has upkeep to do on idle queues
	// (netdev.Housekeeper), called at each sweep; nil otherwise.
	housekeeper netdev.Housekeeper
}

// maxIdleShift bounds how many iterations a busy PMD skips a slow queue
// (rxq.slow) that keeps coming back empty: the skip doubles with every
// empty poll up to 2^maxIdleShift-1 = 31, and ends at the first packet.
// A read(2) on an idle tap costs as much as forwarding a small batch
// (measured: 10% of the switch's CPU with two afxdp ports and the
// bridge's internal port); the price is at most 31 iterations of added
// delay for the first packet on such a queue while other queues keep the
// PMD busy. A sleeping PMD is woken by the queue itself and polls it
// first thing, so a lone packet waits no longer than before.
const maxIdleShift = 5

// directPollMax is the most queues a busy PMD reads one by one every
// iteration. Reading an empty ring is a memory load; asking epoll which
// queues are ready is a system call that costs as much as a few dozen of
// them. So a PMD with more queues than this polls, while busy, only the
// queues epoll reported ready and not yet found empty, and asks epoll
// (without blocking) once per iteration for more.
const directPollMax = 32

// idlePoll is a PMD's own skip state for one queue of its plan.
type idlePoll struct {
	empties uint8 // empty polls in a row, up to maxIdleShift
	skip    uint8 // iterations left to skip
}

// ready is which queues of its plan a PMD polls: every queue (pollOnce),
// or, after a sleep and always while busy with more than directPollMax
// queues, those epoll reported ready (pollReady). Indices are into the
// plan's rxqs; the PMD goroutine alone uses it.
type ready struct {
	sparse bool              // poll only always and active
	fresh  bool              // active was just filled by a sleep: no need to ask epoll again
	allFDs bool              // every queue has a PollFD in the epoll set
	byFD   map[int32]int32   // PollFD -> first queue with it
	owners map[int32]fdOwner // PollFD -> the queue it was registered for
	sameFD []int32           // queue -> next queue with the same PollFD, or -1
	always []int32           // queues without a PollFD in the epoll set, or flushesTx: polled every time
	active []int32           // queues reported ready and not yet found empty
	listed []bool            // queue is in active, or in always
	// gens: queue -> the PollFD generation registered in the epoll set
	// (queues with a renewer only).
	gens []uint64
	// swept: datapath clock of the last pass over every queue.
	swept int64
}

// pmd is one poll-mode-driver goroutine with everything it owns: its
// buffer pool, exact-match cache, receive batch, output batches, upcall
// scratch space and counters. Only its own goroutine touches these; other
// goroutines see plan (written by the port writer), seen and stats
// (written by the PMD) through atomics.
type pmd struct {
	dp   *Datapath
	id   int
	cpu  int // -1: unpinned
	plan atomic.Pointer[pmdPlan]
	seen atomic.Uint64 // epoch of the plan in use
	stop chan struct{} // closed to stop this generation of PMDs

	pool *packet.Pool
	emc  *emc
	rx   packet.Batch
	ctx  execCtx
	cnt  pmdCounters // local counters, published into stats
	pub  pmdStatsPub
	now  int64
	idle []idlePoll // parallel to the plan's rxqs
	ready

	slow     chan *slowUpcall
	slowFree chan *slowUpcall

	sleeper
}

func newPMD(dp *Datapath, id, cpu int) (*pmd, error) {
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: dp.cfg.PoolBuffers, FrameSize: dp.cfg.FrameSize})
	if err != nil {
		return nil, err
	}
	p := &pmd{dp: dp, id: id, cpu: cpu, pool: pool}
	if dp.cfg.EMCEntries > 0 {
		p.emc = newEMC(dp.cfg.EMCEntries, uint32(dp.cfg.EMCInsertInvProb))
	}
	p.ctx = execCtx{dp: dp, pmd: p, slot: id, pool: pool}
	p.slow = make(chan *slowUpcall, dp.cfg.SlowQueueLen)
	p.slowFree = make(chan *slowUpcall, dp.cfg.SlowQueueLen)
	for range dp.cfg.SlowQueueLen {
		p.slowFree <- &slowUpcall{}
	}
	if err := p.sleeper.init(); err != nil {
		return nil, err
	}
	p.pub.poolFree.Store(int64(pool.Stats().Free))
	p.pub.poolSize.Store(int64(pool.Stats().Buffers))
	return p, nil
}

// run is the PMD goroutine.
func (p *pmd) run() {
	defer p.dp.pmdWG.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if p.cpu >= 0 {
		if err := pinToCPU(p.cpu); err != nil {
			p.dp.log.Warn("cannot pin PMD", "pmd", p.id, "cpu", p.cpu, "err", err)
		}
	}
	var plan *pmdPlan
	// One clock read per iteration (datapath clock, monotonic only): an
	// iteration ends when the next begins, and a busy one at the end of
	// its last busy queue, which pollOnce has read already.
	now := p.dp.now()
	lastBusy := now
	spin := int64(p.dp.cfg.SpinTime)
	idleIters := 0
	for {
		select {
		case <-p.stop:
			p.publish()
			return
		default:
		}
		plan = p.takePlan(plan)
		start := now
		p.now = start
		got := p.poll(plan)
		p.cnt.iterations++
		if got > 0 {
			now = p.now
			p.cnt.busyNs += uint64(max(now-start, 0))
			lastBusy = now
			idleIters = 0
			p.publish()
			continue
		}
		now = p.dp.now()
		p.cnt.idleNs += uint64(max(now-start, 0))
		idleIters++
		if now-lastBusy < spin {
			if idleIters%1024 == 0 {
				p.publish()
			}
			continue
		}
		p.publish()
		timeout := IdleWakeup
		if !p.allFDs {
			timeout = time.Duration(p.dp.maxSleep.Load())
		}
		slept := p.sleep(timeout)
		p.cnt.sleepNs += uint64(slept)
		p.cnt.idleNs += uint64(slept)
		now = p.dp.now()
		lastBusy = now - spin/2 // spin a little after waking
	}
}

// takePlan switches to the latest published plan if it is not cur.
func (p *pmd) takePlan(cur *pmdPlan) *pmdPlan {
	np := p.plan.Load()
	if np == cur {
		return cur
	}
	p.ctx.setPorts(np.ports)
	p.idle = slices.Grow(p.idle[:0], len(np.rxqs))[:len(np.rxqs)]
	clear(p.idle)
	p.emc.clear()
	p.indexPlan(np)
	p.seen.Store(np.epoch)
	return np
}

// indexPlan points the epoll set at plan's queues and indexes them by
// PollFD. The first pass on a new plan polls every queue.
func (p *pmd) indexPlan(plan *pmdPlan) {
	r := &p.ready
	n := len(plan.rxqs)
	if r.byFD == nil {
		r.byFD, r.owners = make(map[int32]int32), make(map[int32]fdOwner)
	}
	clear(r.byFD)
	clear(r.owners)
	r.sameFD = slices.Grow(r.sameFD[:0], n)[:n]
	r.listed = slices.Grow(r.listed[:0], n)[:n]
	clear(r.listed)
	r.gens = slices.Grow(r.gens[:0], n)[:n]
	// active can hold every queue: filling it never allocates.
	r.always, r.active = r.always[:0], slices.Grow(r.active[:0], n)
	last := make(map[int32]int32) // PollFD -> last queue with it
	noFD := 0
	for i, q := range plan.rxqs {
		r.sameFD[i] = -1
		r.gens[i] = 0
		if q.renewer != nil {
			r.gens[i] = q.renewer.PollFDGeneration(q.q)
		}
		if q.flushesTx || q.fd < 0 {
			r.always = append(r.always, int32(i))
			r.listed[i] = true // never listed as ready as well
		}
		if q.fd < 0 {
			noFD++
			continue
		}
		fd := int32(q.fd)
		if j, ok := last[fd]; ok {
			r.sameFD[j] = int32(i)
		} else {
			r.byFD[fd] = int32(i)
			r.owners[fd] = &q.port.rxqs[q.q]
		}
		last[fd] = int32(i)
	}
	refused, err := p.sleeper.setFDs(r.owners)
	for _, fd := range refused {
		for i := r.byFD[fd]; i >= 0; i = r.sameFD[i] {
			if !r.listed[i] {
				r.always = append(r.always, i)
				r.listed[i] = true
			}
			noFD++
		}
		delete(r.byFD, fd)
	}
	if err != nil {
		p.dp.log.Warn("cannot wait for queues in epoll, polling them every time", "pmd", p.id,
			"descriptors", len(refused), "err", err)
	}
	slices.Sort(r.always)
	r.allFDs = noFD == 0
	r.sparse, r.fresh = false, false
}

// poll polls the queues due in this iteration and returns how many
// packets it received: every queue of a small plan while busy, otherwise
// those epoll reported ready (see ready).
func (p *pmd) poll(plan *pmdPlan) int {
	r := &p.ready
	sweep := p.now-r.swept >= int64(p.dp.cfg.sweep)
	if sweep {
		r.sparse = false // every queue once in a while (sweepInterval)
	}
	if !r.sparse {
		r.swept = p.now
		got := p.pollOnce(plan)
		if sweep {
			p.housekeep(plan)
		}
		// Queues left with packets stay ready for epoll.
		r.sparse = len(plan.rxqs) > directPollMax
		return got
	}
	if !r.fresh {
		p.collect(p.sleeper.wait(0))
	}
	r.fresh = false
	got := p.pollReady(plan)
	if got > 0 && len(plan.rxqs) <= directPollMax {
		r.sparse = false // busy with few queues: read them all
	}
	return got
}

// sleep waits up to d for a queue to become ready or a wake-up, makes
// the next iteration poll just the queues that are ready (and those
// polled every time), and returns how long it slept.
func (p *pmd) sleep(d time.Duration) time.Duration {
	r := &p.ready
	for _, i := range r.active {
		r.listed[i] = false
	}
	r.active = r.active[:0]
	start := time.Now()
	evs := p.sleeper.wait(d)
	slept := time.Since(start)
	// A queue that woke us (collect) or is polled every time is polled
	// at once; with few queues, all are, in the passes that follow.
	if len(p.idle) <= directPollMax {
		clear(p.idle)
	} else {
		for _, i := range r.always {
			p.idle[i] = idlePoll{}
		}
	}
	p.collect(evs)
	r.sparse, r.fresh = true, true
	return slept
}

// collect adds the queues behind the ready descriptors evs to the active
// list.
func (p *pmd) collect(evs []unix.EpollEvent) {
	r := &p.ready
	for _, ev := range evs {
		first, ok := r.byFD[ev.Fd]
		if !ok {
			continue // left the plan (and the set) since
		}
		for i := first; i >= 0; i = r.sameFD[i] {
			if !r.listed[i] {
				r.listed[i] = true
				r.active = append(r.active, i)
				p.idle[i] = idlePoll{}
			}
		}
	}
}

// pollOnce receives one batch from every assigned queue and processes
// it; it returns the number of packets received. The time from p.now (the
// start of the iteration) or the end of the previous busy queue to the
// end of a busy queue's batch is that queue's busy time: one clock read
// per non-empty batch.
func (p *pmd) pollOnce(plan *pmdPlan) int {
	total := 0
	t0 := p.now
	for i := range plan.rxqs {
		total += p.pollQueue(plan, i, &t0)
	}
	return total
}

// pollReady is pollOnce for the queues polled every time (always) and
// those in the active list; a queue found empty leaves the list until
// epoll reports it again.
func (p *pmd) pollReady(plan *pmdPlan) int {
	r := &p.ready
	total := 0
	t0 := p.now
	for _, i := range r.always {
		total += p.pollQueue(plan, int(i), &t0)
	}
	kept := r.active[:0]
	for _, i := range r.active {
		n := p.pollQueue(plan, int(i), &t0)
		if n == 0 {
			r.listed[i] = false
			continue
		}
		total += n
		kept = append(kept, i)
	}
	r.active = kept
	return total
}

// housekeep gives every queue of plan whose device has upkeep to do
// (netdev.Housekeeper) its turn: at each sweep, so that upkeep Recv does
// only now and then while packets flow also happens on queues the PMD no
// longer polls while they are idle.
func (p *pmd) housekeep(plan *pmdPlan) {
	for i := range plan.rxqs {
		if rq := &plan.rxqs[i]; rq.housekeeper != nil {
			rq.housekeeper.Housekeep(rq.q)
			p.checkRenewed(rq, i)
		}
	}
}

// checkRenewed registers queue i's PollFD in the epoll set again when its
// device put a new socket under the number (it does so only inside Recv
// or Housekeep, on this goroutine): the registration of the old one is
// gone (or stale), and the new one must be in before the PMD may sleep.
func (p *pmd) checkRenewed(rq *rxq, i int) {
	if rq.renewer == nil || rq.fd < 0 {
		return
	}
	if g := rq.renewer.PollFDGeneration(rq.q); g != p.ready.gens[i] {
		p.ready.gens[i] = g
		p.renewFD(int32(rq.fd))
	}
}

// renewFD registers fd again after its device made it refer to a new
// socket, unless the queue behind it is polled every time anyway.
func (p *pmd) renewFD(fd int32) {
	r := &p.ready
	if _, ok := r.byFD[fd]; !ok {
		return
	}
	if err := p.sleeper.renew(fd); err != nil {
		p.dp.log.Warn("cannot wait for a renewed queue descriptor in epoll, polling it every time", "pmd", p.id, "fd", fd, "err", err)
		for i := r.byFD[fd]; i >= 0; i = r.sameFD[i] {
			if !r.listed[i] {
				r.always = append(r.always, i) // rare: may allocate once
				r.listed[i] = true
			}
		}
		slices.Sort(r.always)
		delete(r.byFD, fd)
		r.allFDs = false
	}
}

// pollQueue receives one batch from queue i of plan, unless a busy PMD
// is skipping it (idlePoll), and processes it; *t0 is where the queue's
// busy time starts, moved to the end of its batch.
func (p *pmd) pollQueue(plan *pmdPlan, i int, t0 *int64) int {
	rq, idle := &plan.rxqs[i], &p.idle[i]
	if idle.skip > 0 {
		idle.skip--
		return 0
	}
	exhausted := p.pool.Exhausted()
	n, _ := rq.port.dev.Recv(rq.q, &p.rx, p.pool)
	if e := p.pool.Exhausted(); e != exhausted {
		rq.port.stats[p.id].rxNoBuffer.Add(e - exhausted)
	}
	p.checkRenewed(rq, i)
	if n == 0 {
		if rq.slow {
			idle.empties = min(idle.empties+1, maxIdleShift)
			idle.skip = 1<<idle.empties - 1
		}
		return 0
	}
	idle.empties = 0
	p.processBatch(rq.port)
	t := p.dp.now()
	rc := &rq.port.rxqs[rq.q]
	rc.packets.Add(uint64(n))
	rc.busyNs.Add(uint64(max(t-*t0, 0)))
	*t0, p.now = t, t
	return n
}

// processBatch classifies and executes every packet of p.rx, received on
// port in, then sends the accumulated output batches.
func (p *pmd) processBatch(in *port) {
	p.cnt.rxPackets += uint64(p.rx.Len())
	p.cnt.rxBatches++
	for _, b := range p.rx.Buffers() {
		b.InPort = in.no
		if b.StrippedVLAN.Present() && !b.RestoreVLAN() {
			p.pool.Put(b)
			p.cnt.rxDrops++
			in.stats[p.id].rxDrops.Add(1)
			continue
		}
		p.cnt.parse[b.Parse()]++
		p.classify(b)
	}
	p.rx.Reset() // every buffer was handed on
	p.ctx.flush()
}

// classify finds b's flow (EMC, then megaflows), counts the hit and
// executes the flow's actions, or hands a miss to the handler. It owns b.
// Received and recirculated packets go through it alike.
func (p *pmd) classify(b *packet.Buffer) {
	k := &b.Key
	var h uint64
	var f *flow
	if p.emc != nil {
		h = k.Hash()
		f = p.emc.lookup(k, h)
	}
	probed := 0
	if f != nil {
		p.cnt.emcHits++
	} else if f, probed = p.dp.cls.lookup(k); f != nil {
		p.cnt.megaflowHits++
		p.cnt.subtableLookups += uint64(probed)
		p.emc.insert(k, h, f)
	} else {
		p.cnt.misses++
		p.upcall(b)
		return
	}
	f.slot(p.id).hit(1, uint64(b.Len()), p.now, k.TCPFlags)
	p.ctx.execute(b, *f.actions.Load())
}

// waitEpoch blocks until the PMD has taken a plan of epoch ep or later,
// or the datapath stops.
func (p *pmd) waitEpoch(ep uint64, stop <-chan struct{}) {
	for p.seen.Load() < ep {
		select {
		case <-stop:
			return
		default:
		}
		p.wake()
		time.Sleep(20 * time.Microsecond)
	}
}
