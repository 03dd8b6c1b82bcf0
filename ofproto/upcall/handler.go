package upcall

import (
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"gvs/dpif"
	"gvs/ofproto/mf"
	"gvs/ofproto/xlate"
	"gvs/packet"
)

// Config configures a Handler.
type Config struct {
	// RevalidateInterval is how often the revalidator runs without being
	// asked (Open vSwitch's is 500 ms); 0 means 500 ms.
	RevalidateInterval time.Duration
	// Logger; nil discards.
	Logger *slog.Logger
}

// Datapath is what the handler needs from the datapath: its flow table,
// walked by handle, for the revalidator. *dpif.Datapath implements it.
type Datapath interface {
	// ExecuteKey runs actions on a packet (slow-pathed flows).
	ExecuteKey(frame []byte, meta *packet.Key, actions dpif.Actions) error
	Handles() []dpif.FlowHandle
	FlowGet(h dpif.FlowHandle) (dpif.FlowEntry, bool)
	FlowModify(h dpif.FlowHandle, actions dpif.Actions) error
	FlowDelete(h dpif.FlowHandle) (dpif.FlowStats, error)
}

var _ Datapath = (*dpif.Datapath)(nil)

// Handler is the upcall handler and revalidator of one datapath.
type Handler struct {
	dp  Datapath
	log *slog.Logger

	ports  atomic.Pointer[Ports]
	recirc *xlate.RecircTable
	xl     sync.Pool // *xlate.Translator, one per concurrent translation
	// up holds the upcalls' translation state (*upcallCtx): the input
	// lives beside its translator so that an upcall allocates nothing.
	up sync.Pool

	changes  atomic.Uint64 // bumped by Changed: revalidate everything
	wake     chan struct{}
	interval time.Duration

	// The revalidator's state: owned by whichever goroutine holds revMu
	// (the revalidator goroutine, or Revalidate called by a test or the
	// bridge).
	revMu sync.Mutex
	rev   revalidator

	stop chan struct{}
	done chan struct{}

	stats handlerStats
}

type handlerStats struct {
	upcalls, installs, slow, drops, errors atomic.Uint64
	rounds, revalidated, modified, deleted atomic.Uint64
}

// Stats are the handler's counters since New.
type Stats struct {
	// Upcalls handled on the PMDs; Installs answered with a megaflow;
	// Slow sent to the slow path; Drops for packets of ports no bridge
	// has (or stale recirculation ids); Errors translations that failed
	// (installed as drops).
	Upcalls, Installs, Slow, Drops, Errors uint64
	// Revalidation: rounds run, flows translated again, modified,
	// deleted.
	Rounds, Revalidated, Modified, Deleted uint64
	// FrozenStates held (recirculation and continuation contexts).
	FrozenStates int
}

// Stats returns the handler's counters.
func (h *Handler) Stats() Stats {
	s := &h.stats
	return Stats{
		Upcalls: s.upcalls.Load(), Installs: s.installs.Load(), Slow: s.slow.Load(), Drops: s.drops.Load(), Errors: s.errors.Load(),
		Rounds: s.rounds.Load(), Revalidated: s.revalidated.Load(), Modified: s.modified.Load(), Deleted: s.deleted.Load(),
		FrozenStates: h.recirc.Len(),
	}
}

// Compile-time checks.
var (
	_ dpif.UpcallHandler     = (*Handler)(nil)
	_ dpif.SlowUpcallHandler = (*Handler)(nil)
)

