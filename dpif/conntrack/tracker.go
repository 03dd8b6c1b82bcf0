package conntrack

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"gvs/packet"
)

// DefaultMaxConns is Open vSwitch's default connection limit.
const DefaultMaxConns = 3000000

// Tracker is the connection tracker of one datapath. See the package
// documentation for its contract.
//
// Lock order: conn.mu before Tracker.mu (a PMD updating a connection
// may then create one); polMu stands alone.
type Tracker struct {
	cfg  Config
	tbl  connTable
	pol  policyStore
	seed uint64

	// clock is the coarse clock in milliseconds, kept by the expiry
	// goroutine once started; before that each packet reads cfg.Now.
	clock   atomic.Int64
	started atomic.Bool

	maxConns atomic.Uint32
	invalid  atomic.Uint64
	liberal  atomic.Bool // TCP window and sequence checks off
	// wantSweep: a commit found the table full.
	wantSweep atomic.Bool

	exp expectations

	// mu is the writer lock: every change to the table and the fields
	// below.
	mu          sync.Mutex
	n           atomic.Uint32 // changed under mu, read without it
	byProto     [256]uint32
	created     uint64
	expired     uint64
	droppedFull atomic.Uint64
	nextID      uint32
	// zoneCount is each zone's connections (changed under mu, read
	// without it); zoneLimit the limits (DefaultZoneLimit: the default),
	// an immutable snapshot replaced under mu.
	zoneCount *[1 << 16]atomic.Uint32
	zoneLimit atomic.Pointer[map[int32]uint32]

	polMu sync.Mutex // serialises policy writers

	stop chan struct{}
	done chan struct{}
}

var _ Conntrack = (*Tracker)(nil)

// The expiry goroutine walks the whole table every sweepInterval, and
// once there are more than sweepConnsPerSecond connections, less often
// in proportion (up to sweepIntervalMax, Open vSwitch's default sweep):
// a walk touches every connection. A commit refused for a full table
// asks for a sweep sooner (at most every sweepInterval), so a table
// full of expired connections frees itself. sweepBatch is how many
// buckets one hold of the writer lock covers.
const (
	sweepInterval       = time.Second
	sweepIntervalMax    = 20 * time.Second
	sweepConnsPerSecond = 100000
	sweepBatch          = 256
	clockTick           = 5 * time.Millisecond
)

// nextSweepIn is the time to the next sweep with n connections.
func nextSweepIn(n uint32) time.Duration {
	d := time.Duration(n/sweepConnsPerSecond) * time.Second
	return min(max(d, sweepInterval), sweepIntervalMax)
}

// New returns a tracker; call Start to run expiry in the background.
func New(cfg Config) *Tracker {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	t := &Tracker{cfg: cfg, seed: rand.Uint64(), zoneCount: new([1 << 16]atomic.Uint32)}
	t.zoneLimit.Store(&map[int32]uint32{})
	t.tbl.init(1024, t.seed)
	t.pol.p.Store(newPolicies())
	t.maxConns.Store(cfg.MaxConns)
	t.liberal.Store(cfg.TCPLiberal)
	return t
}

// SetTCPSeqCheck turns TCP window and sequence checking on or off
// (dpctl/ct-enable-tcp-seq-chk, ct-disable-tcp-seq-chk); off is
// Config.TCPLiberal.
func (t *Tracker) SetTCPSeqCheck(on bool) { t.liberal.Store(!on) }

// TCPSeqCheck reports whether TCP sequence checking is on
// (dpctl/ct-get-tcp-seq-chk).
func (t *Tracker) TCPSeqCheck() bool { return !t.liberal.Load() }

// Start runs the coarse clock and the expiry goroutine until Close.
func (t *Tracker) Start() {
	t.mu.Lock()
	if t.stop != nil {
		t.mu.Unlock()
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	t.stop, t.done = stop, done
	t.mu.Unlock()
	t.clock.Store(t.cfg.Now().UnixMilli())
	t.started.Store(true)
	go t.run(stop, done)
}

// Close stops the background goroutine; the tracker stays usable (with
// the caller's clock and no expiry sweeps).
func (t *Tracker) Close() {
	t.mu.Lock()
	stop, done := t.stop, t.done
	t.stop = nil
	t.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	t.started.Store(false)
}

func (t *Tracker) run(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(clockTick)
	defer tick.Stop()
	last := time.Now()
	next := last.Add(sweepInterval)
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			t.clock.Store(t.cfg.Now().UnixMilli())
			if now.After(next) || t.wantSweep.Load() && now.Sub(last) >= sweepInterval {
				t.wantSweep.Store(false)
				t.sweep(t.now())
				n := t.n.Load()
				last, next = now, now.Add(nextSweepIn(n))
			}
		}
	}
}

