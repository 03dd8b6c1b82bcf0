package ipf

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"gvs/dpif/conntrack"
	"gvs/packet"
)

// Defaults and bounds, as Open vSwitch's lib/ipf.c.
const (
	DefaultMinFragV4 = 1200
	DefaultMinFragV6 = 1280
	// MinFragLowerBound is the smallest min-frag ipf-set-min-frag takes
	// (both families).
	MinFragLowerBound = 400
	DefaultMaxFrags   = 1000
	// MaxFragsUpperBound is the largest ipf-set-max-nfrags takes.
	MaxFragsUpperBound = 5000
	// ListTimeout is how long an incomplete list waits for its
	// fragments; a list stuck PurgeDelay past that is purged.
	ListTimeout = 15 * time.Second
	PurgeDelay  = 10 * time.Second
	// maxV6ListLen bounds an IPv6 list (Open vSwitch's
	// IPF_IPV6_MAX_FRAG_LIST_SIZE); IPv4's follows from min-frag.
	maxV6ListLen = 65535
)

// Errors of the setters; appctl prints Open vSwitch's texts for them.
var (
	ErrMinFragTooSmall  = errors.New("ipf: minimum fragment size below the lower bound")
	ErrMaxFragsTooLarge = errors.New("ipf: maximum fragments above the upper bound")
)

// Verdict tells the caller of Preprocess what became of the packet.
type Verdict uint8

const (
	// Pass: not a fragment ipf takes; run the tracker on it as usual.
	Pass Verdict = iota
	// Invalid: a malformed, too small or overlapping fragment; its ct
	// fields are set (+inv+trk, the zone) as the tracker would set them:
	// skip the tracker and continue with the packet.
	Invalid
	// Held: ipf copied the fragment; the action is done with the packet.
	Held
	// Reassembled: the fragment completed its set; the action is done
	// with the packet, and the returned Reassembly goes through the
	// tracker and then Postprocess.
	Reassembled
)

// Allocator hands out buffers owned by the caller; *packet.Pool is one.
type Allocator interface {
	Get() *packet.Buffer
}

var _ Allocator = (*packet.Pool)(nil)

// listKey is Open vSwitch's ipf_list_key. IPv4 addresses use the first
// four bytes.
type listKey struct {
	src, dst [16]byte
	recircID uint32
	id       uint32 // IPv4 identification, IPv6 32-bit identification
	dlType   uint16
	zone     uint16
	proto    uint8 // IPv4 only
}

// listState follows ipf_list_state; the names are dpctl's.
type listState uint8

const (
	stateOther listState = iota
	stateFirst
	stateLast
	stateFirstLast
	stateCompleted
	stateReassFail
)

var stateNames = [...]string{
	stateOther:     "other frag",
	stateFirst:     "first frag",
	stateLast:      "last frag",
	stateFirstLast: "first/last frag",
	stateCompleted: "complete",
	stateReassFail: "reassemble fail",
}

// heldFrag is one fragment's copy.
type heldFrag struct {
	data        []byte // the frame without padding
	meta        packet.Meta
	key         packet.Key
	dataOff     int
	first, last int
}

// fragList is the fragments of one packet (ipf_list).
type fragList struct {
	key        listKey
	v6         bool
	state      listState
	expiration int64 // ns, on the IPF's clock
	frags      []heldFrag
	// fragHdrOff and prevNextOff of the first fragment (IPv6).
	fragHdrOff, prevNextOff int
	// The lists waiting for fragments, oldest first (creation order is
	// expiry order: every list gets the same timeout); completed lists
	// stay in it too, until handed back or purged.
	prev, next *fragList
	reass      *Reassembly // while completed
}

// Reassembly is a reassembled packet on its way through the tracker.
type Reassembly struct {
	// Packet is the whole IP packet, parsed, with the completing
	// fragment's metadata.
	Packet *packet.Buffer
	list   *fragList
}

type family struct {
	enabled   atomic.Bool
	minFrag   atomic.Uint32
	accepted  atomic.Uint64
	completed atomic.Uint64
	expired   atomic.Uint64
	tooSmall  atomic.Uint64
	overlap   atomic.Uint64
	purged    atomic.Uint64
}

