package ofpact

import (
	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
	"gvs/packet"
)

// OVS's ct_state bits (CS_*).
const (
	csNew         = 0x01
	csEstablished = 0x02
	csRelated     = 0x04
	csReplyDir    = 0x08
	csInvalid     = 0x10
	csTracked     = 0x20
	csSrcNAT      = 0x40
	csDstNAT      = 0x80
)

const meterMax uint32 = 0xffff0000 // OFPM13_MAX

// Check validates acts for a rule with match m in table tableID of a
// bridge with ports below maxPorts and nTables tables (255: don't check),
// as Open vSwitch's ofpacts_check_consistency does for OpenFlow 1.1 and
// later: set_field/load/move need their fields' prerequisites in the
// match, goto_table goes forward only, output ports exist, and actions
// must be consistent with the match (mod_nw_src needs an IPv4 match, ...).
//
// Check records what it learns from the match in the actions that OVS
// records it in (SetL4SrcPort.IPProto, FlowHasVLAN flags), which choose
// their OpenFlow 1.1+ encodings: call it before the actions are shared.
func Check(acts []Action, m *mf.Match, maxPorts uint32, tableID uint8, nTables int) error {
	return CheckVersion(acts, m, maxPorts, tableID, nTables, of13)
}

// CheckVersion is Check for a rule added with OpenFlow version: OpenFlow
// 1.0 tolerates actions inconsistent with the match (OVS's
// usable_protocols), later versions reject them with
// OFPBAC_MATCH_INCONSISTENT.
func CheckVersion(acts []Action, m *mf.Match, maxPorts uint32, tableID uint8, nTables int, version uint8) error {
	c := checker{match: *m, maxPorts: maxPorts, tableID: tableID, nTables: nTables}
	if err := c.check(acts); err != nil {
		return err
	}
	if c.inconsistent && version != of10 {
		return ofperr.OFPBAC_MATCH_INCONSISTENT
	}
	return nil
}

type checker struct {
	match        mf.Match // a copy: actions like push_vlan change its flow as they go
	maxPorts     uint32
	tableID      uint8
	nTables      int
	inconsistent bool
}

func (c *checker) flow() *mf.Flow { return &c.match.Flow }

func (c *checker) check(acts []Action) error {
	for _, a := range acts {
		if err := c.checkOne(a); err != nil {
			return err
		}
	}
	return nil
}

// checkSub checks nested actions against the current flow without
// letting their changes leak out (OVS's check_subactions).
func (c *checker) checkSub(acts []Action) error {
	sub := *c
	err := sub.check(acts)
	c.inconsistent = c.inconsistent || sub.inconsistent
	return err
}

func isIPAny(f *mf.Flow) bool { return f.EtherType == 0x0800 || f.EtherType == 0x86dd }

func isMPLS(t uint16) bool { return t == 0x8847 || t == 0x8848 }

func (c *checker) hasVLAN() bool { return c.flow().VLANs[0].Present() }

func checkOutputPort(port, maxPorts uint32) error {
	switch port {
	case mf.PortInPort, mf.PortTable, mf.PortNormal, mf.PortFlood, mf.PortAll, mf.PortController, mf.PortLocal:
		return nil
	case mf.PortNone:
		return ofperr.OFPBAC_BAD_OUT_PORT
	}
	if port < maxPorts {
		return nil
	}
	return ofperr.OFPBAC_BAD_OUT_PORT
}

func checkBundle(bd *Bundle, maxPorts uint32, m *mf.Match) error {
	if bd.Dst.Field != nil {
		if err := checkSubfield(bd.Dst, m, true); err != nil {
			return err
		}
	}
	for _, p := range bd.Members {
		if err := checkOutputPort(p, maxPorts); err != nil {
			return err
		}
		if p == mf.PortController {
			return ofperr.OFPBAC_BAD_OUT_PORT
		}
	}
	return nil
}

