package ofpact

import (
	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
)

// OpenFlow 1.1+ instruction types.
const (
	instTypeGotoTable     uint16 = 1
	instTypeWriteMetadata uint16 = 2
	instTypeWriteActions  uint16 = 3
	instTypeApplyActions  uint16 = 4
	instTypeClearActions  uint16 = 5
	instTypeMeter         uint16 = 6
	instTypeExperimenter  uint16 = 0xffff
)

// Instruction slots in OVS's order (enum ovs_instruction_type), which is
// also the order they must appear in an action list.
const (
	slotMeter = iota
	slotApplyActions
	slotClearActions
	slotWriteActions
	slotWriteMetadata
	slotGotoTable
	numSlots
)

// Bit sets of allowed instruction slots.
const (
	instMeter        = 1 << slotMeter
	instApplyActions = 1 << slotApplyActions
	instAll          = 1<<numSlots - 1
)

var slotNames = [numSlots]string{"meter", "apply_actions", "clear_actions", "write_actions", "write_metadata", "goto_table"}

// instructionSlot is the instruction an action belongs to (OVS's
// ovs_instruction_type_from_ofpact_type).
func instructionSlot(k Kind, version uint8) int {
	switch k {
	case KindMeter:
		if version >= of15 {
			return slotApplyActions
		}
		return slotMeter
	case KindClearActions:
		return slotClearActions
	case KindWriteActions:
		return slotWriteActions
	case KindWriteMetadata:
		return slotWriteMetadata
	case KindGotoTable:
		return slotGotoTable
	}
	return slotApplyActions
}

// PullInstructions decodes OpenFlow 1.1+ instructions (for OpenFlow 1.0,
// actions, where instruction kinds may appear as Nicira actions) into one
// action list: the meter instruction, the Apply-Actions actions, then
// clear_actions, write_actions, write_metadata and goto_table, as OVS's
// ofpacts_pull_openflow_instructions.
func PullInstructions(b []byte, version uint8) ([]Action, error) {
	if version == of10 {
		if len(b)%actionAlign != 0 {
			return nil, ofperr.OFPBRC_BAD_LEN
		}
		acts, err := decodeActions(b, version, 0)
		if err != nil {
			return nil, err
		}
		if err := verify(acts, version, instAll, KindInvalid); err != nil {
			return nil, err
		}
		return acts, nil
	}
	if len(b)%instrAlign != 0 {
		return nil, ofperr.OFPBIC_BAD_LEN
	}
	var insts [numSlots][]byte
	p := b
	for len(p) > 0 {
		if len(p) < 8 {
			return nil, ofperr.OFPBIC_BAD_LEN
		}
		typ, n := be.Uint16(p), int(be.Uint16(p[2:]))
		if n%instrAlign != 0 || n < 8 || n > len(p) {
			return nil, ofperr.OFPBIC_BAD_LEN
		}
		var slot int
		exact, minLen := 0, 0
		switch typ {
		case instTypeExperimenter:
			return nil, ofperr.OFPBIC_BAD_EXPERIMENTER
		case instTypeMeter:
			slot, exact = slotMeter, 8
		case instTypeApplyActions:
			slot, minLen = slotApplyActions, 8
		case instTypeClearActions:
			slot, exact = slotClearActions, 8
		case instTypeWriteActions:
			slot, minLen = slotWriteActions, 8
		case instTypeWriteMetadata:
			slot, exact = slotWriteMetadata, 24
		case instTypeGotoTable:
			slot, exact = slotGotoTable, 8
		default:
			return nil, ofperr.OFPBIC_UNKNOWN_INST
		}
		if exact != 0 && n != exact || n < minLen {
			return nil, ofperr.OFPBIC_BAD_LEN
		}
		if slot == slotMeter && version >= of15 {
			return nil, ofperr.OFPBIC_UNKNOWN_INST
		}
		if insts[slot] != nil {
			return nil, ofperr.OFPBIC_DUP_INST
		}
		insts[slot] = p[:n]
		p = p[n:]
	}

	var acts []Action
	if in := insts[slotMeter]; in != nil {
		acts = append(acts, &Meter{ID: be.Uint32(in[4:])})
	}
	if in := insts[slotApplyActions]; in != nil {
		var err error
		acts, err = appendDecoded(acts, in[8:], version)
		if err != nil {
			return nil, err
		}
	}
	if insts[slotClearActions] != nil {
		acts = append(acts, &ClearActions{})
	}
	if in := insts[slotWriteActions]; in != nil {
		set, err := decodeActions(in[8:], version, 1)
		if err != nil {
			return nil, err
		}
		for _, a := range set {
			if !AllowedInActionSet(a.Kind()) {
				return nil, ofperr.OFPBAC_BAD_TYPE
			}
		}
		acts = append(acts, &WriteActions{Actions: set})
	}
	if in := insts[slotWriteMetadata]; in != nil {
		acts = append(acts, &WriteMetadata{Metadata: be.Uint64(in[8:]), Mask: be.Uint64(in[16:])})
	}
	if in := insts[slotGotoTable]; in != nil {
		acts = append(acts, &GotoTable{TableID: in[4]})
	}
	if err := verify(acts, version, instAll, KindInvalid); err != nil {
		return nil, err
	}
	return acts, nil
}