func (t *Tracker) now() int64 {
	if t.started.Load() {
		return t.clock.Load()
	}
	return t.cfg.Now().UnixMilli()
}

// Execute implements Conntrack: Open vSwitch's conntrack_execute for one
// packet.
func (t *Tracker) Execute(b *packet.Buffer, req *Request) {
	k := &b.Key
	zone := req.Zone
	if k.CTState == StateInvalid {
		// Marked by fragment reassembly: no lookup.
		t.writeMD(k, zone, nil, nil, false)
		return
	}
	now := t.now()
	tbl := &t.tbl
	var ctx lookupCtx
	extracted := false
	// A packet an earlier ct of this pass already ran through in this
	// zone (and that found its connection, with no NAT since) is not run
	// through the protocol tracker again: Open vSwitch's process_one_fast
	// on the connection cached in the packet's metadata.
	ctl := algCtlOf(k)
	if k.CTState&StateTracked != 0 && k.CTZone == zone && !req.Force && ctl == HelperNone &&
		k.CTState&(StateSrcNAT|StateDstNAT) == 0 {
		if !extract(b, zone, &ctx) {
			t.markInvalid(k, zone)
			return
		}
		extracted = true
		if c, reply := tbl.lookup(&ctx.key, now); c != nil {
			t.processFast(b, req, c, reply, ctx.related)
			return
		}
	}

	// Entering a new zone resets the state.
	if k.CTState != 0 && k.CTZone != zone {
		k.CTState = 0
	}
	if !extracted && !extract(b, zone, &ctx) {
		t.markInvalid(k, zone)
		return
	}

	var c *conn
	var reply bool
	if k.CTState&(StateSrcNAT|StateDstNAT) != 0 {
		// NATed by an earlier ct: the packet's tuple is the other
		// direction's key reversed.
		rk := ctx.key.reverse()
		if c, reply = tbl.lookup(&rk, now); c != nil {
			reply = !reply
			ctx.key = c.key[dir(reply)]
		}
	} else {
		c, reply = tbl.lookup(&ctx.key, now)
	}

	var old *conn     // a connection over, to unlink when its successor is made
	mdLoaded := false // k.CTMark and CTLabel already read from c
	if req.Force && reply && c != nil {
		// The connection was committed from the other side: end it and
		// start one in this direction.
		c.expiration.Store(0)
		old, c, reply = c, nil, false
	}

	createNew := false
	ftpDone := false
	switch {
	case c != nil:
		if c.helper == HelperFTP && ctl == HelperFTP && !ctx.related {
			ftpDone = t.ftpBeforeUpdate(b, c, reply, req.NAT != nil)
		}
		createNew = t.updateState(k, &ctx, c, reply, now)
		mdLoaded = !createNew && !ctx.related
		if createNew {
			old = c
		}
		if req.NAT != nil && !createNew {
			t.handleNAT(b, c, zone, reply, ctx.related)
		}
	default:
		if oc := t.origTupleConn(tbl, k, &ctx, req, now); oc != nil {
			c = oc
			createNew = t.updateState(k, &ctx, c, false, now)
			if createNew {
				old = c
			}
		} else if ctx.related {
			// An ICMP error about no connection creates none.
			k.CTState = StateInvalid
			t.invalid.Add(1)
		} else {
			createNew = true
		}
	}
	var exp *expectation
	if createNew {
		c, exp = t.connNotFound(b, &ctx, req, now, old, ctl)
		mdLoaded = false
		reply = false
	}

	t.writeMD(k, zone, c, &ctx.key, mdLoaded)
	if c == nil && exp != nil {
		// Not committed, yet expected: the parent's mark, label and
		// original tuple.
		k.CTMark, k.CTLabel = exp.mark, exp.label
		t.writeOrigTuple(k, &exp.parentKey)
	}
	if c != nil && (req.SetMark || req.SetLabel) {
		t.setMarkLabel(k, c, req)
	}
	if c != nil && c.helper != HelperNone && !ctx.related {
		switch {
		case ctl == HelperFTP && c.helper == HelperFTP && !ftpDone:
			if !t.ftpAfter(b, c, reply, req.NAT != nil) {
				k.CTState = StateInvalid | StateTracked
				t.invalid.Add(1)
			}
		case ctl == HelperTFTP && c.helper == HelperTFTP:
			t.tftpExpect(c, reply)
		}
	}
}

