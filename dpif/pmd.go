package dpif

import (
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"gvs/packet"
)

// pmdPlan is what a PMD polls, published by the port writer.
type pmdPlan struct {
	epoch uint64
	ports *portTable
	rxqs  []rxq
}

type rxq struct {
	port *port
	q    int
	fd   int  // PollFD, -1 if none
	slow bool // Recv is a system call (Capabilities.RecvSyscall)
}

// maxIdleShift bounds how many iterations a busy PMD skips a slow queue
// (rxq.slow) that keeps coming back empty: the skip doubles with every
// empty poll up to 2^maxIdleShift-1 = 31, and ends at the first packet.
// A read(2) on an idle tap costs as much as forwarding a small batch
// (measured: 10% of the switch's CPU with two afxdp ports and the
// bridge's internal port); the price is at most 31 iterations of added
// delay for the first packet on such a queue while other queues keep the
// PMD busy. An idle PMD sleeps in ppoll on every queue and polls them all
// when it wakes, so a lone packet waits no longer than before.
const maxIdleShift = 5

// idlePoll is a PMD's own skip state for one queue of its plan.
type idlePoll struct {
	empties uint8 // empty polls in a row, up to maxIdleShift
	skip    uint8 // iterations left to skip
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
	up   Upcall
	cnt  pmdCounters // local counters, published into stats
	pub  pmdStatsPub
	now  int64
	idle []idlePoll // parallel to the plan's rxqs

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
	p.ctx = execCtx{dp: dp, slot: id, pool: pool}
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
		got := p.pollOnce(plan)
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
		if !p.sleeper.allFDs {
			timeout = time.Duration(p.dp.maxSleep.Load())
		}
		slept := p.sleeper.sleep(timeout)
		clear(p.idle) // poll every queue after waking: ppoll does not say which
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
	p.sleeper.setFDs(np.rxqs)
	p.seen.Store(np.epoch)
	return np
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
		rq, idle := &plan.rxqs[i], &p.idle[i]
		if idle.skip > 0 {
			idle.skip--
			continue
		}
		exhausted := p.pool.Exhausted()
		n, _ := rq.port.dev.Recv(rq.q, &p.rx, p.pool)
		if e := p.pool.Exhausted(); e != exhausted {
			rq.port.stats[p.id].rxNoBuffer.Add(e - exhausted)
		}
		if n == 0 {
			if rq.slow {
				idle.empties = min(idle.empties+1, maxIdleShift)
				idle.skip = 1<<idle.empties - 1
			}
			continue
		}
		idle.empties = 0
		total += n
		p.processBatch(rq.port)
		t := p.dp.now()
		rc := &rq.port.rxqs[rq.q]
		rc.packets.Add(uint64(n))
		rc.busyNs.Add(uint64(max(t-t0, 0)))
		t0, p.now = t, t
	}
	return total
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
			continue
		}
		f.slot(p.id).hit(1, uint64(b.Len()), p.now, k.TCPFlags)
		p.ctx.execute(b, *f.actions.Load())
	}
	p.rx.Reset() // every buffer was handed on
	p.ctx.flush()
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
