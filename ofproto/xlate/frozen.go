package xlate

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"gvs/ofproto/mf"
	"gvs/packet"
)

// RecircTable holds the frozen states of one datapath's translations,
// keyed by recirc_id: what a datapath flow's userspace (controller) or
// recirc action refers to. Identical states share an id, so translating
// a flow again yields the same actions (Open vSwitch's
// recirc_alloc_id_ctx). Safe for concurrent use.
type RecircTable struct {
	mu    sync.Mutex
	byID  map[uint32]*frozenEntry
	byKey map[string]uint32
	next  uint32
}

type frozenEntry struct {
	fz       *Frozen
	key      string
	lastUsed time.Time
}

// NewRecircTable returns an empty table.
func NewRecircTable() *RecircTable {
	return &RecircTable{byID: map[uint32]*frozenEntry{}, byKey: map[string]uint32{}}
}

// Alloc returns the id of a frozen state equal to fz, allocating one if
// there is none.
func (t *RecircTable) Alloc(fz *Frozen, now time.Time) uint32 {
	key := fz.key()
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.byKey[key]; ok {
		t.byID[id].lastUsed = now
		return id
	}
	for {
		t.next++
		if t.next == 0 {
			t.next = 1
		}
		if t.byID[t.next] == nil {
			break
		}
	}
	t.byID[t.next] = &frozenEntry{fz: fz, key: key, lastUsed: now}
	t.byKey[key] = t.next
	return t.next
}

// Lookup returns the frozen state with id, or nil.
func (t *RecircTable) Lookup(id uint32) *Frozen {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.byID[id]; e != nil {
		return e.fz
	}
	return nil
}

// Sweep frees the states no installed flow refers to (live reports the
// ids that are) and that no translation used since before: packets
// already on their way to userspace may still need a recently used one.
func (t *RecircTable) Sweep(live func(id uint32) bool, before time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for id, e := range t.byID {
		if !live(id) && e.lastUsed.Before(before) {
			delete(t.byID, id)
			delete(t.byKey, e.key)
			n++
		}
	}
	return n
}

// Len is the number of frozen states held.
func (t *RecircTable) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}

// key identifies a frozen state by value: the bridge, the pipeline
// metadata (not the packet's own fields, which the datapath carries),
// the table, the cookie and userdata, and the actions by identity (they
// are subslices of immutable rule actions).
func (fz *Frozen) key() string {
	var b strings.Builder
	meta := fz.Flow
	meta.Key = metadataOnly(&fz.Flow.Key)
	// The conntrack fields are not pipeline state: a resumed translation
	// takes them from the packet (or clears them), as Open vSwitch's
	// frozen_metadata leaves them out.
	clearConntrack(&meta)
	fmt.Fprintf(&b, "%p|%d|%d|%x|%v|%v|%d|%v|%v|", fz.Bridge, fz.Table, fz.Cookie, fz.Userdata, fz.Pause, fz.Hashed, fz.Reason, fz.Conntracked, meta)
	for _, a := range fz.Actions {
		if k, ok := a.(interface{ frozenKey() string }); ok {
			b.WriteString(k.frozenKey() + ",")
			continue
		}
		fmt.Fprintf(&b, "%p,", a)
	}
	b.WriteByte('|')
	for _, a := range fz.ActionSet {
		fmt.Fprintf(&b, "%p,", a)
	}
	fmt.Fprintf(&b, "|%x", fz.Stack)
	return b.String()
}

// metadataOnly keeps the datapath metadata of k (in_port, tunnel,
// conntrack, marks), dropping the packet's own fields.
func metadataOnly(k *packet.Key) packet.Key {
	m := *k
	m.EtherType, m.DstMAC, m.SrcMAC, m.VLANs = 0, [6]byte{}, [6]byte{}, [packet.MaxVLANs]packet.VLANTag{}
	m.ARPOp, m.SrcIPv4, m.DstIPv4, m.IPProto, m.IPTOS, m.IPTTL, m.IPFrag, m.FlowLabel = 0, [4]byte{}, [4]byte{}, 0, 0, 0, 0, 0
	m.SrcIPv6, m.DstIPv6, m.ARPSHA, m.ARPTHA, m.NDReserved, m.NDTarget = [16]byte{}, [16]byte{}, [6]byte{}, [6]byte{}, 0, [16]byte{}
	m.NDOptionsType, m.ICMPType, m.ICMPCode, m.SrcPort, m.DstPort, m.TCPFlags = 0, 0, 0, 0, 0, 0
	return m
}

// Thaw returns the flow translation resumes a frozen state with: the
// packet's fields from pkt (as the datapath or the controller has it
// now) and the pipeline state from the frozen state.
func (fz *Frozen) Thaw(pkt *packet.Key) mf.Flow {
	f := fz.Flow
	meta := f.Key
	f.Key = *pkt
	f.InPort = meta.InPort
	return f
}
