package xlate

import (
	"errors"
	"fmt"
	"strings"

	"gvs/dpif"
	"gvs/dpif/conntrack"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/packet"
)

// Translation limits, as Open vSwitch's: resubmit depth (each resubmit to
// the same or an earlier table, each group bucket, each clone deepens)
// and resubmits in total.
const (
	MaxDepth     = 64
	MaxResubmits = MaxDepth * MaxDepth
	// maxStack is the push/pop stack limit (Open vSwitch: 64 kB of
	// 16-byte entries).
	maxStack = 65536 / 16
)

// Errors that stop a translation; the flow then drops. The texts are
// Open vSwitch's xlate_strerror, which its logs and ofproto/trace print.
var (
	ErrRecursionTooDeep  = errors.New("Recursion too deep")
	ErrTooManyResubmits  = errors.New("Too many resubmits")
	ErrStackTooDeep      = errors.New("Stack too deep")
	ErrNoRecircContext   = errors.New("No recirculation context")
	ErrForwardingDisable = errors.New("Forwarding is disabled")
)

// Translator translates flows; see the package comment for its use from
// goroutines.
type Translator struct {
	ctx context
	res Result
}

// NewTranslator returns a Translator.
func NewTranslator() *Translator { return &Translator{} }

// context is one translation's state, after Open vSwitch's xlate_ctx.
type context struct {
	in  *Input
	br  Bridge
	cfg *Config
	// version is the table version of br: Input.Version, or the peer
	// bridge's own while translating behind a patch port.
	version uint64
	res     *Result
	wc      *mf.Wildcards

	// flow is the flow as the actions so far made it; base is the flow
	// as the datapath actions emitted so far leave the packet (commit
	// compares the two).
	flow mf.Flow
	base mf.Flow

	depth     int
	resubmits int
	tableID   uint8
	rule      Rule
	cookie    uint64

	exit        bool // exit action, error, or freezing: stop
	firstLookup bool // the translation's first table lookup is next
	inActionSet bool
	inGroup     bool
	inPacketOut bool

	actionSet      []Action // written by write_actions; run at the end
	actsetHasGroup bool

	// Freezing (a paused controller action, a select group by dp_hash):
	// every level of the pipeline adds the actions it has left, innermost
	// first, as it unwinds; finishFreeze makes them a frozen state.
	freezing     bool
	freezeKind   freezeKind
	frozenActs   []Action
	freezeTable  uint8
	freezeCookie uint64
	pauseArgs    controllerArgs
	hashBasis    uint32
	stack        []Subvalue

	// conntracked: the packet may carry conntrack state (it was tracked
	// before this translation, or a recirculation after ct resumed it),
	// Open vSwitch's ctx->conntracked; ct_clear acts only then.
	conntracked bool
	// ctNAT is the nat clause of the ct action being translated.
	ctNAT *ofpact.NAT
	// lookupCTOrig: the next table lookup is resubmit(,N,ct)'s.
	lookupCTOrig bool
	// cloneRule: the next rule's actions are the first behind a patch
	// port (clone_xlate_actions, with cloneLast as is_last_action).
	cloneRule, cloneLast bool
	// outputLast: the output action being translated is the last of the
	// translation (Open vSwitch's is_last_action).
	outputLast bool

	trace *Trace
}

