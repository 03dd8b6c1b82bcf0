package ofproto

import (
	"slices"
	"sync"

	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
)

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
