package xlate

import (
	"encoding/binary"
	"fmt"
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
// are subslices of immutable rule actions). Built in binary: a
// translation that freezes builds one.
func (fz *Frozen) key() string {
	b := make([]byte, 0, 64+8*mf.FlowWords+16*(len(fz.Actions)+len(fz.ActionSet)+len(fz.Stack)))
	b = fmt.Appendf(b, "%p|", fz.Bridge)
	b = append(b, fz.Table, byte(fz.Reason), flagByte(fz.Pause, fz.Hashed, fz.Conntracked))
	b = binary.LittleEndian.AppendUint64(b, fz.Cookie)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(fz.Userdata)))
	b = append(b, fz.Userdata...)
	meta := fz.Flow
	meta.Key = metadataOnly(&fz.Flow.Key)
	// The conntrack fields are not pipeline state: a resumed translation
	// takes them from the packet (or clears them), as Open vSwitch's
	// frozen_metadata leaves them out.
	clearConntrack(&meta)
	for _, w := range meta.Words() {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	for _, a := range fz.Actions {
		if k, ok := a.(interface{ frozenKey() string }); ok {
			b = append(b, k.frozenKey()...)
			b = append(b, ',')
			continue
		}
		b = fmt.Appendf(b, "%p,", a)
	}
	b = append(b, '|')
	for _, a := range fz.ActionSet {
		b = fmt.Appendf(b, "%p,", a)
	}
	b = append(b, '|')
	for _, v := range fz.Stack {
		b = append(b, v[:]...)
	}
	return string(b)
}

func flagByte(bits ...bool) byte {
	var f byte
	for i, v := range bits {
		if v {
			f |= 1 << i
		}
	}
	return f
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
