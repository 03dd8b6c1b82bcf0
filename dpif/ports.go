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
// knows the port. The datapath
// owns dev from now on and closes it on PortDel or Close. Traffic on other
// ports continues meanwhile.
func (dp *Datapath) PortAdd(dev netdev.Device, portNo uint32) (uint32, error) {
	dp.portMu.Lock()
	defer dp.portMu.Unlock()
	if dp.closed {
		return 0, ErrClosed
	}
	old := dp.ports.Load()
	for _, p := range old.list {
		if p.dev == dev || p.dev.Name() == dev.Name() {
			return 0, fmt.Errorf("%w: %s", ErrDevInUse, dev.Name())
		}
	}
	if portNo == AutoPortNo {
		portNo = 1
		for _, ok := old.idx[portNo]; ok; _, ok = old.idx[portNo] {
			portNo++
		}
	} else if _, ok := old.idx[portNo]; ok {
		return 0, fmt.Errorf("%w: %d", ErrPortExists, portNo)
	}
	ntx := dev.NumTxQueues()
	p := &port{no: portNo, dev: dev, caps: dev.Capabilities(), added: dp.now()}
	p.sharedTx = ntx < dp.NumPMDs()+1
	if ntx < 1 {
		ntx = 1
	}
	p.txLocks = make([]sync.Mutex, ntx)
	p.stats = make([]portCounters, dp.NumPMDs()+1)
	p.rxqs = make([]rxqCounters, dev.NumRxQueues())
	p.hist = make([]rxqHistory, dev.NumRxQueues())

	list := append(slices.Clone(old.list), p)
	slices.SortFunc(list, func(a, b *port) int { return cmpU32(a.no, b.no) })
	dp.ports.Store(newPortTable(list))
	for q := range dev.NumRxQueues() {
		dp.assign[rxqID{portNo, q}] = dp.leastLoadedPMD()
	}
	// Wait until every PMD has the new port table, so a flow naming the
	// new port, installed after PortAdd returns, never meets a PMD that
	// does not know the port yet.
	dp.waitPlans(dp.publishPlans())
	dp.log.Info("added port", "port", portNo, "device", dev.Name(), "type", dev.Type(),
		"rxqs", dev.NumRxQueues(), "txqs", dev.NumTxQueues(), "shared_tx", p.sharedTx)
	return portNo, nil
}

// PortDel stops polling port portNo, waits until no PMD uses it any
// more, deletes the flows whose in_port is portNo, and closes its device.
func (dp *Datapath) PortDel(portNo uint32) error {
	dp.portMu.Lock()
	defer dp.portMu.Unlock()
	if dp.closed {
		return ErrClosed
	}
	old := dp.ports.Load()
	i, ok := old.idx[portNo]
	if !ok {
		return fmt.Errorf("%w: %d", ErrNoPort, portNo)
	}
	p := old.list[i]
	dp.ports.Store(newPortTable(slices.Delete(slices.Clone(old.list), int(i), int(i)+1)))
	for id := range dp.assign {
		if id.port == portNo {
			delete(dp.assign, id)
		}
	}
	ep := dp.publishPlans()
	dp.waitPlans(ep)
	// Non-PMD execution takes the port table under this lock: once we
	// hold it, no one still sends to p.
	dp.nonPMD.mu.Lock()
	dp.nonPMD.mu.Unlock() //nolint:staticcheck // a barrier, not a critical section

	dp.delFlowsMatching(func(f *flow) bool { return f.sub.mask.InPort != 0 && f.key.InPort == portNo })
	dp.log.Info("deleted port", "port", portNo, "device", p.dev.Name())
	return p.dev.Close()
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

// leastLoadedPMD picks the PMD with the fewest rx queues, lowest index
// first: round-robin as queues arrive. Queues move only when
// RebalanceRxQueues says so, never to be polled by two PMDs at once.
// Caller holds portMu.
func (dp *Datapath) leastLoadedPMD() int {
	load := make([]int, dp.NumPMDs())
	for _, pmd := range dp.assign {
		if pmd >= 0 {
			load[pmd]++
		}
	}
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
			pl.rxqs = append(pl.rxqs, rxq{port: p, q: q, fd: p.dev.PollFD(q), slow: p.caps.RecvSyscall,
				flushesTx: p.caps.RecvFlushesTx})
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