// Translate translates in and returns the result, valid until the next
// call on t.
func (t *Translator) Translate(in *Input) *Result {
	res := &t.res
	res.Actions = res.Actions[:0]
	res.Cache.Reset()
	clear(res.PacketIns)
	res.PacketIns = res.PacketIns[:0]
	res.Wildcards = mf.Wildcards{}
	res.Slow, res.AvoidCaching, res.Error = 0, false, nil

	ctx := &t.ctx
	*ctx = context{
		in: in, br: in.Bridge, cfg: in.Bridge.Config(), version: in.Version, res: res, wc: &res.Wildcards,
		flow: in.Flow, base: in.Flow, tableID: in.Table,
		// No rule yet (a packet out's actions): Open vSwitch's
		// rule_cookie starts as all ones, which packet-ins carry.
		cookie:    ^uint64(0),
		actionSet: ctx.actionSet[:0], stack: ctx.stack[:0], trace: in.Trace,
		frozenActs: ctx.frozenActs[:0],
	}
	if fz := in.Frozen; fz != nil {
		ctx.actionSet = append(ctx.actionSet, fz.ActionSet...)
		ctx.stack = append(ctx.stack, fz.Stack...)
		// A state frozen by ct(table=N) resumes tracked; any other
		// resumes with the conntrack fields as they were when frozen
		// cleared, as Open vSwitch's thaw does.
		ctx.conntracked = fz.Conntracked
		if !fz.Conntracked {
			clearConntrack(&ctx.flow)
		}
	} else if ctx.flow.CTState&conntrack.StateTracked != 0 {
		ctx.conntracked = true
	}
	if ctx.flow.ActsetOutput == 0 {
		ctx.flow.ActsetOutput = mf.PortUnset
	}
	ctx.initWildcards()

	if ctx.trace != nil {
		ctx.trace.enter(nodeBridge, fmt.Sprintf("bridge(%q)", ctx.br.Name()))
	}
	ctx.thawBridge()
	if ctx.trace != nil {
		if fz := in.Frozen; fz != nil {
			ctx.traceThaw(fz)
		}
	}
	switch {
	case in.Frozen == nil && in.Actions == nil && !in.PacketOut && ctx.flow.RecircID != 0:
		// A recirculated packet without its frozen state (ofproto/trace
		// of a datapath flow whose id is gone): Open vSwitch's error.
		ctx.errorMsg(fmt.Sprintf("Recirculation context not found for ID %x", ctx.flow.RecircID))
		ctx.setError(ErrNoRecircContext)
	case in.Actions != nil || in.PacketOut:
		ctx.inPacketOut = in.PacketOut || in.Frozen == nil
		ctx.doActions(in.Actions, true)
	default:
		// The first table's trace node stays current: Open vSwitch
		// reports the action set under it.
		ctx.firstLookup = true
		ctx.lookupAndRun(ctx.flow.InPort, in.Table, true, true, false)
	}
	ctx.runActionSet()
	if ctx.freezing {
		ctx.finishFreeze()
	}
	if res.Error != nil {
		// Open vSwitch drops on an error: no datapath actions, but the
		// wildcards stay (the same packets fail the same way).
		res.Actions = res.Actions[:0]
	} else {
		optimizeTrailingClone(res)
	}
	// No commit here: changes after the last output reach no port.
	ctx.finishWildcards()
	res.FinalFlow = ctx.flow
	return res
}

type freezeKind uint8

const (
	freezePause freezeKind = iota + 1
	freezeHash
)

// initWildcards marks the fields every translation examines, as Open
// vSwitch's xlate_wc_init: in_port, dl_type, the IP fragment bits and
// recirc_id.
func (ctx *context) initWildcards() {
	m := &ctx.wc.Masks
	m.InPort = ^uint32(0)
	m.EtherType = 0xffff
	if isIP(&ctx.flow) {
		m.IPFrag = packet.FragAny | packet.FragLater
	}
	m.RecircID = ^uint32(0)
	// A tagged and an untagged packet never share a megaflow: Open
	// vSwitch's datapath key has the outer EtherType (0x8100 for a tagged
	// frame), which it always matches; here each tag's TPID says whether
	// it is there.
	for i := range m.VLANs {
		m.VLANs[i].TPID = 0xffff
	}
}

// finishWildcards adjusts the wildcards for the datapath as Open vSwitch's
// xlate_wc_finish: a matched VLAN tag matches its presence (TPID) too; a
// later fragment has no L4 ports to match; ICMP type and code are 8 bits.
func (ctx *context) finishWildcards() {
	m := &ctx.wc.Masks
	for i := range m.VLANs {
		switch {
		case !ctx.in.Flow.VLANs[i].Present():
			// A tag the packet did not have (pushed, or consulted by an
			// action) is not matched beyond its absence, as Open
			// vSwitch's xlate_wc_finish: otherwise revalidation would
			// keep deleting such flows.
			m.VLANs[i].TCI = 0
		case m.VLANs[i].TCI != 0:
			m.VLANs[i].TPID = 0xffff
		}
	}
	if ctx.in.Flow.IsLaterFragment() {
		m.SrcPort, m.DstPort = 0, 0
	}
	// Open vSwitch keeps the ARP opcode's low byte in nw_proto, and an
	// exact nw_proto becomes an exact 16-bit opcode in the datapath key
	// (odp-util's put_arp_key).
	if m.ARPOp&0x00ff == 0x00ff {
		m.ARPOp = 0xffff
	}
}

