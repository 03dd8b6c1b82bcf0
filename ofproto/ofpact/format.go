package ofpact

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"gvs/ofproto/mf"
)

// Format prints acts as Open vSwitch prints actions (ovs-ofctl
// dump-flows, parse-actions): "drop" for an empty list, otherwise the
// actions separated by commas. Instructions print as OVS prints them
// (meter:N, clear_actions, write_actions(...), write_metadata:V/M,
// goto_table:T).
func Format(acts []Action) string {
	return FormatNames(acts, nil)
}

// FormatNames is Format with ports named by portName where it knows them
// (ofproto/trace --names, dump-flows --names): reserved ports keep their
// OpenFlow names, other names are quoted as OVS quotes them when they
// are not plain identifiers.
func FormatNames(acts []Action, portName func(port uint32) (string, bool)) string {
	var s strings.Builder
	pr := printer{Builder: &s, portName: portName}
	pr.list(acts)
	return s.String()
}

// printer formats actions into a builder.
type printer struct {
	*strings.Builder
	portName func(uint32) (string, bool)
}

// port formats an OpenFlow port (OVS's ofputil_format_port).
func (s printer) port(p uint32) string {
	if n := mf.PortName(p); s.portName == nil || n[0] < '0' || n[0] > '9' {
		return n
	}
	name, ok := s.portName(p)
	if !ok {
		return mf.PortName(p)
	}
	return quoteName(name)
}

// quoteName is OVS's namemap_put_name: names that are not a letter
// followed by letters and digits are printed as JSON strings.
func quoteName(name string) string {
	plain := name != ""
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(name)
	return strings.TrimSuffix(b.String(), "\n")
}

func (s printer) list(acts []Action) {
	if len(acts) == 0 {
		s.WriteString("drop")
		return
	}
	for i, a := range acts {
		if i > 0 {
			s.WriteByte(',')
		}
		s.action(a)
	}
}

// FormatPort prints an OpenFlow port as OVS does (reserved ports by name).
func FormatPort(p uint32) string { return mf.PortName(p) }

// hex0x is C's "%#"PRIx64: "0x" and hex digits, but plain "0" for zero.
func hex0x(v uint64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%#x", v)
}

func hexArg(data []byte) string {
	var s strings.Builder
	for i, c := range data {
		if i > 0 {
			s.WriteByte('.')
		}
		fmt.Fprintf(&s, "%02x", c)
	}
	return s.String()
}

// putHex is OVS's ds_put_hex: the bytes as one hex number without
// leading zeros.
func putHex(b []byte) string {
	s := ""
	for _, c := range b {
		if c == 0 && s == "" {
			continue
		}
		if s == "" {
			s = fmt.Sprintf("0x%x", c)
		} else {
			s += fmt.Sprintf("%02x", c)
		}
	}
	if s == "" {
		return "0"
	}
	return s
}

func hashFieldsName(f uint16) string {
	switch f {
	case HashEthSrc:
		return "eth_src"
	case HashSymmetricL4:
		return "symmetric_l4"
	case HashSymmetricL3L4:
		return "symmetric_l3l4"
	case HashSymmetricL3L4UDP:
		return "symmetric_l3l4+udp"
	case HashNWSrc:
		return "nw_src"
	case HashNWDst:
		return "nw_dst"
	case HashSymmetricL3:
		return "symmetric_l3"
	}
	return "<unknown>"
}

func reasonName(r uint8) string {
	switch r {
	case ReasonNoMatch:
		return "no_match"
	case ReasonAction:
		return "action"
	case ReasonInvalidTTL:
		return "invalid_ttl"
	case ReasonActionSet:
		return "action_set"
	case ReasonGroup:
		return "group"
	case ReasonPacketOut:
		return "packet_out"
	case ReasonExplicitMiss, ReasonImplicitMiss:
		return ""
	}
	return strconv.Itoa(int(r))
}

