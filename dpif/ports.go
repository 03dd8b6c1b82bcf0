package dpif

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"gvs/netdev"
)

// AutoPortNo asks PortAdd to choose the lowest free port number from 1.
const AutoPortNo = ^uint32(0)

// Errors of port operations, named like Open vSwitch's errno results.
var (
	ErrPortExists = errors.New("dpif: port number in use (EEXIST)")
	ErrNoPort     = errors.New("dpif: no such port (ENOENT)")
	ErrDevInUse   = errors.New("dpif: device already has a port (EBUSY)")
)

// PortInfo describes a port for Ports.
type PortInfo struct {
	No     uint32
	Name   string
	Type   string
	Device netdev.Device
	// RxQueuePMDs[q] is the PMD polling receive queue q.
	RxQueuePMDs []int
	// SharedTx: the device has fewer transmit queues than PMDs plus one,
	// so PMDs share them under a lock.
	SharedTx bool
	// DatapathStats are the datapath's own counters for the port (drops
	// by cause, software offload work); see PortStats.
	DatapathStats PortStats
}

// port is one datapath port; immutable after PortAdd except the locks.
type port struct {
	no       uint32
	dev      netdev.Device
	caps     netdev.Capabilities
	sharedTx bool
	txLocks  []sync.Mutex // one per tx queue, used when sharedTx

	stats []portCounters // one slot per PMD, then the non-PMD context
	rxqs  []rxqCounters  // one per receive queue, added to by its PMD
	hist  []rxqHistory   // one per receive queue, under Datapath.load.mu
	added int64          // datapath clock at PortAdd
}

// portTable is an immutable snapshot of the ports, published atomically.
type portTable struct {
	list []*port          // sorted by number
	idx  map[uint32]int32 // number -> index in list
}

type rxqID struct {
	port uint32
	q    int
}

// PortAdd adds dev as port portNo (AutoPortNo: choose one) and starts
// polling its receive queues; it returns the port number once every PMD
// knows the port. The datapath owns dev from now on and closes it on
// PortDel or Close. Traffic on other ports continues meanwhile.
func (dp *Datapath) PortAdd(dev netdev.Device, portNo uint32) (uint32, error) {
	nos, errs := dp.portsAdd([]netdev.Device{dev}, portNo)
	return nos[0], errs[0]
}

// PortsAdd adds every device of devs as a new port, numbered as PortAdd
// with AutoPortNo numbers them, and publishes them to the PMDs in one
// step: one new port table, one plan per PMD, one wait. nos[i] and
// errs[i] are devs[i]'s; a device with an error was not added and is
// still the caller's to close. The others are the datapath's, as after
// PortAdd.
func (dp *Datapath) PortsAdd(devs []netdev.Device) (nos []uint32, errs []error) {
	return dp.portsAdd(devs, AutoPortNo)
}

func (dp *Datapath) portsAdd(devs []netdev.Device, portNo uint32) ([]uint32, []error) {
	nos, errs := make([]uint32, len(devs)), make([]error, len(devs))
	dp.portMu.Lock()
	defer dp.portMu.Unlock()
	if dp.closed {
		for i := range errs {
			errs[i] = ErrClosed
		}
		return nos, errs
	}
	old := dp.ports.Load()
	names := make(map[string]bool, len(old.list)+len(devs))
	for _, p := range old.list {
		names[p.dev.Name()] = true
	}
	used := func(no uint32) bool { _, ok := old.idx[no]; return ok }
	var added []*port
	taken := map[uint32]bool{}
	load := dp.pmdLoad()
	next := uint32(1)
	for i, dev := range devs {
		if names[dev.Name()] || slices.ContainsFunc(old.list, func(p *port) bool { return p.dev == dev }) {
			errs[i] = fmt.Errorf("%w: %s", ErrDevInUse, dev.Name())
			continue
		}
		no := portNo
		if no == AutoPortNo {
			for used(next) || taken[next] {
				next++
			}
			no = next
		} else if used(no) || taken[no] {
			errs[i] = fmt.Errorf("%w: %d", ErrPortExists, no)
			continue
		}
		names[dev.Name()] = true
		taken[no] = true
		nos[i] = no
		added = append(added, dp.newPort(dev, no))
		for q := range dev.NumRxQueues() {
			pmd := leastLoaded(load)
			if pmd < len(load) {
				load[pmd]++
			}
			dp.assign[rxqID{no, q}] = pmd
		}
	}
	if len(added) == 0 {
		return nos, errs
	}
	list := append(slices.Clone(old.list), added...)
	slices.SortFunc(list, func(a, b *port) int { return cmpU32(a.no, b.no) })
	dp.ports.Store(newPortTable(list))
	// Wait until every PMD has the new port table, so a flow naming a
	// new port, installed after this returns, never meets a PMD that does
	// not know the port yet.
	dp.waitPlans(dp.publishPlans())
	for _, p := range added {
		dp.log.Info("added port", "port", p.no, "device", p.dev.Name(), "type", p.dev.Type(),
			"rxqs", p.dev.NumRxQueues(), "txqs", p.dev.NumTxQueues(), "shared_tx", p.sharedTx)
	}
	return nos, errs
}

