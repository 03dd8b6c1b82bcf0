package dpif

import (
	"slices"

	"gvs/packet"
)

// UpcallResult is the handler's decision about a packet that missed.
type UpcallResult uint8

const (
	// UpcallDrop drops the packet and installs nothing.
	UpcallDrop UpcallResult = iota
	// UpcallInstall installs the megaflow (Key masked by Mask -> Actions)
	// and executes Actions on the packet. The mask is made
	// to match recirc_id exactly. If a flow already covers the packet
	// (another PMD installed it meanwhile), that flow is used instead.
	UpcallInstall
	// UpcallExecute executes Actions on this packet only.
	UpcallExecute
	// UpcallSlow asks for the slow path: the datapath copies the packet
	// into the PMD's bounded slow queue and later calls the handler's
	// SlowUpcall from another goroutine, where it may block. A full queue
	// drops the packet, counted as a lost upcall.
	UpcallSlow
)

// Upcall is one miss, passed to the handler; the handler answers by
// filling Mask and Actions and returning an UpcallResult. The
// datapath reuses an Upcall (and the capacity of its slices) for the next
// miss: the handler must not keep it, Key or Packet after returning.
type Upcall struct {
	// PMD is the index of the PMD that missed; -1 in SlowUpcall.
	PMD int
	// Key is the packet's parsed key (InPort set); read-only.
	Key *packet.Key
	// Packet is the packet; read-only, valid during the call.
	Packet *packet.Buffer

	Mask    packet.Mask
	Actions Actions
}

// UpcallHandler decides about misses. Upcall runs synchronously on the
// PMD goroutine that missed, concurrently on several PMDs: it must be
// quick, must not block, and must synchronise its own state.
type UpcallHandler interface {
	Upcall(u *Upcall) UpcallResult
}

// SlowUpcallHandler is implemented by handlers that return UpcallSlow.
// SlowUpcall runs on the PMD's slow-path goroutine and may block; it must
// not return UpcallSlow.
type SlowUpcallHandler interface {
	SlowUpcall(u *Upcall) UpcallResult
}

// UserspaceHandler is implemented by upcall handlers (the value given
// to SetUpcallHandler) that receive the packets of userspace actions.
// Without it, such packets are dropped.
type UserspaceHandler interface {
	// UserspaceAction runs on the slow-path goroutine of the PMD that
	// executed the action (or, for Execute, on the caller's goroutine
	// after the datapath's locks are released); it may block.
	UserspaceAction(u *UserspaceUpcall)
}

// UserspaceUpcall is one packet sent up by a userspace action. The
// datapath reuses it: the handler must not keep it, Packet or Key.
type UserspaceUpcall struct {
	// PMD is the index of the PMD that executed the action; -1 for the
	// non-PMD context.
	PMD int
	// Packet is the frame as it was when the action ran.
	Packet []byte
	// Key is Packet parsed, with the metadata it had then (in_port,
	// recirc_id, dp_hash, pkt_mark...).
	Key *packet.Key
	// Cookie is the action's cookie; read-only.
	Cookie *UserspaceCookie
}

// slowUpcall is a packet waiting for the slow path: a copy, because the
// original buffer belongs to the PMD's pool and goroutine. key keeps
// the packet's metadata (recirc_id and the rest) for the re-parse;
// cookie is set for a userspace action's packet, nil for a miss.
type slowUpcall struct {
	frame  []byte
	meta   packet.Meta
	key    packet.Key
	cookie *UserspaceCookie
}

func (u *Upcall) reset(pmd int, b *packet.Buffer) {
	u.PMD = pmd
	u.Key = &b.Key
	u.Packet = b
	u.Mask = packet.Mask{}
	u.Actions = u.Actions[:0]
}

// upcall hands a miss to the handler on the PMD and carries out its
// answer. It owns b. (Packets are classified one at a time, so a flow an
// upcall installs is already found for the next packet of the batch.)
// Each recirculation depth has its own Upcall: a recirculated packet may
// miss while the answer that recirculated it is still being executed.
func (p *pmd) upcall(b *packet.Buffer) {
	hb := p.dp.handler.Load()
	if hb == nil {
		p.lostUpcall(b)
		return
	}
	u := &p.ctx.ups[p.ctx.depth]
	u.reset(p.id, b)
	p.cnt.upcalls++
	switch hb.h.Upcall(u) {
	case UpcallInstall:
		// The packet is executed apart from the new flow, whose counters
		// start at zero (packets:0, used:never until its next packet), as
		// Open vSwitch's: the handler credited the rules with it.
		f := p.dp.install(u)
		p.ctx.execute(b, *f.actions.Load())
	case UpcallExecute:
		p.ctx.execute(b, u.Actions)
	case UpcallSlow:
		p.queueSlow(b, nil)
		p.pool.Put(b)
	default:
		p.pool.Put(b)
	}
	u.Key, u.Packet = nil, nil
}