func formatMAC(m [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

func (s printer) action(a Action) {
	p := func(format string, args ...any) { fmt.Fprintf(s, format, args...) }
	switch a := a.(type) {
	case *Output:
		if a.Port < mf.PortMax {
			s.WriteString("output:")
		}
		s.WriteString(s.port(a.Port))
		if a.Port == mf.PortController {
			p(":%d", a.MaxLen)
		}
	case *Group:
		p("group:%d", a.ID)
	case *Controller:
		s.controller(a)
	case *Enqueue:
		p("enqueue:%s:%d", s.port(a.Port), a.Queue)
	case *OutputReg:
		p("output:%s", formatSubfield(a.Src))
	case *OutputTrunc:
		p("output(port=%s,max_len=%d)", s.port(a.Port), a.MaxLen)
	case *Bundle:
		name := "bundle"
		if a.Dst.Field != nil {
			name = "bundle_load"
		}
		alg := "<unknown>"
		switch a.Algorithm {
		case BundleHRW:
			alg = "hrw"
		case BundleActiveBackup:
			alg = "active_backup"
		}
		p("%s(%s,%d,%s,ofport,", name, hashFieldsName(a.Fields), a.Basis, alg)
		if a.Dst.Field != nil {
			p("%s,", formatSubfield(a.Dst))
		}
		s.WriteString("members:")
		for i, m := range a.Members {
			if i > 0 {
				s.WriteByte(',')
			}
			s.WriteString(s.port(m))
		}
		s.WriteByte(')')
	case *SetField:
		s.setField(a)
	case *SetVLANVID:
		if a.PushIfNeeded {
			p("mod_vlan_vid:%d", a.VID)
		} else {
			p("set_vlan_vid:%d", a.VID)
		}
	case *SetVLANPCP:
		if a.PushIfNeeded {
			p("mod_vlan_pcp:%d", a.PCP)
		} else {
			p("set_vlan_pcp:%d", a.PCP)
		}
	case *StripVLAN:
		if a.Raw == RawOF11PopVLAN {
			s.WriteString("pop_vlan")
		} else {
			s.WriteString("strip_vlan")
		}
	case *PushVLAN:
		p("push_vlan:%#x", a.EtherType)
	case *SetEthSrc:
		p("mod_dl_src:%s", formatMAC(a.MAC))
	case *SetEthDst:
		p("mod_dl_dst:%s", formatMAC(a.MAC))
	case *SetIPv4Src:
		p("mod_nw_src:%s", netip.AddrFrom4(a.Addr))
	case *SetIPv4Dst:
		p("mod_nw_dst:%s", netip.AddrFrom4(a.Addr))
	case *SetIPDSCP:
		p("mod_nw_tos:%d", a.DSCP)
	case *SetIPECN:
		p("mod_nw_ecn:%d", a.ECN)
	case *SetIPTTL:
		p("mod_nw_ttl:%d", a.TTL)
	case *SetL4SrcPort:
		p("mod_tp_src:%d", a.Port)
	case *SetL4DstPort:
		p("mod_tp_dst:%d", a.Port)
	case *RegMove:
		p("move:%s->%s", formatSubfield(a.Src), formatSubfield(a.Dst))
	case *StackPush:
		p("push:%s", formatSubfield(a.Field))
	case *StackPop:
		p("pop:%s", formatSubfield(a.Field))
	case *DecTTL:
		s.WriteString("dec_ttl")
		if a.Raw == RawNXDecTTLCntIDs {
			s.WriteByte('(')
			for i, id := range a.CntIDs {
				if i > 0 {
					s.WriteByte(',')
				}
				p("%d", id)
			}
			s.WriteByte(')')
		}
	case *SetMPLSLabel:
		if a.Raw == RawOFSetField {
			p("set_field:%d->mpls_label", a.Label)
		} else {
			p("set_mpls_label(%d)", a.Label)
		}
	case *SetMPLSTC:
		if a.Raw == RawOFSetField {
			p("set_field:%d->mpls_tc", a.TC)
		} else {
			p("set_mpls_tc(%d)", a.TC)
		}
	case *SetMPLSTTL:
		p("set_mpls_ttl(%d)", a.TTL)
	case *DecMPLSTTL:
		s.WriteString("dec_mpls_ttl")
	case *PushMPLS:
		p("push_mpls:0x%04x", a.EtherType)
	case *PopMPLS:
		p("pop_mpls:0x%04x", a.EtherType)
	case *DecNSHTTL:
		s.WriteString("dec_nsh_ttl")
	case *Encap:
		s.WriteString("encap(")
		switch a.PacketType {
		case PacketTypeEthernet:
			s.WriteString("ethernet")
		case PacketTypeNSH:
			s.WriteString("nsh")
		case PacketTypeMPLS:
			s.WriteString("mpls")
		case PacketTypeMPLSMC:
			s.WriteString("mpls_mc")
		default:
			s.WriteString("UNKNOWN")
		}
		if len(a.Props) > 0 {
			s.WriteByte('(')
			for i, p := range a.Props {
				if i > 0 {
					s.WriteByte(',')
				}
				if p.Type == EncapPropMDType {
					p2 := p
					fmt.Fprintf(s, "md_type=%d", p2.MDType)
				} else {
					n := min(int(p.TLVLen), len(p.Data))
					fmt.Fprintf(s, "tlv(0x%04x,%d,%s)", p.TLVClass, p.TLVType, putHex(p.Data[:n]))
				}
			}
			s.WriteByte(')')
		}
		s.WriteByte(')')
	case *Decap:
		s.WriteString("decap(")
		if a.PacketType != PacketTypeNextProto {
			fmt.Fprintf(s, "packet_type(ns=%d,type=%s)", a.PacketType>>16, hex0x(uint64(a.PacketType&0xffff)))
		}
		s.WriteByte(')')
	case *DeleteField:
		p("delete_field:%s", fieldName(a.Field))
	case *SetTunnel:
		if a.TunID > 0xffffffff || a.Raw == RawNXSetTunnel64 {
			p("set_tunnel64:%s", hex0x(a.TunID))
		} else {
			p("set_tunnel:%s", hex0x(a.TunID))
		}
	case *SetQueue:
		p("set_queue:%d", a.QueueID)
	case *PopQueue:
		s.WriteString("pop_queue")
	case *FinTimeout:
		s.WriteString("fin_timeout(")
		var parts []string
		if a.IdleTimeout != 0 {
			parts = append(parts, fmt.Sprintf("idle_timeout=%d", a.IdleTimeout))
		}
		if a.HardTimeout != 0 {
			parts = append(parts, fmt.Sprintf("hard_timeout=%d", a.HardTimeout))
		}
		s.WriteString(strings.Join(parts, ","))
		s.WriteByte(')')
	case *Resubmit:
		if a.InPort != mf.PortInPort && a.TableID == TableInPort {
			p("resubmit:%s", s.port(a.InPort))
			break
		}
		s.WriteString("resubmit(")
		if a.InPort != mf.PortInPort {
			s.WriteString(s.port(a.InPort))
		}
		s.WriteByte(',')
		if a.TableID != TableInPort {
			p("%d", a.TableID)
		}
		if a.WithCTOrig {
			s.WriteString(",ct")
		}
		s.WriteByte(')')
	case *Learn:
		s.learn(a)
	case *Conjunction:
		p("conjunction(%d,%d/%d)", a.ID, int(a.Clause)+1, a.NClauses)
	case *Multipath:
		alg := "<unknown>"
		switch a.Algorithm {
		case MultipathModuloN:
			alg = "modulo_n"
		case MultipathHashThreshold:
			alg = "hash_threshold"
		case MultipathHRW:
			alg = "hrw"
		case MultipathIterHash:
			alg = "iter_hash"
		}
		p("multipath(%s,%d,%s,%d,%d,%s)", hashFieldsName(a.Fields), a.Basis, alg, int(a.MaxLink)+1, a.Arg, formatSubfield(a.Dst))
	case *Note:
		p("note:%s", hexArg(a.Data))
	case *Exit:
		s.WriteString("exit")
	case *Sample:
		p("sample(probability=%d,collector_set_id=%d,obs_domain_id=%d,obs_point_id=%d", a.Probability, a.CollectorSetID, a.ObsDomainID, a.ObsPointID)
		if a.SamplingPort != mf.PortNone {
			p(",sampling_port=%s", s.port(a.SamplingPort))
		}
		switch a.Direction {
		case SampleIngress:
			s.WriteString(",ingress")
		case SampleEgress:
			s.WriteString(",egress")
		}
		s.WriteByte(')')
	case *CT:
		s.ct(a)
	case *CTClear:
		s.WriteString("ct_clear")
	case *NAT:
		s.nat(a)
	case *Clone:
		s.WriteString("clone(")
		s.list(a.Actions)
		s.WriteByte(')')
	case *CheckPktLarger:
		p("check_pkt_larger(%d)->%s", a.Len, formatSubfield(a.Dst))
	case *DebugRecirc:
		s.WriteString("debug_recirc")
	case *DebugSlow:
		s.WriteString("debug_slow")
	case *Meter:
		p("meter:%d", a.ID)
	case *ClearActions:
		s.WriteString("clear_actions")
	case *WriteActions:
		s.WriteString("write_actions(")
		s.list(a.Actions)
		s.WriteByte(')')
	case *WriteMetadata:
		p("write_metadata:%s", hex0x(a.Metadata))
		if a.Mask != ^uint64(0) {
			p("/%s", hex0x(a.Mask))
		}
	case *GotoTable:
		p("goto_table:%d", a.TableID)
	default:
		s.WriteString("<unknown>")
	}
}

func (s printer) controller(c *Controller) {
	if c.Reason == ReasonAction && c.ControllerID == 0 && len(c.Userdata) == 0 && !c.Pause && c.MeterID == NoMeter {
		fmt.Fprintf(s, "CONTROLLER:%d", c.MaxLen)
		return
	}
	var parts []string
	if c.Reason != ReasonAction {
		parts = append(parts, "reason="+reasonName(c.Reason))
	}
	if c.MaxLen != 0xffff {
		parts = append(parts, fmt.Sprintf("max_len=%d", c.MaxLen))
	}
	if c.ControllerID != 0 {
		parts = append(parts, fmt.Sprintf("id=%d", c.ControllerID))
	}
	if len(c.Userdata) > 0 {
		parts = append(parts, "userdata="+hexArg(c.Userdata))
	}
	if c.Pause {
		parts = append(parts, "pause")
	}
	if c.MeterID != NoMeter {
		parts = append(parts, fmt.Sprintf("meter_id=%d", c.MeterID))
	}
	s.WriteString("controller(" + strings.Join(parts, ",") + ")")
}

func (s printer) setField(sf *SetField) {
	if sf.Raw == RawNXRegLoad {
		first := true
		loadSegments(sf, func(dst mf.Subfield, v uint64) {
			if !first {
				s.WriteByte(',')
			}
			first = false
			fmt.Fprintf(s, "load:%s->%s", hex0x(v), formatSubfield(dst))
		})
		return
	}
	fmt.Fprintf(s, "set_field:%s->%s", sf.Field.FormatValue(sf.Value, &sf.Mask), fieldName(sf.Field))
}

func (s printer) learn(l *Learn) {
	p := func(format string, args ...any) { fmt.Fprintf(s, format, args...) }
	p("learn(table=%d", l.TableID)
	if l.IdleTimeout != 0 {
		p(",idle_timeout=%d", l.IdleTimeout)
	}
	if l.HardTimeout != 0 {
		p(",hard_timeout=%d", l.HardTimeout)
	}
	if l.FinIdleTimeout != 0 {
		p(",fin_idle_timeout=%d", l.FinIdleTimeout)
	}
	if l.FinHardTimeout != 0 {
		p(",fin_hard_timeout=%d", l.FinHardTimeout)
	}
	if l.Priority != 0x8000 {
		p(",priority=%d", l.Priority)
	}
	if l.Flags&LearnSendFlowRem != 0 {
		s.WriteString(",send_flow_rem")
	}
	if l.Flags&LearnDeleteLearned != 0 {
		s.WriteString(",delete_learned")
	}
	if l.Cookie != 0 {
		p(",cookie=%s", hex0x(l.Cookie))
	}
	if l.Limit != 0 {
		p(",limit=%d", l.Limit)
	}
	if l.Flags&LearnWriteResult != 0 {
		p(",result_dst=%s", formatSubfield(l.ResultDst))
	}
	for _, sp := range l.Specs {
		s.WriteByte(',')
		nBytes := (sp.NBits + 7) / 8
		imm := sp.Imm
		if len(imm) > nBytes {
			imm = imm[len(imm)-nBytes:]
		}
		switch {
		case sp.SrcType == LearnSrcImmediate && sp.DstType == LearnDstMatch:
			if sp.Dst.Ofs == 0 && sp.Dst.NBits == fieldBits(sp.Dst.Field) {
				var v mf.Value
				n := fieldBytes(sp.Dst.Field)
				if len(imm) <= n {
					copy(v[n-len(imm):n], imm)
				}
				p("%s=%s", fieldName(sp.Dst.Field), sp.Dst.Field.FormatValue(v, nil))
			} else {
				p("%s=%s", formatSubfield(sp.Dst), putHex(imm))
			}
		case sp.SrcType == LearnSrcField && sp.DstType == LearnDstMatch:
			s.WriteString(formatSubfield(sp.Dst))
			if sp.Src.Field != sp.Dst.Field || sp.Src.Ofs != sp.Dst.Ofs {
				p("=%s", formatSubfield(sp.Src))
			}
		case sp.SrcType == LearnSrcImmediate && sp.DstType == LearnDstLoad:
			p("load:%s->%s", putHex(imm), formatSubfield(sp.Dst))
		case sp.SrcType == LearnSrcField && sp.DstType == LearnDstLoad:
			p("load:%s->%s", formatSubfield(sp.Src), formatSubfield(sp.Dst))
		case sp.SrcType == LearnSrcField && sp.DstType == LearnDstOutput:
			p("output:%s", formatSubfield(sp.Src))
		}
	}
	s.WriteByte(')')
}

func (s printer) ct(ct *CT) {
	s.WriteString("ct(")
	if ct.Flags&CTCommit != 0 {
		s.WriteString("commit,")
	}
	if ct.Flags&CTForce != 0 {
		s.WriteString("force,")
	}
	if ct.RecircTable != CTNoRecirc {
		fmt.Fprintf(s, "table=%d,", ct.RecircTable)
	}
	if ct.ZoneSrc.Field != nil {
		fmt.Fprintf(s, "zone=%s,", formatSubfield(ct.ZoneSrc))
	} else if ct.ZoneImm != 0 {
		fmt.Fprintf(s, "zone=%d,", ct.ZoneImm)
	}
	acts := ct.Actions
	if len(acts) > 0 {
		if nat, ok := acts[0].(*NAT); ok {
			s.nat(nat)
			s.WriteByte(',')
			acts = acts[1:]
		}
	}
	if len(acts) > 0 {
		s.WriteString("exec(")
		s.list(acts)
		s.WriteString("),")
	}
	switch ct.Alg {
	case 0:
	case CTAlgFTP:
		s.WriteString("alg=ftp,")
	case CTAlgTFTP:
		s.WriteString("alg=tftp,")
	default:
		fmt.Fprintf(s, "alg=%d,", ct.Alg)
	}
	str := s.String()
	if strings.HasSuffix(str, ",") {
		// ds_chomp: drop the trailing comma.
		trimmed := str[:len(str)-1]
		s.Reset()
		s.WriteString(trimmed)
	}
	s.WriteByte(')')
}

func (s printer) nat(n *NAT) {
	s.WriteString("nat")
	if n.Flags&(NATSrc|NATDst) == 0 {
		return
	}
	s.WriteByte('(')
	if n.Flags&NATSrc != 0 {
		s.WriteString("src")
	} else {
		s.WriteString("dst")
	}
	if n.AddrMin.IsValid() {
		s.WriteByte('=')
		bracket := n.PortMin != 0
		addr := func(a netip.Addr) string {
			if a.Is4() || !bracket {
				return a.String()
			}
			return "[" + a.String() + "]"
		}
		s.WriteString(addr(n.AddrMin))
		if n.AddrMax.IsValid() && !n.AddrMax.IsUnspecified() && n.AddrMax != n.AddrMin {
			s.WriteString("-" + addr(n.AddrMax))
		}
		if n.PortMin != 0 {
			fmt.Fprintf(s, ":%d", n.PortMin)
			if n.PortMax != 0 && n.PortMax != n.PortMin {
				fmt.Fprintf(s, "-%d", n.PortMax)
			}
		}
		if n.Flags&NATPersistent != 0 {
			s.WriteString(",persistent")
		}
		if n.Flags&NATProtoHash != 0 {
			s.WriteString(",hash")
		}
		if n.Flags&NATProtoRandom != 0 {
			s.WriteString(",random")
		}
	}
	s.WriteByte(')')
}