// IPF is one datapath's fragment reassembler.
type IPF struct {
	now func() time.Time

	v4, v6   family
	maxFrags atomic.Uint32
	nfrag    atomic.Int64 // fragments held
	noBuffer atomic.Uint64
	reassErr atomic.Uint64

	mu        sync.Mutex
	lists     map[listKey]*fragList
	head      *fragList // oldest
	tail      *fragList
	maxV4List int

	spare     []*fragList // lists to reuse (their frags keep their capacity)
	reassPool sync.Pool   // *Reassembly with a buffer large enough for 64 KiB
	// spareBytes are fragment copies of smallFrame capacity to reuse.
	spareBytes [][]byte

	stop chan struct{}
	done chan struct{}
}

// smallFrame is the capacity of pooled fragment copies: any fragment of
// a 1500-byte MTU (with VLAN tags) fits; longer ones get their own.
const smallFrame = 2048

// New returns an IPF with Open vSwitch's defaults: both families
// enabled, min-frag 1200 (IPv4) and 1280 (IPv6), 1000 fragments at most.
// now is its clock (nil: time.Now).
func New(now func() time.Time) *IPF {
	if now == nil {
		now = time.Now
	}
	f := &IPF{now: now, lists: make(map[listKey]*fragList)}
	f.v4.enabled.Store(true)
	f.v6.enabled.Store(true)
	f.v4.minFrag.Store(DefaultMinFragV4)
	f.v6.minFrag.Store(DefaultMinFragV6)
	f.maxV4List = maxV4ListLen(DefaultMinFragV4)
	f.maxFrags.Store(DefaultMaxFrags)
	f.reassPool.New = func() any {
		return &Reassembly{Packet: packet.NewBuffer(packet.DefaultHeadroom, packet.DefaultFrameSize)}
	}
	return f
}

// maxV4ListLen is how many fragments of at least minFrag bytes a 64 KiB
// IPv4 packet can have.
func maxV4ListLen(minFrag uint32) int {
	per := int(minFrag) - ipv4MaxHdr
	return (ipPacketMax - ipv4MaxHdr + per - 1) / per
}

func (f *IPF) fam(v6 bool) *family {
	if v6 {
		return &f.v6
	}
	return &f.v4
}

// SetEnabled turns reassembly of one family on or off
// (dpctl/ipf-set-enabled, ipf-set-disabled). Fragments already held stay
// until completed or expired.
func (f *IPF) SetEnabled(v6, on bool) { f.fam(v6).enabled.Store(on) }

// SetMinFrag sets the smallest IP packet a fragment other than the last
// may be (dpctl/ipf-set-min-frag); below MinFragLowerBound is refused.
func (f *IPF) SetMinFrag(v6 bool, n uint32) error {
	if n < MinFragLowerBound {
		return ErrMinFragTooSmall
	}
	f.mu.Lock()
	f.fam(v6).minFrag.Store(n)
	if !v6 {
		f.maxV4List = maxV4ListLen(n)
	}
	f.mu.Unlock()
	return nil
}

// SetMaxFrags bounds the fragments held at once (dpctl/ipf-set-max-nfrags);
// above MaxFragsUpperBound is refused.
func (f *IPF) SetMaxFrags(n uint32) error {
	if n > MaxFragsUpperBound {
		return ErrMaxFragsTooLarge
	}
	f.maxFrags.Store(n)
	return nil
}

// Preprocess looks at b before the tracker does; see the package
// documentation. b must be parsed (Key, Offsets). zone is the ct
// action's. It never keeps b.
func (f *IPF) Preprocess(b *packet.Buffer, zone uint16) (Verdict, *Reassembly) {
	if b.Key.IPFrag&packet.FragAny == 0 {
		return Pass, nil
	}
	return f.preprocessFragment(b, zone)
}