// queueSlow copies b (frame, metadata, key) into the slow queue, with
// cookie for a userspace action, or counts a lost upcall. The caller
// keeps b.
func (p *pmd) queueSlow(b *packet.Buffer, cookie *UserspaceCookie) {
	select {
	case s := <-p.slowFree:
		s.frame = append(s.frame[:0], b.Data()...)
		s.meta = b.Meta
		s.key = b.Key
		s.cookie = cookie
		p.slow <- s
	default:
		p.cnt.lostUpcalls++
		if pc := p.ctx.ports.counters(b.InPort, p.id); pc != nil {
			pc.lostUpcalls.Add(1)
		}
	}
}

// lostUpcall drops a miss nobody could take, counting it for the PMD and
// the input port, and frees b.
func (p *pmd) lostUpcall(b *packet.Buffer) {
	p.cnt.lostUpcalls++
	if pc := p.ctx.ports.counters(b.InPort, p.id); pc != nil {
		pc.lostUpcalls.Add(1)
	}
	p.pool.Put(b)
}

// runSlow is the PMD's slow-path goroutine.
func (p *pmd) runSlow() {
	defer p.dp.pmdWG.Done()
	var u Upcall
	for {
		select { // stop first: what is still queued stays for SetPMDConfig
		case <-p.stop:
			return
		default:
		}
		select {
		case <-p.stop:
			return
		case s := <-p.slow:
			if s.cookie != nil {
				p.dp.deliverUserspace(p.id, s)
			} else {
				p.dp.slowUpcall(&u, s)
			}
			s.cookie = nil
			p.slowFree <- s
		}
	}
}

// slowUpcall runs the handler's slow path for one queued packet and
// executes the answer in the non-PMD context.
func (dp *Datapath) slowUpcall(u *Upcall, s *slowUpcall) {
	hb := dp.handler.Load()
	if hb == nil {
		return
	}
	sh, ok := hb.h.(SlowUpcallHandler)
	if !ok {
		return
	}
	b := packet.NewBuffer(packet.DefaultHeadroom, len(s.frame))
	b.SetLen(copy(b.Room(), s.frame))
	b.Meta = s.meta
	b.Key = s.key // the metadata; Parse redoes the rest
	b.Parse()
	u.reset(-1, b)
	res := sh.SlowUpcall(u)
	var actions Actions
	switch res {
	case UpcallInstall:
		actions = *dp.install(u).actions.Load()
	case UpcallExecute:
		actions = u.Actions
	default:
		return
	}
	dp.executeNonPMD(b.Data(), b.Meta, &b.Key, actions)
}

// deliverUserspace hands a userspace action's packet to the handler, if
// it takes them.
func (dp *Datapath) deliverUserspace(pmd int, s *slowUpcall) {
	hb := dp.handler.Load()
	if hb == nil {
		return
	}
	uh, ok := hb.h.(UserspaceHandler)
	if !ok {
		return
	}
	var k packet.Key
	k = s.key
	packet.Parse(s.frame, &k)
	uh.UserspaceAction(&UserspaceUpcall{PMD: pmd, Packet: s.frame, Key: &k, Cookie: s.cookie})
}

// install links the handler's megaflow, or returns the live flow that
// already covers the packet (another PMD raced us with the same or an
// overlapping megaflow): under the flow writer's lock, a packet is
// looked up again before anything is installed for it, as Open
// vSwitch's handle_packet_upcall does, so two PMDs missing on the same
// flow install it once.
func (dp *Datapath) install(u *Upcall) *flow {
	exactMetadata(&u.Mask)
	var mk packet.Key
	u.Key.ApplyMask(&u.Mask, &mk)
	dp.flowMu.Lock()
	defer dp.flowMu.Unlock()
	if f, _ := dp.cls.lookup(u.Key); f != nil {
		return f
	}
	if f := dp.cls.get(&mk, &u.Mask); f != nil {
		return f
	}
	return dp.insertLocked(&mk, &u.Mask, u.Key, slices.Clone(u.Actions))
}

// exactMetadata makes a megaflow mask match recirc_id exactly, as every
// megaflow of Open vSwitch's netdev datapath does: a packet recirculated
// with one id must never hit a flow meant for another pass.
func exactMetadata(m *packet.Mask) {
	m.RecircID = ^uint32(0)
}