func dir(reply bool) int {
	if reply {
		return 1
	}
	return 0
}

func (t *Tracker) markInvalid(k *packet.Key, zone uint16) {
	k.CTState = StateInvalid
	t.invalid.Add(1)
	t.writeMD(k, zone, nil, nil, false)
}

// processFast is process_one_fast: NAT as asked, the zone, mark and
// label; the state stays as the earlier ct left it.
func (t *Tracker) processFast(b *packet.Buffer, req *Request, c *conn, reply, related bool) {
	if req.NAT != nil {
		t.handleNAT(b, c, req.Zone, reply, related)
	}
	k := &b.Key
	k.CTZone = req.Zone
	c.mu.Lock()
	k.CTMark, k.CTLabel = c.mark, c.label
	c.mu.Unlock()
	if req.SetMark || req.SetLabel {
		t.setMarkLabel(k, c, req)
	}
}

func (t *Tracker) setMarkLabel(k *packet.Key, c *conn, req *Request) {
	c.mu.Lock()
	if c.algRelated {
		// An expected connection keeps its parent's.
		k.CTMark, k.CTLabel = c.mark, c.label
		c.mu.Unlock()
		return
	}
	if req.SetMark {
		k.CTMark = req.Mark | k.CTMark&^req.MarkMask
		c.mark = k.CTMark
	}
	if req.SetLabel {
		for i := range k.CTLabel {
			k.CTLabel[i] = req.Label[i] | k.CTLabel[i]&^req.LabelMask[i]
		}
		c.label = k.CTLabel
	}
	c.mu.Unlock()
}

// updateState runs a packet of connection c through its protocol
// tracker and sets the state bits (conn_update_state). It reports
// whether the connection is over and a new one must be created.
func (t *Tracker) updateState(k *packet.Key, ctx *lookupCtx, c *conn, reply bool, now int64) bool {
	if ctx.related {
		k.CTState |= StateRelated
		if reply {
			k.CTState |= StateReply
		}
		return false
	}
	if c.algRelated {
		k.CTState |= StateRelated
	}
	switch t.connUpdate(c, ctx, reply, now, k) {
	case updateValid:
		k.CTState |= StateEstablished
		k.CTState &^= StateNew
		if reply {
			k.CTState |= StateReply
		}
	case updateInvalid:
		k.CTState = StateInvalid
		t.invalid.Add(1)
	case updateNew:
		c.expiration.Store(0)
		return true
	case updateValidNew:
		k.CTState |= StateNew
	}
	return false
}

// connUpdate is the protocol trackers' conn_update, under the
// connection's lock.
// It also copies the connection's mark and label into k, under the
// same lock.
func (t *Tracker) connUpdate(c *conn, ctx *lookupCtx, reply bool, now int64, k *packet.Key) updateResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	k.CTMark, k.CTLabel = c.mark, c.label
	var res updateResult
	tm := -1
	switch {
	case c.key[0].proto == packet.ProtoTCP:
		res, tm = tcpUpdate(c, &ctx.seg, reply, t.liberal.Load())
	case isICMP(&c.key[0]):
		res = updateValid
		if reply && c.state == icmpFirst {
			c.state = icmpReply
		} else if c.state == icmpFirst {
			res = updateValidNew
		}
		tm = tmICMPFirst + int(c.state)
	default:
		if reply && c.state != otherBidir {
			c.state = otherBidir
		} else if c.state == otherFirst {
			c.state = otherMultiple
		}
		tm = tmOtherFirst + int(c.state)
		res = updateValidNew
		if c.state == otherBidir {
			res = updateValid
		}
	}
	if tm >= 0 {
		c.expiration.Store(now + t.pol.p.Load().timeout(c.tpID, tm))
	}
	return res
}

func isICMP(k *connKey) bool {
	return (!k.v6 && k.proto == packet.ProtoICMP) || (k.v6 && k.proto == packet.ProtoICMPv6)
}

func validNew(ctx *lookupCtx) bool {
	k := &ctx.key
	switch {
	case k.proto == packet.ProtoTCP:
		return tcpValidNew(&ctx.seg)
	case !k.v6 && k.proto == packet.ProtoICMP:
		return k.stype == icmpEchoRequest || k.stype == icmpInfoRequest || k.stype == icmpTimestamp
	case k.v6 && k.proto == packet.ProtoICMPv6:
		return k.stype == icmp6EchoRequest
	}
	return true
}