func appendDecoded(acts []Action, b []byte, version uint8) ([]Action, error) {
	more, err := decodeActions(b, version, 0)
	if err != nil {
		return nil, err
	}
	return append(acts, more...), nil
}

// AllowedInActionSet reports whether an action of kind k may be written
// to the action set (OVS's ofpact_is_allowed_in_actions_set).
func AllowedInActionSet(k Kind) bool {
	switch k {
	case KindStripVLAN, KindPopMPLS, KindDecap, KindPushMPLS, KindPushVLAN, KindDecTTL,
		KindDecMPLSTTL, KindDecNSHTTL, KindCT, KindCTClear, KindResubmit,
		KindOutput, KindGroup, KindSetField, KindRegMove, KindSetEthDst,
		KindSetEthSrc, KindSetIPDSCP, KindSetIPECN, KindSetIPTTL,
		KindSetIPv4Dst, KindSetIPv4Src, KindSetL4DstPort, KindSetL4SrcPort,
		KindSetMPLSLabel, KindSetMPLSTC, KindSetMPLSTTL, KindSetQueue,
		KindSetTunnel, KindSetVLANPCP, KindSetVLANVID:
		return true
	}
	return false
}

// AppendInstructions appends acts as OpenFlow 1.1+ instructions for
// version (OpenFlow 1.0: as actions): consecutive plain actions become one
// Apply-Actions instruction, as OVS's ofpacts_put_openflow_instructions.
func AppendInstructions(b []byte, acts []Action, version uint8) []byte {
	version = clampVersion(version)
	if version == of10 {
		return AppendActions(b, acts, version)
	}
	for i := 0; i < len(acts); {
		if instructionSlot(acts[i].Kind(), version) != slotApplyActions {
			b = appendAction(b, acts[i], version)
			i++
			continue
		}
		start := len(b)
		b = appendInstrHeader(b, instTypeApplyActions, 8)
		b = append(b, 0, 0, 0, 0)
		for ; i < len(acts) && instructionSlot(acts[i].Kind(), version) == slotApplyActions; i++ {
			b = appendAction(b, acts[i], version)
		}
		b = finishInstrActions(b, start)
	}
	return b
}

func appendInstrHeader(b []byte, typ uint16, n int) []byte {
	b = be.AppendUint16(b, typ)
	return be.AppendUint16(b, uint16(n))
}

// finishInstrActions sets the length of the actions instruction at start,
// or drops it if it holds no action (OVS's
// ofpacts_update_instruction_actions).
func finishInstrActions(b []byte, start int) []byte {
	if len(b) == start+8 {
		return b[:start]
	}
	be.PutUint16(b[start+2:], uint16(len(b)-start))
	return b
}

// mfDst is the field an action writes, for the nesting rules (OVS's
// ofpact_get_mf_dst).
func mfDst(a Action) *mf.Field {
	switch a := a.(type) {
	case *SetField:
		return a.Field
	case *RegMove:
		return a.Dst.Field
	}
	return nil
}

func requiresCT(f *mf.Field) bool { return fieldIs(f, mf.CTMark) || fieldIs(f, mf.CTLabel) }

func verifyNested(a Action, outer Kind) error {
	f := mfDst(a)
	if f != nil && requiresCT(f) && outer != KindCT {
		return ofperr.OFPBAC_BAD_SET_ARGUMENT
	}
	if a.Kind() == KindNAT {
		if outer != KindCT {
			return ofperr.OFPBAC_BAD_SET_ARGUMENT
		}
		return nil
	}
	if outer != KindInvalid {
		if outer == KindCT && (f == nil || !requiresCT(f)) {
			return ofperr.OFPBAC_BAD_ARGUMENT
		}
		if a.Kind() == KindMeter {
			return ofperr.OFPBAC_BAD_ARGUMENT
		}
	}
	return nil
}

// verify is OVS's ofpacts_verify: instruction order and duplicates, the
// instructions allowed here, conjunction only with note, and what may nest
// inside ct/clone/write_actions.
func verify(acts []Action, version uint8, allowed int, outer Kind) error {
	inst := slotMeter
	for i, a := range acts {
		if a.Kind() == KindConjunction {
			for _, b := range acts {
				if k := b.Kind(); k != KindConjunction && k != KindNote {
					return ofperr.NXBAC_BAD_CONJUNCTION
				}
			}
			return nil
		}
		if err := verifyNested(a, outer); err != nil {
			return err
		}
		next := instructionSlot(a.Kind(), version)
		if i > 0 && (inst == slotApplyActions && next < inst || inst != slotApplyActions && next <= inst) {
			return ofperr.OFPBAC_UNSUPPORTED_ORDER
		}
		if allowed&(1<<next) == 0 {
			if next == slotMeter && version >= of15 {
				return ofperr.OFPBAC_BAD_TYPE
			}
			return ofperr.OFPBIC_UNSUP_INST
		}
		inst = next
	}
	return nil
}
