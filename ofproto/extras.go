package ofproto

import (
	"slices"
	"sync"
	"time"

	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/xlate"
)

// speedFeatures returns OpenFlow 1.1's current-features bits for a link
// speed (full duplex, copper, as Open vSwitch reports a veth or tap) and
// the speed in kbit/s.
func speedFeatures(mbps int) (uint32, uint32) {
	const copper = 1 << 11
	var f uint32
	switch {
	case mbps <= 0:
		return 0, 0
	case mbps >= 1000000:
		f = 1 << 9
	case mbps >= 100000:
		f = 1 << 8
	case mbps >= 40000:
		f = 1 << 7
	case mbps >= 10000:
		f = 1 << 6
	case mbps >= 1000:
		f = 1 << 5
	case mbps >= 100:
		f = 1 << 3
	case mbps >= 10:
		f = 1 << 1
	default:
		f = 1 << 10
	}
	return f | copper, uint32(mbps) * 1000
}

// setFragHandling sets the switch config's fragment handling.
func (b *Bridge) setFragHandling(h xlate.FragHandling) {
	b.mu.Lock()
	b.fragMode = h
	b.mu.Unlock()
	c := *b.xcfg.Load()
	if c.FragHandling != h {
		c.FragHandling = h
		b.xcfg.Store(&c)
		b.notifyChanged()
	}
}

// PortCounters are a port's device counters (port statistics).
type PortCounters struct {
	RxPackets, TxPackets, RxBytes, TxBytes   uint64
	RxDropped, TxDropped, RxErrors, TxErrors uint64
}

// SetPortCounters installs how the bridge reads a datapath port's
// counters (the switch reads its devices').
func (b *Bridge) SetPortCounters(fn func(dpPort uint32) (PortCounters, bool)) { b.counters.Store(&fn) }

// portStats is one port's OpenFlow port statistics.
func (b *Bridge) portStats(p *xlate.Port) ofp.PortStats {
	st := ofp.PortStats{PortNo: p.OFPort}
	if fn := b.counters.Load(); fn != nil {
		if c, ok := (*fn)(p.DPPort); ok {
			st.RxPackets, st.TxPackets, st.RxBytes, st.TxBytes = c.RxPackets, c.TxPackets, c.RxBytes, c.TxBytes
			st.RxDropped, st.TxDropped, st.RxErrors, st.TxErrors = c.RxDropped, c.TxDropped, c.RxErrors, c.TxErrors
		}
	}
	b.mu.Lock()
	created := time.Time{}
	if ps := b.byName[p.Name]; ps != nil {
		created = ps.created
	}
	b.mu.Unlock()
	if !created.IsZero() {
		d := b.now().Sub(created)
		st.DurationSec, st.DurationNsec = uint32(d/time.Second), uint32(d%time.Second)
	}
	return st
}

// Tunnel metadata option space, as Open vSwitch's TUN_METADATA_NUM_OPTS
// and TUN_METADATA_TOT_OPT_SIZE.
const (
	tlvMaxFields      = 64
	tlvMaxOptionSpace = 256
)

// tlvTable is the bridge's Geneve option to tun_metadataN mapping.
type tlvTable struct {
	mu   sync.Mutex
	maps map[uint16]ofp.TLVMap // by index
}

// tlvTableMod is tun_metadata_table_mod: add (each index and option at
// most once, within the option space), delete by index, clear.
func (b *Bridge) tlvTableMod(m *ofp.TLVTableMod) error {
	t := &b.tlv
	t.mu.Lock()
	defer t.mu.Unlock()
	next := map[uint16]ofp.TLVMap{}
	for k, v := range t.maps {
		next[k] = v
	}
	switch m.Command {
	case ofp.TLVAdd:
		for _, mp := range m.Maps {
			if mp.Index >= tlvMaxFields {
				return ofperr.NXTTMFC_BAD_FIELD_IDX
			}
			if _, ok := next[mp.Index]; ok {
				return ofperr.NXTTMFC_ALREADY_MAPPED
			}
			used := 0
			for _, o := range next {
				if o.OptionClass == mp.OptionClass && o.OptionType == mp.OptionType {
					return ofperr.NXTTMFC_DUP_ENTRY
				}
				used += int(o.OptionLen)
			}
			if used+int(mp.OptionLen) > tlvMaxOptionSpace {
				return ofperr.NXTTMFC_TABLE_FULL
			}
			next[mp.Index] = mp
		}
	case ofp.TLVDelete:
		for _, mp := range m.Maps {
			delete(next, mp.Index)
		}
	case ofp.TLVClear:
		next = map[uint16]ofp.TLVMap{}
	default:
		return ofperr.NXTTMFC_BAD_COMMAND
	}
	t.maps = next
	return nil
}

// tlvTable is the TLV table reply.
func (b *Bridge) tlvTable() ofp.TLVTableReply {
	t := &b.tlv
	t.mu.Lock()
	defer t.mu.Unlock()
	r := ofp.TLVTableReply{MaxOptionSpace: tlvMaxOptionSpace, MaxFields: tlvMaxFields}
	for _, mp := range t.maps {
		r.Maps = append(r.Maps, mp)
	}
	slices.SortFunc(r.Maps, func(x, y ofp.TLVMap) int { return int(x.Index) - int(y.Index) })
	return r
}