func (f *IPF) preprocessFragment(b *packet.Buffer, zone uint16) (Verdict, *Reassembly) {
	var v6 bool
	switch b.Key.EtherType {
	case packet.EtherTypeIPv4:
	case packet.EtherTypeIPv6:
		v6 = true
	default:
		return Pass, nil
	}
	fam := f.fam(v6)
	if !fam.enabled.Load() {
		return Pass, nil
	}
	var fi fragInfo
	var c classify
	if v6 {
		c = inspectV6(b.Data(), int(b.Offsets.L3), fam.minFrag.Load(), &fi)
	} else {
		c = inspectV4(b.Data(), int(b.Offsets.L3), fam.minFrag.Load(), &fi)
	}
	switch c {
	case notFragment:
		return Pass, nil
	case tooSmall:
		fam.tooSmall.Add(1)
		markInvalid(b, zone)
		return Invalid, nil
	case badFragment:
		markInvalid(b, zone)
		return Invalid, nil
	}
	fi.key.zone = zone
	fi.key.recircID = b.Key.RecircID

	now := f.now().UnixNano()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expireLocked(now, 1)
	if f.nfrag.Load() >= int64(f.maxFrags.Load()) {
		return Pass, nil
	}
	l := f.lists[fi.key]
	maxLen := f.maxV4List
	if v6 {
		maxLen = maxV6ListLen
	}
	if l == nil {
		l = f.newListLocked()
		l.key, l.v6, l.expiration = fi.key, v6, now+int64(ListTimeout)
		f.lists[fi.key] = l
		f.pushLocked(l)
	} else if l.state == stateCompleted || l.state == stateReassFail {
		return Pass, nil
	} else if len(l.frags) >= maxLen {
		return Pass, nil
	}
	for i := range l.frags {
		if fi.first <= l.frags[i].last && fi.last >= l.frags[i].first {
			fam.overlap.Add(1)
			markInvalid(b, zone)
			return Invalid, nil
		}
	}
	l.frags = append(l.frags, f.hold(b, &fi))
	if fi.isFirst {
		l.fragHdrOff, l.prevNextOff = fi.fragHdrOff, fi.prevNextOff
	}
	f.nfrag.Add(1)
	fam.accepted.Add(1)

	switch l.state {
	case stateOther:
		switch {
		case fi.isFirst:
			l.state = stateFirst
		case fi.isLast:
			l.state = stateLast
		}
	case stateFirst:
		if fi.isLast {
			l.state = stateFirstLast
		}
	case stateLast:
		if fi.isFirst {
			l.state = stateFirstLast
		}
	}
	if l.state != stateFirstLast || !l.complete() {
		return Held, nil
	}
	r := f.reassPool.Get().(*Reassembly)
	if !l.reassemble(r.Packet, b) {
		f.reassPool.Put(r)
		f.reassErr.Add(1)
		l.state = stateReassFail
		return Held, nil
	}
	l.state = stateCompleted
	r.list = l
	l.reass = r
	return Reassembled, r
}

// markInvalid sets b's ct fields as the tracker does for a packet it
// cannot track (Open vSwitch's write_ct_md with no connection).
func markInvalid(b *packet.Buffer, zone uint16) {
	k := &b.Key
	k.CTState = conntrack.StateInvalid | conntrack.StateTracked
	k.CTZone = zone
	k.CTMark = 0
	k.CTLabel = [16]byte{}
	k.CTNwProto = 0
	k.CTNwSrc, k.CTNwDst = [4]byte{}, [4]byte{}
	k.CTIPv6Src, k.CTIPv6Dst = [16]byte{}, [16]byte{}
	k.CTTpSrc, k.CTTpDst = 0, 0
}

// hold copies b's frame (without padding) and metadata. Lock held.
func (f *IPF) hold(b *packet.Buffer, fi *fragInfo) heldFrag {
	var data []byte
	switch n := len(f.spareBytes); {
	case fi.end > smallFrame:
		data = make([]byte, fi.end)
	case n > 0:
		data = f.spareBytes[n-1][:fi.end]
		f.spareBytes = f.spareBytes[:n-1]
	default:
		data = make([]byte, fi.end, smallFrame)
	}
	copy(data, b.Data()[:fi.end])
	return heldFrag{data: data, meta: b.Meta, key: b.Key, dataOff: fi.dataOff, first: fi.first, last: fi.last}
}

// maxSpareBytes bounds the fragment copies kept for reuse.
const maxSpareBytes = 256