// newPort makes the port object for dev. Caller holds portMu.
func (dp *Datapath) newPort(dev netdev.Device, no uint32) *port {
	ntx := dev.NumTxQueues()
	p := &port{no: no, dev: dev, caps: dev.Capabilities(), added: dp.now()}
	p.sharedTx = ntx < dp.NumPMDs()+1
	if ntx < 1 {
		ntx = 1
	}
	p.txLocks = make([]sync.Mutex, ntx)
	p.stats = make([]portCounters, dp.NumPMDs()+1)
	p.rxqs = make([]rxqCounters, dev.NumRxQueues())
	p.hist = make([]rxqHistory, dev.NumRxQueues())
	return p
}

// PortDel stops polling port portNo, waits until no PMD uses it any
// more, deletes the flows whose in_port is portNo, and closes its device.
func (dp *Datapath) PortDel(portNo uint32) error {
	return dp.PortsDel([]uint32{portNo})[0]
}

// PortsDel deletes the ports numbered nos in one step, as PortDel does
// one: one new port table and plan, one wait for the PMDs, one pass over
// the flows; then it closes their devices concurrently (closing a packet
// socket waits for an RCU grace period in the kernel, so one after another
// they take tens of milliseconds each). errs[i] is nos[i]'s: ErrNoPort, or
// the device's close error (the port is gone anyway).
func (dp *Datapath) PortsDel(nos []uint32) []error {
	errs := make([]error, len(nos))
	dp.portMu.Lock()
	if dp.closed {
		dp.portMu.Unlock()
		for i := range errs {
			errs[i] = ErrClosed
		}
		return errs
	}
	old := dp.ports.Load()
	doomed := map[uint32]int{} // port number -> index in nos
	for i, no := range nos {
		if _, ok := old.idx[no]; !ok {
			errs[i] = fmt.Errorf("%w: %d", ErrNoPort, no)
			continue
		}
		if _, dup := doomed[no]; dup {
			errs[i] = fmt.Errorf("%w: %d", ErrNoPort, no)
			continue
		}
		doomed[no] = i
	}
	if len(doomed) == 0 {
		dp.portMu.Unlock()
		return errs
	}
	var keep []*port
	var gone []*port
	for _, p := range old.list {
		if _, ok := doomed[p.no]; ok {
			gone = append(gone, p)
		} else {
			keep = append(keep, p)
		}
	}
	dp.ports.Store(newPortTable(keep))
	for id := range dp.assign {
		if _, ok := doomed[id.port]; ok {
			delete(dp.assign, id)
		}
	}
	dp.waitPlans(dp.publishPlans())
	// Non-PMD execution takes the port table under this lock: once we
	// hold it, no one still sends to the deleted ports.
	dp.nonPMD.mu.Lock()
	dp.nonPMD.mu.Unlock() //nolint:staticcheck // a barrier, not a critical section
	dp.delFlowsMatching(func(f *flow) bool {
		if f.sub.mask.InPort == 0 {
			return false
		}
		_, ok := doomed[f.key.InPort]
		return ok
	})
	for _, p := range gone {
		dp.log.Info("deleted port", "port", p.no, "device", p.dev.Name())
	}
	dp.portMu.Unlock()
	// No PMD, non-PMD sender or table holds the devices any more: close
	// them outside portMu so other port changes need not wait.
	devs := make([]netdev.Device, len(gone))
	for i, p := range gone {
		devs[i] = p.dev
	}
	for i, err := range CloseDevices(devs) {
		errs[doomed[gone[i].no]] = err
	}
	return errs
}