func isIP(f *mf.Flow) bool {
	return f.EtherType == packet.EtherTypeIPv4 || f.EtherType == packet.EtherTypeIPv6
}

// setError stops the translation with err (the first error wins).
func (ctx *context) setError(err error) {
	if ctx.res.Error == nil {
		ctx.res.Error = err
	}
	ctx.exit = true
}

// resourceCheck is Open vSwitch's xlate_resubmit_resource_check.
func (ctx *context) resourceCheck() bool {
	switch {
	case ctx.depth >= MaxDepth:
		ctx.errorMsg(fmt.Sprintf("over max translation depth %d", MaxDepth))
		ctx.setError(ErrRecursionTooDeep)
	case ctx.resubmits >= MaxResubmits:
		ctx.errorMsg(fmt.Sprintf("over %d resubmit actions", MaxResubmits))
		ctx.setError(ErrTooManyResubmits)
	case len(ctx.stack) >= maxStack:
		ctx.errorMsg("resubmits yielded over 64 kB of stack")
		ctx.setError(ErrStackTooDeep)
	default:
		return true
	}
	return false
}

// lookupAndRun looks table up (and the following tables while they miss
// with MissContinue) for the flow with in_port inPort, and runs the
// matching rule's actions: Open vSwitch's xlate_table_action with
// rule_dpif_lookup_from_table. mayPacketIn: a miss may send a packet-in
// (false for resubmit, as Open vSwitch's). deepens: a resubmit to the
// same or an earlier table (a loop risk) counts towards MaxDepth.
func (ctx *context) lookupAndRun(inPort uint32, table uint8, mayPacketIn, honorMiss, deepens bool) {
	if !ctx.resourceCheck() {
		return
	}
	oldTable := ctx.tableID
	ctx.tableID = table
	defer func() { ctx.tableID = oldTable }()

	oldIn := ctx.flow.InPort
	oldSrc, oldDst := ctx.flow.SrcPort, ctx.flow.DstPort
	if ctx.flow.IsFragment() {
		switch ctx.cfg.FragHandling {
		case FragDrop:
			if ctx.trace != nil {
				ctx.trace.report(nodeTable, fmt.Sprintf("%2d. Packets are IP fragments and the fragment handling mode is \"drop\".", table))
			}
			return
		case FragNormal, FragReasm:
			ctx.flow.SrcPort, ctx.flow.DstPort = 0, 0
		}
	}
	ctx.flow.InPort = inPort
	// resubmit(,N,ct) looks up with conntrack's original tuple; the
	// rule's actions see the packet's own (Open vSwitch swaps back).
	ctOrig := ctx.lookupCTOrig
	ctx.lookupCTOrig = false
	if ctOrig {
		tupleSwap(&ctx.flow, ctx.wc)
	}

	var rule Rule
	miss := MissContinue
	for t := int(table); t < numTables; t++ {
		if t == tableInternal {
			continue
		}
		ctx.tableID = uint8(t)
		rule = ctx.br.LookupRule(ctx.version, uint8(t), &ctx.flow, ctx.wc)
		if rule != nil {
			break
		}
		if honorMiss {
			if miss = ctx.br.TableMiss(uint8(t)); miss == MissContinue {
				continue
			}
		}
		break
	}
	if ctOrig {
		tupleSwap(&ctx.flow, ctx.wc)
	}
	ctx.flow.InPort, ctx.flow.SrcPort, ctx.flow.DstPort = oldIn, oldSrc, oldDst

	if rule == nil {
		ctx.tableMiss(miss, mayPacketIn)
		return
	}
	ctx.res.Cache.Rules = append(ctx.res.Cache.Rules, rule)
	var saved *[]*traceNode
	if ctx.trace != nil {
		saved = ctx.trace.enter(nodeTable, ruleText(ctx.tableID, rule))
	}
	if ctx.firstLookup {
		ctx.firstLookup, saved = false, nil
		// A port configured no_recv: the packet is looked up but its
		// actions do not run (Open vSwitch's may_receive).
		if p := ctx.br.Port(ctx.flow.InPort); p != nil && p.Config&PortNoRecv != 0 {
			return
		}
	}
	callerRule, callerCookie := ctx.rule, ctx.cookie
	ctx.runRule(rule, deepens)
	ctx.trace.leave(saved)
	if ctx.freezing {
		// The caller's remaining actions run in the caller's table.
		ctx.unrollTo(oldTable, callerRule, callerCookie)
	}
}

