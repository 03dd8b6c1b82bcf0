package appctl

import (
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"
	"weak"

	"gvs/dpif"
	"gvs/metrics/source"
	"gvs/unixctl"
)

// Datapath names, as Open vSwitch's userspace datapath is called.
const (
	DatapathType = "netdev"
	DatapathName = "ovs-netdev"
	// DatapathFullName is what dpif/show and dpctl print.
	DatapathFullName = DatapathType + "@" + DatapathName
)

// Config configures the commands.
type Config struct {
	// Switch is what the commands read and act on.
	Switch source.Switch
	// Program prefixes dpctl errors, as ovs-vswitchd's do
	// ("ovs-vswitchd: no datapaths exist"); default "ovs-vswitchd".
	Program string
	Logger  *slog.Logger
	// SampleInterval is how often the coverage and PMD usage history is
	// sampled; default 5 s, Open vSwitch's coverage interval.
	SampleInterval time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Commands are the switch's ovs-appctl commands. Create with New,
// Register on a unixctl server, Close when the switch stops.
type Commands struct {
	sw       source.Switch
	program  string
	log      *slog.Logger
	now      func() time.Time
	interval time.Duration

	mu sync.Mutex // guards baseDP, baseline, firstSeen; a leaf lock
	// pmd-stats-clear baselines, valid for baseDP only.
	baseDP   weak.Pointer[dpif.Datapath]
	baseline map[pmdSlot]dpif.PMDStats
	// bridge first-seen times, for bridge/dump-flows when the Switch does
	// not know when a bridge was created.
	firstSeen map[string]time.Time
	cov       *coverage

	stop chan struct{}
	done chan struct{}
}

// New returns the commands and starts the sampler goroutine behind
// coverage/show and pmd-rxq-show's usage figures.
func New(cfg Config) *Commands {
	if cfg.Program == "" {
		cfg.Program = "ovs-vswitchd"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = 5 * time.Second
	}
	c := &Commands{
		sw: cfg.Switch, program: cfg.Program, log: cfg.Logger, now: cfg.Now,
		interval:  cfg.SampleInterval,
		baseline:  map[pmdSlot]dpif.PMDStats{},
		firstSeen: map[string]time.Time{},
		cov:       newCoverage(cfg.SampleInterval),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	c.sample(true)
	go c.sampler()
	return c
}

// Close stops the sampler. Commands still answer afterwards, with rates
// frozen.
func (c *Commands) Close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.done
}

func (c *Commands) sampler() {
	defer close(c.done)
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			// Kernel counters as the reconciler's statistics timer
			// (as often as ours) last read them.
			c.sampleDevices(true, c.interval+c.interval/5)
		}
	}
}

// Register adds every command to s.
func (c *Commands) Register(s *unixctl.Server) {
	s.Register("dpif/show", "", 0, 0, c.dpifShow)
	s.Register("dpctl/show", "[-s] [dp...]", 0, 1<<16, c.dpctl(c.dpctlShow))
	s.Register("dpctl/dump-flows", "[-m] [--names] [dp] [filter=..] [type=..] [pmd=..]", 0, 6, c.dpctl(c.dumpFlows))
	s.Register("dpctl/del-flows", "[dp] [file]", 0, 2, c.dpctl(c.delFlows))
	s.Register("dpctl/dump-conntrack", "[-m] [-s] [dp] [zone=N]", 0, 4, c.dpctl(c.dumpConntrack))
	s.Register("dpctl/flush-conntrack", "[dp] [zone=N] [ct-orig-tuple] [ct-reply-tuple]", 0, 4, c.dpctl(c.flushConntrack))
	s.Register("dpctl/ct-stats-show", "[dp] [zone=N]", 0, 3, c.dpctl(c.ctStatsShow))
	s.Register("dpctl/ct-bkts", "[dp] [gt=N]", 0, 2, c.dpctl(c.ctBkts))
	s.Register("dpctl/ct-set-maxconns", "[dp] maxconns", 1, 2, c.dpctl(c.ctSetMaxconns))
	s.Register("dpctl/ct-get-maxconns", "[dp]", 0, 1, c.dpctl(c.ctGetMaxconns))
	s.Register("dpctl/ct-get-nconns", "[dp]", 0, 1, c.dpctl(c.ctGetNconns))
	s.Register("dpctl/ct-enable-tcp-seq-chk", "[dp]", 0, 1, c.dpctl(c.ctSetTCPSeqChk(true)))
	s.Register("dpctl/ct-disable-tcp-seq-chk", "[dp]", 0, 1, c.dpctl(c.ctSetTCPSeqChk(false)))
	s.Register("dpctl/ct-get-tcp-seq-chk", "[dp]", 0, 1, c.dpctl(c.ctGetTCPSeqChk))
	s.Register("dpctl/ct-set-limits", "[dp] [default=L] [zone=N,limit=L]...", 1, math.MaxInt32, c.dpctl(c.ctSetLimits))
	s.Register("dpctl/ct-del-limits", "[dp] zone=N1[,N2]...", 1, 2, c.dpctl(c.ctDelLimits))
	s.Register("dpctl/ct-get-limits", "[dp] [zone=N1[,N2]...]", 0, 2, c.dpctl(c.ctGetLimits))
	s.Register("dpif-netdev/pmd-stats-show", "[-pmd core] [dp]", 0, 3, c.pmdStatsShow)
	s.Register("dpif-netdev/pmd-stats-clear", "[-pmd core] [dp]", 0, 3, c.pmdStatsClear)
	s.Register("dpif-netdev/pmd-rxq-show", "[-pmd core] [-secs secs] [dp]", 0, 5, c.pmdRxqShow)
	s.Register("dpif-netdev/pmd-rxq-rebalance", "[dp]", 0, 1, c.pmdRxqRebalance)
	s.Register("fdb/show", "bridge", 1, 1, c.fdbShow)
	s.Register("fdb/flush", "[bridge]", 0, 1, c.fdbFlush)
	s.Register("fdb/stats-show", "bridge", 1, 1, c.fdbStatsShow)
	s.Register("bridge/dump-flows", "[--offload-stats] bridge", 1, 2, c.bridgeDumpFlows)
	s.Register("ofproto/list", "", 0, 0, c.ofprotoList)
	s.Register("ofproto/trace", "{[dp_name] odp_flow | bridge br_flow} [OPTIONS...] [-generate|packet]", 1, 8, c.ofprotoTrace)
	s.Register("memory/show", "", 0, 0, c.memoryShow)
	s.Register("coverage/show", "", 0, 0, c.coverageShow)
	s.Register("gvs/sock-buf-show", "[bridge]", 0, 1, c.sockBufShow)
}

// bridge finds a bridge running in the datapath by name.
func (c *Commands) bridge(name string) (source.Bridge, bool) {
	for _, br := range c.sw.Bridges() {
		if br.Name == name && br.OpenFlow != nil {
			return br, true
		}
	}
	return source.Bridge{}, false
}

// isDatapathName reports whether s names gvs's datapath, in dpctl's
// TYPE@NAME form or as the bare name.
func isDatapathName(s string) bool {
	return s == DatapathFullName || s == DatapathName
}

// errorf formats a command error.
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