// MaxParallelDeviceOps bounds how many devices CloseDevices (and callers
// opening devices in bulk) work on at once: the work is mostly waiting in
// the kernel (RCU grace periods on socket bind and close), not CPU, and
// grace periods waited for at the same time end together: 200 ports in
// one transaction took 120-135 ms with 256 against 145-160 with 64.
const MaxParallelDeviceOps = 256

// CloseDevices closes devs concurrently, at most MaxParallelDeviceOps at
// a time; errs[i] is devs[i]'s.
func CloseDevices(devs []netdev.Device) []error {
	errs := make([]error, len(devs))
	Parallel(len(devs), func(i int) { errs[i] = devs[i].Close() })
	return errs
}

// Parallel runs fn(0) ... fn(n-1) on at most MaxParallelDeviceOps
// goroutines and returns when all have returned.
func Parallel(n int, fn func(i int)) {
	if n == 1 {
		fn(0)
		return
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(n, MaxParallelDeviceOps) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				fn(i)
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// Ports lists the ports in number order.
func (dp *Datapath) Ports() []PortInfo {
	dp.portMu.Lock()
	defer dp.portMu.Unlock()
	var out []PortInfo
	for _, p := range dp.ports.Load().list {
		pi := PortInfo{No: p.no, Name: p.dev.Name(), Type: p.dev.Type(), Device: p.dev, SharedTx: p.sharedTx,
			DatapathStats: p.sumStats()}
		for q := range p.dev.NumRxQueues() {
			pi.RxQueuePMDs = append(pi.RxQueuePMDs, dp.assign[rxqID{p.no, q}])
		}
		out = append(out, pi)
	}
	return out
}

func newPortTable(list []*port) *portTable {
	t := &portTable{list: list, idx: make(map[uint32]int32, len(list))}
	for i, p := range list {
		t.idx[p.no] = int32(i)
	}
	return t
}

// pmdLoad counts the rx queues each PMD polls. Caller holds portMu.
func (dp *Datapath) pmdLoad() []int {
	load := make([]int, dp.NumPMDs())
	for _, pmd := range dp.assign {
		if pmd >= 0 {
			load[pmd]++
		}
	}
	return load
}

// leastLoaded picks the PMD with the fewest rx queues, lowest index
// first: round-robin as queues arrive. Queues move only when
// RebalanceRxQueues says so, never to be polled by two PMDs at once.
func leastLoaded(load []int) int {
	best := 0
	for i := range load {
		if load[i] < load[best] {
			best = i
		}
	}
	return best
}

// publishPlans gives every PMD its new rx queue list and the current port
// table, wakes them, and returns the plans' epoch. Caller holds portMu (or
// is New).
func (dp *Datapath) publishPlans() uint64 {
	dp.planEp++
	ports := dp.ports.Load()
	pmds := dp.pmdList()
	plans := make([]*pmdPlan, len(pmds))
	for i := range plans {
		plans[i] = &pmdPlan{epoch: dp.planEp, ports: ports}
	}
	for _, p := range ports.list {
		for q := range p.dev.NumRxQueues() {
			pmd, ok := dp.assign[rxqID{p.no, q}]
			if !ok || pmd < 0 {
				continue // moving between PMDs (rebalance)
			}
			pl := plans[pmd]
			renewer, _ := p.dev.(netdev.PollFDRenewer)
			housekeeper, _ := p.dev.(netdev.Housekeeper)
			pl.rxqs = append(pl.rxqs, rxq{port: p, q: q, fd: p.dev.PollFD(q), slow: p.caps.RecvSyscall,
				flushesTx: p.caps.RecvFlushesTx, renewer: renewer, housekeeper: housekeeper})
		}
	}
	for i, p := range pmds {
		p.plan.Store(plans[i])
		p.wake()
	}
	return dp.planEp
}

// waitPlans waits until every PMD runs with a plan of epoch ep or later,
// that is, holds no older port table.
func (dp *Datapath) waitPlans(ep uint64) {
	if dp.cfg.manual {
		return
	}
	for _, p := range dp.pmdList() {
		p.waitEpoch(ep, p.stop)
	}
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