// New returns a handler for dp (not yet installed: the caller calls
// dp.SetUpcallHandler(h)) and starts its revalidator goroutine; Close
// stops it.
func New(dp Datapath, cfg Config) *Handler {
	if cfg.RevalidateInterval <= 0 {
		cfg.RevalidateInterval = 500 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{
		dp: dp, log: cfg.Logger, interval: cfg.RevalidateInterval,
		wake: make(chan struct{}, 1), recirc: xlate.NewRecircTable(),
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	h.xl.New = func() any { return xlate.NewTranslator() }
	h.up.New = func() any { return &upcallCtx{t: xlate.NewTranslator()} }
	h.ports.Store(&Ports{})
	h.rev.init(h)
	go h.run()
	return h
}

// SetPorts publishes a new port map (the bridge layer's, after any port
// change) and revalidates every flow.
func (h *Handler) SetPorts(p Ports) {
	h.ports.Store(&p)
	h.Changed()
}

// Changed tells the revalidator that translations may have changed (a
// flow table, group, meter, port or bridge setting changed): it
// revalidates every installed flow soon.
func (h *Handler) Changed() {
	h.changes.Add(1)
	h.kick()
}

// kick wakes the revalidator without invalidating every translation
// (the flows that consulted a changed MAC table know it by its Seq).
func (h *Handler) kick() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Close stops the revalidator.
func (h *Handler) Close() {
	select {
	case <-h.stop:
		return
	default:
	}
	close(h.stop)
	<-h.done
}

// flowFor converts a datapath key into the flow translation starts from.
func flowFor(b *Binding, k *packet.Key) mf.Flow {
	var f mf.Flow
	f.Key = *k
	f.InPort = b.Port.OFPort
	return f
}

// upcallCtx is one upcall's translator and input, pooled.
type upcallCtx struct {
	t  *xlate.Translator
	in xlate.Input
}

// Upcall implements dpif.UpcallHandler: translate and install, on the PMD
// that missed. Side effects other than MAC learning (learned flows,
// packet-ins) need the packet and may block, so such translations go to
// the slow path.
func (h *Handler) Upcall(u *dpif.Upcall) dpif.UpcallResult {
	h.stats.upcalls.Add(1)
	b, ok := (*h.ports.Load())[u.Key.InPort]
	if !ok || b.Bridge == nil || b.Port == nil {
		h.stats.drops.Add(1)
		return dpif.UpcallDrop
	}
	c := h.up.Get().(*upcallCtx)
	defer h.putUpcallCtx(c)
	if c.in, ok = h.input(&b, u.Key); !ok {
		h.stats.drops.Add(1)
		return dpif.UpcallDrop
	}
	macSeq := macSeqOf(b.Bridge)
	res := c.t.Translate(&c.in)
	if macSeqOf(b.Bridge) != macSeq || res.Cache.PeerMACsChanged() {
		h.kick() // NORMAL learned: flows that flooded may now be wrong
	}
	if len(res.Cache.Learned) > 0 {
		h.stats.slow.Add(1)
		return dpif.UpcallSlow
	}
	return h.answer(u, &b, res)
}

// slowPath returns the datapath actions of a flow that must be handled
// in userspace: one userspace(slow_path(reason)) action, so the megaflow
// is cached and each packet comes up with it (as Open vSwitch installs
// slow-pathed flows).
func slowPath(res *xlate.Result) dpif.Actions {
	var reasons uint32
	if res.Slow&xlate.SlowMatch != 0 {
		reasons |= dpif.SlowMatch
	}
	if res.Slow&^xlate.SlowMatch != 0 {
		reasons |= dpif.SlowAction
	}
	return dpif.Actions{dpif.Userspace(dpif.UserspaceCookie{Type: dpif.CookieSlowPath, SlowPathReasons: reasons})}
}

// answer fills u with res's megaflow. The packet is executed apart from
// the flow installed for it (which does not count it, as Open vSwitch's
// datapath): its statistics go to the rules and groups it hit now, as
// Open vSwitch credits a miss upcall's packet during its translation.
func (h *Handler) answer(u *dpif.Upcall, b *Binding, res *xlate.Result) dpif.UpcallResult {
	if res.Error != nil {
		h.stats.errors.Add(1)
	}
	if u.Packet != nil {
		xlate.PushStatsLearning(b.Bridge, &res.Cache, xlate.Stats{
			Packets: 1, Bytes: uint64(u.Packet.Len()), Used: time.Now(), TCPFlags: u.Key.TCPFlags,
		}, false)
	}
	u.Mask = res.Wildcards.DatapathMask()
	u.Mask.InPort = ^uint32(0)
	if res.Slow != 0 {
		u.Actions = append(u.Actions[:0], slowPath(res)...)
	} else {
		u.Actions = append(u.Actions[:0], res.Actions...)
	}
	if res.AvoidCaching {
		return dpif.UpcallExecute
	}
	h.stats.installs.Add(1)
	return dpif.UpcallInstall
}

// SlowUpcall implements dpif.SlowUpcallHandler: translate with the packet,
// carry out the side effects (learned flows, packet-ins), then install
// the megaflow or, for a flow that must stay slow, execute the actions on
// this packet only.
func (h *Handler) SlowUpcall(u *dpif.Upcall) dpif.UpcallResult {
	b, ok := (*h.ports.Load())[u.Key.InPort]
	if !ok || b.Bridge == nil || b.Port == nil {
		return dpif.UpcallDrop
	}
	c := h.up.Get().(*upcallCtx)
	defer h.putUpcallCtx(c)
	if c.in, ok = h.input(&b, u.Key); !ok {
		return dpif.UpcallDrop
	}
	if u.Packet != nil {
		c.in.Packet = u.Packet.Data()
	}
	res := c.t.Translate(&c.in)
	h.sideEffects(b.Bridge, res)
	if res.Slow != 0 {
		// This packet is handled here; the flow is installed with the
		// slow-path action for the next ones. No datapath flow counts
		// this packet: credit it now.
		var n uint64
		if u.Packet != nil {
			n = uint64(u.Packet.Len())
		}
		xlate.PushStats(b.Bridge, &res.Cache, xlate.Stats{Packets: 1, Bytes: n, Used: time.Now()})
		u.Actions = append(u.Actions[:0], res.Actions...)
		return dpif.UpcallExecute
	}
	return h.answer(u, &b, res)
}

// putUpcallCtx returns c to the pool without the references its input
// holds (bridge, packet, frozen state).
func (h *Handler) putUpcallCtx(c *upcallCtx) {
	c.in = xlate.Input{}
	h.up.Put(c)
}

// input is the translation input for a packet with key k from b: a new
// translation from table 0, or (recirc_id set) the frozen state it
// resumes. False: the recirc_id names no state (any more).
func (h *Handler) input(b *Binding, k *packet.Key) (xlate.Input, bool) {
	in := xlate.Input{Bridge: b.Bridge, Version: b.Bridge.Version(), Flow: flowFor(b, k), SideEffects: true, Recirc: h.recirc}
	if k.RecircID == 0 {
		return in, true
	}
	fz := h.recirc.Lookup(k.RecircID)
	if fz == nil {
		return in, false
	}
	// The state may belong to another bridge than the input port's: one
	// behind a patch port. Translation resumes in the state's bridge, as
	// Open vSwitch's thaw switches to it.
	in.Frozen, in.Flow, in.Table = fz, fz.Thaw(k), fz.Table
	in.Actions = fz.Actions
	return in, true
}

// Recirc is the handler's table of frozen states (packet-in
// continuations, NXT_RESUME).
func (h *Handler) Recirc() *xlate.RecircTable { return h.recirc }

// sideEffects applies what translating a packet asked for: learned flows
// and packet-ins.
func (h *Handler) sideEffects(br Bridge, res *xlate.Result) {
	for i := range res.Cache.Learned {
		if err := br.Learn(&res.Cache.Learned[i]); err != nil {
			h.log.Debug("learn failed", "bridge", br.Name(), "err", err)
		}
	}
	for i := range res.PacketIns {
		pi := res.PacketIns[i]
		pi.Packet = slices.Clone(pi.Packet) // the datapath reuses its buffer
		br.SendPacketIn(&pi)
	}
	if len(res.Cache.Learned) > 0 {
		h.Changed() // the learned flows may change other flows' translations
	}
}

func macSeqOf(br xlate.Bridge) uint64 {
	if m := br.MACs(); m != nil {
		return m.Seq()
	}
	return 0
}