func (c *checker) checkOne(a Action) error {
	f := c.flow()
	m := &c.match
	switch a := a.(type) {
	case *Output:
		return checkOutputPort(a.Port, c.maxPorts)
	case *OutputTrunc:
		return checkOutputPort(a.Port, c.maxPorts)
	case *Enqueue:
		if a.Port >= c.maxPorts && a.Port != mf.PortInPort && a.Port != mf.PortLocal {
			return ofperr.OFPBAC_BAD_OUT_PORT
		}
	case *OutputReg:
		return checkSubfield(a.Src, m, false)
	case *Bundle:
		return checkBundle(a, c.maxPorts, m)
	case *SetField:
		if !flowPrereqsOK(a.Field, f) || fieldIs(a.Field, mf.VLANVID) && !c.hasVLAN() {
			return ofperr.OFPBAC_MATCH_INCONSISTENT
		}
		a.FlowHasVLAN = c.hasVLAN()
		if fieldIs(a.Field, mf.VLANTCI) {
			tci := be.Uint16(a.Value[:])
			if tci&0x1000 != 0 {
				f.VLANs[0] = packet.VLANTag{TPID: 0x8100, TCI: tci &^ 0x1000}
			} else {
				f.VLANs[0] = packet.VLANTag{}
			}
		}
	case *SetVLANVID:
		a.FlowHasVLAN = c.hasVLAN()
		if !a.FlowHasVLAN && !a.PushIfNeeded {
			c.inconsistent = true
		}
		if !a.FlowHasVLAN {
			f.VLANs[0].TPID = 0x8100
		}
	case *SetVLANPCP:
		a.FlowHasVLAN = c.hasVLAN()
		if !a.FlowHasVLAN && !a.PushIfNeeded {
			c.inconsistent = true
		}
		if !a.FlowHasVLAN {
			f.VLANs[0].TPID = 0x8100
		}
	case *StripVLAN:
		if !c.hasVLAN() {
			c.inconsistent = true
		}
		copy(f.VLANs[:], f.VLANs[1:])
		f.VLANs[len(f.VLANs)-1] = packet.VLANTag{}
	case *PushVLAN:
		if f.VLANs[len(f.VLANs)-1].Present() {
			return ofperr.OFPBAC_BAD_TAG
		}
		copy(f.VLANs[1:], f.VLANs[:len(f.VLANs)-1])
		f.VLANs[0] = packet.VLANTag{TPID: a.EtherType}
	case *SetIPv4Src, *SetIPv4Dst:
		if f.EtherType != 0x0800 {
			c.inconsistent = true
		}
	case *SetIPDSCP, *SetIPECN, *SetIPTTL, *DecTTL:
		if !isIPAny(f) {
			c.inconsistent = true
		}
	case *SetL4SrcPort:
		a.IPProto = c.checkL4()
	case *SetL4DstPort:
		a.IPProto = c.checkL4()
	case *RegMove:
		if err := checkSubfield(a.Src, m, false); err != nil {
			return err
		}
		return checkSubfield(a.Dst, m, true)
	case *StackPush:
		return checkSubfield(a.Field, m, false)
	case *StackPop:
		return checkSubfield(a.Field, m, true)
	case *SetMPLSLabel, *SetMPLSTC, *SetMPLSTTL, *DecMPLSTTL:
		if !isMPLS(f.EtherType) {
			c.inconsistent = true
		}
	case *PushMPLS:
		f.EtherType = a.EtherType
		f.IPProto = 0
	case *PopMPLS:
		if !isMPLS(f.EtherType) {
			c.inconsistent = true
		}
		f.EtherType = a.EtherType
	case *Resubmit:
		if a.WithCTOrig && !ctValid(m) {
			return ofperr.OFPBAC_MATCH_INCONSISTENT
		}
	case *Learn:
		return checkLearn(a, m)
	case *Multipath:
		return checkSubfield(a.Dst, m, true)
	case *CT:
		if !isIPAny(f) || f.CTState&csInvalid != 0 && a.Flags&CTCommit != 0 ||
			a.Alg == CTAlgFTP && f.IPProto != 6 || a.Alg == CTAlgTFTP && f.IPProto != 17 {
			return ofperr.OFPBAC_MATCH_INCONSISTENT
		}
		if a.ZoneSrc.Field != nil {
			// As OVS: a ct with a zone from a field skips its nested actions' checks.
			return checkSubfield(a.ZoneSrc, m, false)
		}
		return c.checkSub(a.Actions)
	case *NAT:
		if !isIPAny(f) || a.AddrMin.IsValid() && (a.AddrMin.Is4() && f.EtherType != 0x0800 || !a.AddrMin.Is4() && f.EtherType != 0x86dd) {
			return ofperr.OFPBAC_MATCH_INCONSISTENT
		}
	case *Clone:
		return c.checkSub(a.Actions)
	case *FinTimeout:
		if f.IPProto != 6 {
			c.inconsistent = true
		}
	case *DecNSHTTL:
		if f.EtherType != 0x894f { // gvs has no packet_type: NSH only by EtherType
			c.inconsistent = true
		}
	case *Encap:
		if a.PacketType>>16 == 1 { // an EtherType-named header
			f.EtherType = uint16(a.PacketType)
		}
		if !isIPAny(f) {
			f.IPProto = 0
		}
	case *DeleteField:
		if !isVariableLength(a.Field) {
			return ofperr.OFPBAC_BAD_ARGUMENT
		}
	case *Meter:
		if a.ID == 0 || a.ID > meterMax {
			return ofperr.OFPMMFC_INVALID_METER
		}
	case *WriteActions:
		sub := *c
		return sub.check(a.Actions)
	case *GotoTable:
		if c.tableID != 255 && a.TableID <= c.tableID || c.nTables != 255 && int(a.TableID) >= c.nTables {
			return ofperr.OFPBIC_BAD_TABLE_ID
		}
	}
	return nil
}