// Open vSwitch has 255 tables; table 254 is its internal table, never
// looked up by a resubmit chain.
const (
	numTables     = 255
	tableInternal = 254
)

// runRule runs rule's actions one resubmit level deeper (if deepens).
func (ctx *context) runRule(rule Rule, deepens bool) {
	oldRule, oldCookie := ctx.rule, ctx.cookie
	ctx.resubmits++
	if deepens {
		ctx.depth++
	}
	ctx.rule, ctx.cookie = rule, rule.Cookie()
	if ctx.cloneRule {
		ctx.cloneRule = false
		ctx.cloneRuleActions(rule.Actions(), ctx.cloneLast)
	} else {
		ctx.doActions(rule.Actions(), true)
	}
	if deepens {
		ctx.depth--
	}
	ctx.rule, ctx.cookie = oldRule, oldCookie
}

// tableMiss is the miss behaviour of rule_dpif_lookup_from_table: a
// packet-in (reason no_match) when the table says so, or the bridge's
// connections want it and the input port allows it; otherwise drop.
func (ctx *context) tableMiss(miss TableMiss, mayPacketIn bool) {
	ctx.firstLookup = false
	send := false
	if mayPacketIn {
		switch miss {
		case MissContinue, MissController:
			p := ctx.br.Port(ctx.flow.InPort)
			send = p != nil && p.Config&PortNoPacketIn == 0
		case MissDefault:
			send = ctx.cfg.PacketInOnMiss
		}
	}
	// Open vSwitch runs an internal rule: no actions, or a controller
	// action with reason implicit miss and the whole packet (the
	// connection's miss_send_len applies when it is sent).
	if !send {
		if ctx.trace != nil {
			saved := ctx.trace.enter(nodeTable, ctx.missText("No match.", 2))
			ctx.trace.report(nodeAction, "drop")
			ctx.trace.leave(saved)
		}
		return
	}
	var saved *[]*traceNode
	if ctx.trace != nil {
		saved = ctx.trace.enter(nodeTable, ctx.missText("No match, and a \"packet-in\" is called for.", 1))
		ctx.trace.action(missAction())
	}
	ctx.controller(controllerArgs{maxLen: 0xffff, reason: ReasonImplicitMiss})
	ctx.trace.leave(saved)
}

// emit appends a datapath action.
func (ctx *context) emit(a dpif.Action) { ctx.res.Actions = append(ctx.res.Actions, a) }

// traceThaw reports resuming a frozen state, as Open vSwitch's
// xlate_actions does under a "thaw" node.
func (ctx *context) traceThaw(fz *Frozen) {
	saved := ctx.trace.enter(nodeThaw, "thaw")
	ctx.trace.report(nodeThaw, fmt.Sprintf("Resuming from table %d", ctx.in.Table))
	list := func(acts []Action) string {
		var parts []string
		for _, a := range acts {
			if _, ok := a.(*unrollXlate); ok {
				continue
			}
			parts = append(parts, ctx.trace.formatOne(a))
		}
		return strings.Join(parts, ",")
	}
	if len(fz.ActionSet) > 0 {
		ctx.trace.report(nodeThaw, "Restoring action set: "+list(fz.ActionSet))
	}
	if len(fz.Actions) > 0 {
		ctx.trace.report(nodeThaw, "Restoring actions: "+list(fz.Actions))
	}
	ctx.trace.leave(saved)
}