// releaseLocked keeps h's copy for reuse (when of the usual size).
func (f *IPF) releaseLocked(h *heldFrag) {
	if cap(h.data) == smallFrame && len(f.spareBytes) < maxSpareBytes {
		f.spareBytes = append(f.spareBytes, h.data[:0])
	}
	h.data = nil
}

// complete sorts the list and reports whether it covers its packet from
// the first byte to the last fragment without gaps.
func (l *fragList) complete() bool {
	slices.SortFunc(l.frags, func(a, b heldFrag) int { return a.first - b.first })
	if l.frags[0].first != 0 {
		return false
	}
	for i := 1; i < len(l.frags); i++ {
		if l.frags[i].first != l.frags[i-1].last+1 {
			return false
		}
	}
	return true
}

// Postprocess emits r's fragments after the tracker: each a copy from
// alloc of a held fragment, with r.Packet's conntrack fields and its
// (possibly NATed) addresses, the first one also with its L4 bytes, parsed
// again. It appends them to out in offset order and returns out. r is the
// IPF's again afterwards.
func (f *IPF) Postprocess(r *Reassembly, alloc Allocator, out []*packet.Buffer) []*packet.Buffer {
	f.mu.Lock()
	l := r.list
	r.list = nil
	if l == nil || l.reass != r || f.lists[l.key] != l {
		// Purged while the tracker had it.
		f.mu.Unlock()
		f.reassPool.Put(r)
		return out
	}
	l.reass = nil
	delete(f.lists, l.key)
	f.unlinkLocked(l)
	f.mu.Unlock()
	// l is out of every structure: this goroutine alone has it until it
	// goes back to the spares.

	fam := f.fam(l.v6)
	rp := r.Packet
	rd := rp.Data()
	rl3 := int(rp.Offsets.L3)
	for i := range l.frags {
		h := &l.frags[i]
		nb := alloc.Get()
		if nb == nil || len(nb.Room()) < len(h.data) {
			if nb != nil {
				nb.Free()
			}
			f.noBuffer.Add(1)
		} else {
			nb.SetLen(len(h.data))
			d := nb.Data()
			copy(d, h.data)
			nb.Meta = h.meta
			nb.Key = h.key
			copyCT(&nb.Key, &rp.Key)
			l3 := int(h.meta.Offsets.L3)
			if l.v6 {
				if len(rd) >= rl3+packet.IPv6HeaderLen {
					copy(d[l3+8:l3+40], rd[rl3+8:rl3+40])
				}
			} else if len(rd) >= rl3+packet.IPv4MinLen {
				if [8]byte(d[l3+12:l3+20]) != [8]byte(rd[rl3+12:rl3+20]) {
					copy(d[l3+12:l3+20], rd[rl3+12:rl3+20])
					ihl := int(d[l3]&0x0f) * 4
					c := packet.IPv4HeaderChecksum(d[l3 : l3+ihl])
					d[l3+10], d[l3+11] = byte(c>>8), byte(c)
				}
			}
			if i == 0 {
				// The first fragment's data is the start of the
				// reassembled packet's fragmentable part: the tracker's
				// L4 changes (NAT ports, checksums) are in it.
				rOff := l.reassDataOff(rl3, rd, h)
				if rOff >= 0 && rOff <= len(rd) {
					copy(d[h.dataOff:], rd[rOff:])
				}
			}
			nb.Parse()
			out = append(out, nb)
		}
		f.nfrag.Add(-1)
		fam.completed.Add(1)
	}
	f.reassPool.Put(r)
	f.mu.Lock()
	f.recycleLocked(l)
	f.mu.Unlock()
	return out
}

// maxSpareLists bounds the lists kept for reuse.
const maxSpareLists = 64

func (f *IPF) newListLocked() *fragList {
	if n := len(f.spare); n > 0 {
		l := f.spare[n-1]
		f.spare = f.spare[:n-1]
		return l
	}
	return &fragList{frags: make([]heldFrag, 0, 4)}
}

// recycleLocked keeps l, emptied, and its fragments' copies, for later
// lists.
func (f *IPF) recycleLocked(l *fragList) {
	for i := range l.frags {
		f.releaseLocked(&l.frags[i])
	}
	clear(l.frags)
	*l = fragList{frags: l.frags[:0]}
	if len(f.spare) < maxSpareLists {
		f.spare = append(f.spare, l)
	}
}