func (c *checker) checkL4() uint8 {
	f := c.flow()
	if !isIPAny(f) || f.IPFrag&packet.FragLater != 0 || f.IPProto != 6 && f.IPProto != 17 && f.IPProto != 132 {
		c.inconsistent = true
	}
	return f.IPProto
}

// ctValid is OVS's is_ct_valid for a match: it must match a bit that
// implies a conntrack entry, or +trk-inv.
func ctValid(m *mf.Match) bool {
	st, mask := m.Flow.CTState, m.Wildcards.Masks.CTState
	return st&(csNew|csEstablished|csRelated|csReplyDir|csSrcNAT|csDstNAT) != 0 ||
		st&csTracked != 0 && mask&csInvalid != 0 && st&csInvalid == 0
}

// checkLearn checks a learn action's specs (OVS's learn_check): sources
// against the rule's match, destinations against the match the learned
// flow gets from the earlier specs' immediate values.
func checkLearn(l *Learn, m *mf.Match) error {
	var dst mf.Match
	for _, s := range l.Specs {
		if s.SrcType == LearnSrcField {
			if err := checkSubfield(s.Src, m, false); err != nil {
				return err
			}
		}
		switch s.DstType {
		case LearnDstMatch:
			if err := checkSubfield(s.Dst, &dst, false); err != nil {
				return err
			}
			if s.SrcType == LearnSrcImmediate {
				var v mf.Value
				imm := s.Imm
				if len(imm) > len(v) {
					imm = imm[len(imm)-len(v):]
				}
				copy(v[len(v)-len(imm):], imm)
				s.Dst.SetMatch(&dst, v)
			}
		case LearnDstLoad:
			if err := checkSubfield(s.Dst, &dst, true); err != nil {
				return err
			}
		}
	}
	return nil
}