// origTupleConn finds, for a packet NATed by an earlier ct that carries
// the original tuple in its key, the connection by that tuple
// (check_orig_tuple).
func (t *Tracker) origTupleConn(tbl *connTable, k *packet.Key, ctx *lookupCtx, req *Request, now int64) *conn {
	if k.CTState&(StateSrcNAT|StateDstNAT) == 0 || k.CTNwProto == 0 || req.NAT != nil {
		return nil
	}
	key := connKey{v6: ctx.key.v6, proto: k.CTNwProto, zone: k.CTZone}
	if key.v6 {
		key.src, key.dst = k.CTIPv6Src, k.CTIPv6Dst
	} else {
		copy(key.src[:4], k.CTNwSrc[:])
		copy(key.dst[:4], k.CTNwDst[:])
	}
	if isICMP(&ctx.key) {
		key.sport, key.dport = ctx.key.sport, ctx.key.dport
		key.stype = uint8(k.CTTpSrc)
		if key.v6 {
			key.dtype = reverseICMP6Type(key.stype)
		} else {
			key.dtype = reverseICMPType(key.stype)
		}
	} else {
		key.sport, key.dport = k.CTTpSrc, k.CTTpDst
	}
	c, _ := tbl.lookup(&key, now)
	return c
}

// connNotFound handles a packet no connection has (conn_not_found):
// +new, or +inv for a packet that cannot open one; committed when
// req.Commit and the limits allow, under the writer lock. Only a commit
// takes the lock, and a table or zone at its limit refuses without it,
// so a flood of new connections does not serialise the PMDs. It also
// returns the expectation the connection meets, if any.
func (t *Tracker) connNotFound(b *packet.Buffer, ctx *lookupCtx, req *Request, now int64, old *conn, ctl Helper) (*conn, *expectation) {
	k := &b.Key
	if !validNew(ctx) {
		k.CTState = StateInvalid
		t.invalid.Add(1)
		return nil, nil
	}
	exp := t.exp.lookup(&ctx.key)
	k.CTState = StateNew
	if exp != nil {
		k.CTState |= StateRelated
	}
	if !req.Commit {
		// The connection it replaces, if any, is expired already
		// (lookups skip it) and goes at the next sweep.
		return nil, exp
	}
	if old == nil && t.full(ctx.key.zone) {
		t.refused()
		return nil, exp
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old != nil {
		// Unlink it now rather than at the next sweep, so it does not
		// count against the limits.
		t.removeConn(old)
		t.expired++
	}
	tbl := &t.tbl
	if c, _ := tbl.lookup(&ctx.key, now); c != nil {
		return c, nil // another PMD made it meanwhile
	}
	if t.full(ctx.key.zone) {
		t.refused()
		return nil, exp
	}
	pol := t.pol.p.Load()
	c := &conn{admitZone: int32(ctx.key.zone)}
	c.key[0] = ctx.key
	c.key[1] = ctx.key.reverse()
	c.tpID = pol.policyFor(req)
	if algHelperAllowed(req.Helper, ctl) {
		c.helper = req.Helper
	}
	if exp != nil {
		c.algRelated, c.parent = true, exp.parentKey
		c.mark, c.label = exp.mark, exp.label
	}
	var tm int
	switch {
	case ctx.key.proto == packet.ProtoTCP:
		tm = tcpNew(c, &ctx.seg)
	case isICMP(&ctx.key):
		c.state, tm = icmpFirst, tmICMPFirst
	default:
		c.state, tm = otherFirst, tmOtherFirst
	}
	c.expiration.Store(now + pol.timeout(c.tpID, tm))
	if n := req.NAT; n != nil && exp != nil {
		// The ALG says where the data connection goes.
		reply, kind := exp.NATReply(natTuple(&c.key[1]))
		c.key[1] = withTuple(c.key[1], &reply)
		c.nat = natSrc
		if kind == NATDst {
			c.nat = natDst
		}
		t.natPacket(b, c, false, ctx.related)
	} else if n != nil && n.Kind != NATApply {
		if !t.natBind(tbl, c, n, now) {
			// Tuple space exhausted: the packet stays +new, uncommitted.
			return nil, exp
		}
		t.natPacket(b, c, false, ctx.related)
	}
	t.nextID++
	c.id = t.nextID
	t.insertConn(c)
	return c, exp
}

// full reports whether zone or the table is at its limit; exact under
// t.mu, a hint without it.
func (t *Tracker) full(zone uint16) bool {
	if lim := t.zoneLimitOf(zone); lim != 0 && t.zoneCount[zone].Load() >= lim {
		return true
	}
	return t.n.Load() >= t.maxConns.Load()
}

// refused counts a commit refused for a full table or zone, and asks for
// a sweep.
func (t *Tracker) refused() {
	t.droppedFull.Add(1)
	if !t.wantSweep.Load() {
		t.wantSweep.Store(true)
	}
}

// insertConn publishes c; t.mu held.
func (t *Tracker) insertConn(c *conn) {
	t.tbl.insert(c)
	t.n.Add(1)
	t.byProto[c.key[0].proto]++
	t.zoneCount[c.key[0].zone].Add(1)
	t.created++
}

// removeConn unlinks c; t.mu held.
func (t *Tracker) removeConn(c *conn) {
	if c.dead.Swap(true) {
		return
	}
	t.tbl.remove(c)
	if c.helper != HelperNone {
		t.exp.dropParent(&c.key[0])
	}
	t.n.Add(^uint32(0))
	t.byProto[c.key[0].proto]--
	t.zoneCount[c.key[0].zone].Add(^uint32(0))
}

// writeMD sets the packet's conntrack fields (write_ct_md): +trk, the
// zone, the connection's mark and label, and the original direction's
// tuple (the connection's, else the packet's own key, else none).
func (t *Tracker) writeMD(k *packet.Key, zone uint16, c *conn, key *connKey, mdLoaded bool) {
	k.CTState |= StateTracked
	k.CTZone = zone
	if c != nil {
		if !mdLoaded {
			c.mu.Lock()
			k.CTMark, k.CTLabel = c.mark, c.label
			c.mu.Unlock()
		}
		key = &c.key[0]
		if c.algRelated {
			key = &c.parent
		}
	} else {
		k.CTMark, k.CTLabel = 0, [16]byte{}
	}
	t.writeOrigTuple(k, key)
}

// writeOrigTuple sets the Key's ct original tuple from key (nil: none).
func (t *Tracker) writeOrigTuple(k *packet.Key, key *connKey) {
	k.CTNwSrc, k.CTNwDst = [4]byte{}, [4]byte{}
	k.CTIPv6Src, k.CTIPv6Dst = [16]byte{}, [16]byte{}
	if key == nil {
		k.CTNwProto, k.CTTpSrc, k.CTTpDst = 0, 0, 0
		return
	}
	if key.v6 {
		k.CTIPv6Src, k.CTIPv6Dst = key.src, key.dst
	} else {
		k.CTNwSrc, k.CTNwDst = [4]byte(key.src[:4]), [4]byte(key.dst[:4])
	}
	k.CTNwProto = key.proto
	if isICMP(key) {
		// The ICMP type and code of the original direction (the code of
		// a tracked echo is 0).
		k.CTTpSrc, k.CTTpDst = uint16(key.stype), 0
	} else {
		k.CTTpSrc, k.CTTpDst = key.sport, key.dport
	}
}

// handleNAT applies c's binding to a packet of it, unless an earlier ct
// in this zone already did (handle_nat).
func (t *Tracker) handleNAT(b *packet.Buffer, c *conn, zone uint16, reply, related bool) {
	k := &b.Key
	if c.nat == 0 {
		return
	}
	if k.CTState&(StateSrcNAT|StateDstNAT) != 0 && zone == k.CTZone {
		return
	}
	k.CTState &^= StateSrcNAT | StateDstNAT
	t.natPacket(b, c, reply, related)
}

// natPacket rewrites a packet of c (nat_packet): a packet in the
// original direction takes the reply key's addresses reversed, a reply
// the original key's; +snat/+dnat as the rewrite in this direction.
func (t *Tracker) natPacket(b *packet.Buffer, c *conn, reply, related bool) {
	action := c.nat
	to := c.key[1].reverse()
	if reply {
		action = action.reverse()
		to = c.key[0].reverse()
	}
	if action&natSrc != 0 {
		b.Key.CTState |= StateSrcNAT
	} else if action&natDst != 0 {
		b.Key.CTState |= StateDstNAT
	}
	natRewrite(b, &to, action, related)
}