// copyCT copies the conntrack fields of from into to.
func copyCT(to, from *packet.Key) {
	to.CTState = from.CTState
	to.CTZone = from.CTZone
	to.CTMark = from.CTMark
	to.CTLabel = from.CTLabel
	to.CTNwProto = from.CTNwProto
	to.CTNwSrc, to.CTNwDst = from.CTNwSrc, from.CTNwDst
	to.CTIPv6Src, to.CTIPv6Dst = from.CTIPv6Src, from.CTIPv6Dst
	to.CTTpSrc, to.CTTpDst = from.CTTpSrc, from.CTTpDst
}

// reassDataOff is where the fragmentable part starts in the reassembled
// frame: after the IPv4 header, or where the IPv6 fragment header was.
func (l *fragList) reassDataOff(rl3 int, rd []byte, first *heldFrag) int {
	if l.v6 {
		// The same layout as the first fragment up to the removed
		// fragment header.
		return l.fragHdrOff - int(first.meta.Offsets.L3) + rl3
	}
	if len(rd) < rl3+1 {
		return -1
	}
	return rl3 + int(rd[rl3]&0x0f)*4
}

// pushLocked appends l to the expiry list.
func (f *IPF) pushLocked(l *fragList) {
	l.prev, l.next = f.tail, nil
	if f.tail != nil {
		f.tail.next = l
	} else {
		f.head = l
	}
	f.tail = l
}

func (f *IPF) unlinkLocked(l *fragList) {
	if l.prev != nil {
		l.prev.next = l.next
	} else {
		f.head = l.next
	}
	if l.next != nil {
		l.next.prev = l.prev
	} else {
		f.tail = l.prev
	}
	l.prev, l.next = nil, nil
}

// dropLocked frees l's fragments, counting them in counter, and forgets l.
func (f *IPF) dropLocked(l *fragList, counter *atomic.Uint64) {
	n := len(l.frags)
	f.nfrag.Add(-int64(n))
	counter.Add(uint64(n))
	delete(f.lists, l.key)
	f.unlinkLocked(l)
	if l.reass != nil {
		// The tracker has its reassembled packet: Postprocess will find
		// the list gone and emit nothing; l is not reused, so that
		// check cannot be fooled.
		l.reass = nil
		for i := range l.frags {
			f.releaseLocked(&l.frags[i])
		}
		l.frags = nil
		return
	}
	f.recycleLocked(l)
}

// expireLocked drops up to max lists past their expiry (all when max is
// 0): incomplete ones count as expired, and those stuck PurgeDelay past
// it (a completed list never handed back) as purged.
func (f *IPF) expireLocked(now int64, max int) {
	n := 0
	for l := f.head; l != nil && (max == 0 || n < max); {
		next := l.next
		if now <= l.expiration {
			break
		}
		fam := f.fam(l.v6)
		switch {
		case now >= l.expiration+int64(PurgeDelay):
			f.dropLocked(l, &fam.purged)
			n++
		case l.state != stateCompleted:
			f.dropLocked(l, &fam.expired)
			n++
		}
		l = next
	}
}

// Expire drops the lists past their expiry; Start's goroutine calls it
// every second.
func (f *IPF) Expire() {
	now := f.now().UnixNano()
	f.mu.Lock()
	f.expireLocked(now, 0)
	f.mu.Unlock()
}

// Start runs Expire every second until Close.
func (f *IPF) Start() {
	f.stop = make(chan struct{})
	f.done = make(chan struct{})
	go func() {
		defer close(f.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-f.stop:
				return
			case <-t.C:
				f.Expire()
			}
		}
	}()
}

// Close stops Start's goroutine and frees every held fragment (not
// counted, as Open vSwitch's ipf_destroy).
func (f *IPF) Close() {
	if f.stop != nil {
		close(f.stop)
		<-f.done
		f.stop = nil
	}
	f.mu.Lock()
	for l := f.head; l != nil; {
		next := l.next
		var discard atomic.Uint64
		f.dropLocked(l, &discard)
		l = next
	}
	f.mu.Unlock()
}
