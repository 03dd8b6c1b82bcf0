package ofpact

import (
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"gvs/ofproto/mf"
)

// Parse parses actions and instructions in ovs-ofctl's syntax (what
// follows "actions=" in a flow, as Format prints it): e.g.
// "resubmit(,2),set_field:0x1->reg0,ct(commit,zone=NXM_NX_REG13[0..15],nat(src=198.18.0.1)),goto_table:3".
// "drop" or "" is the empty list. Instructions must be in OpenFlow's
// order, as OVS requires. Errors are plain text, as ovs-ofctl's.
//
// Supported: every action Format prints except the debug actions.
func Parse(s string) ([]Action, error) {
	acts, err := parseList(s, 0)
	if err != nil {
		return nil, err
	}
	if err := verify(acts, of15, instAll, KindInvalid); err != nil {
		return nil, fmt.Errorf("%s: %v", s, err)
	}
	return acts, nil
}

// splitTop splits s at commas (and spaces) that are not inside
// parentheses.
func splitTop(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("%s: unbalanced parentheses", s)
			}
		case ',', ' ', '\t':
			if depth == 0 {
				if item := strings.TrimSpace(s[start:i]); item != "" {
					out = append(out, item)
				}
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("%s: unbalanced parentheses", s)
	}
	if item := strings.TrimSpace(s[start:]); item != "" {
		out = append(out, item)
	}
	return out, nil
}

func parseList(s string, depth int) ([]Action, error) {
	if depth > maxNestedDepth {
		return nil, errors.New("actions nested too deeply")
	}
	s = strings.TrimSpace(s)
	if s == "" || s == "drop" {
		return nil, nil
	}
	items, err := splitTop(s)
	if err != nil {
		return nil, err
	}
	var acts []Action
	for _, item := range items {
		if item == "drop" {
			if len(items) > 1 {
				return nil, errors.New(`"drop" must not be accompanied by any other action or instruction`)
			}
			return nil, nil
		}
		as, err := parseOne(item, depth)
		if err != nil {
			return nil, err
		}
		acts = append(acts, as...)
	}
	return acts, nil
}

// splitItem splits "name:arg", "name=arg", "name(arg)rest" or "name".
func splitItem(item string) (name, arg, paren, rest string) {
	i := strings.IndexAny(item, ":=(")
	if i < 0 {
		return item, "", "", ""
	}
	name = item[:i]
	if item[i] != '(' {
		return name, item[i+1:], "", ""
	}
	depth := 0
	for j := i; j < len(item); j++ {
		switch item[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return name, "", item[i+1 : j], item[j+1:]
			}
		}
	}
	return name, "", item[i+1:], ""
}

func parseUint(s string, bits int) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, bits)
	if err != nil {
		return 0, fmt.Errorf("%s: invalid numeric format", s)
	}
	return v, nil
}

// ParsePort parses an OpenFlow port as ovs-ofctl does: a decimal number
// or a reserved port's name (mf.ParsePort).
func ParsePort(s string) (uint32, bool) { return mf.ParsePort(strings.TrimSpace(s), nil) }

func parseSubfield(s string) (mf.Subfield, error) {
	return mf.ParseSubfield(strings.TrimSpace(s))
}

// parseKV splits "k=v,k2,k3=v3" at top-level commas.
func parseKV(s string) ([][2]string, error) {
	items, err := splitTop(s)
	if err != nil {
		return nil, err
	}
	out := make([][2]string, 0, len(items))
	for _, it := range items {
		k, v, _ := strings.Cut(it, "=")
		if strings.Contains(k, "(") { // e.g. nat(src=...), exec(...)
			k, v = it, ""
		}
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out, nil
}

func parseOne(item string, depth int) ([]Action, error) {
	name, arg, paren, rest := splitItem(item)
	one := func(a Action, err error) ([]Action, error) {
		if err != nil {
			return nil, err
		}
		return []Action{a}, nil
	}
	u := func(bits int) (uint64, error) { return parseUint(arg, bits) }
	switch strings.ToLower(name) {
	case "output":
		if paren != "" {
			return one(parseOutputTrunc(paren))
		}
		if p, ok := ParsePort(arg); ok {
			return one(outputTo(p), nil)
		}
		src, err := parseSubfield(arg)
		if err != nil {
			return nil, fmt.Errorf("%s: output to unknown port", arg)
		}
		return one(&OutputReg{Src: src, MaxLen: 0xffff}, nil)
	case "controller":
		return one(parseController(arg, paren))
	case "enqueue":
		return one(parseEnqueue(arg + paren))
	case "resubmit":
		return one(parseResubmit(arg, paren))
	case "group":
		v, err := u(32)
		return one(&Group{ID: uint32(v)}, err)
	case "meter":
		v, err := u(32)
		return one(&Meter{ID: uint32(v)}, err)
	case "set_queue":
		v, err := u(32)
		return one(&SetQueue{QueueID: uint32(v)}, err)
	case "pop_queue":
		return one(&PopQueue{}, nil)
	case "mod_vlan_vid", "set_vlan_vid":
		v, err := u(16)
		if err == nil && v > 0xfff {
			err = fmt.Errorf("%s: not a valid VLAN VID", arg)
		}
		return one(&SetVLANVID{VID: uint16(v), PushIfNeeded: name == "mod_vlan_vid"}, err)
	case "mod_vlan_pcp", "set_vlan_pcp":
		v, err := u(8)
		if err == nil && v > 7 {
			err = fmt.Errorf("%s: not a valid VLAN PCP", arg)
		}
		return one(&SetVLANPCP{PCP: uint8(v), PushIfNeeded: name == "mod_vlan_pcp"}, err)
	case "strip_vlan":
		return one(&StripVLAN{Raw: RawOF10StripVLAN}, nil)
	case "pop_vlan":
		return one(&StripVLAN{Raw: RawOF11PopVLAN}, nil)
	case "push_vlan":
		v, err := u(16)
		if err == nil && v != 0x8100 && v != 0x88a8 {
			err = fmt.Errorf("%s: not a valid VLAN ethertype", arg)
		}
		return one(&PushVLAN{EtherType: uint16(v)}, err)
	case "mod_dl_src", "mod_dl_dst":
		mac, err := net.ParseMAC(arg)
		if err != nil || len(mac) != 6 {
			return nil, fmt.Errorf("invalid mac address %s", arg)
		}
		if name == "mod_dl_src" {
			return one(&SetEthSrc{MAC: [6]byte(mac)}, nil)
		}
		return one(&SetEthDst{MAC: [6]byte(mac)}, nil)
	case "mod_nw_src", "mod_nw_dst":
		a, err := netip.ParseAddr(arg)
		if err != nil || !a.Is4() {
			return nil, fmt.Errorf("%s: could not convert to IP address", arg)
		}
		if name == "mod_nw_src" {
			return one(&SetIPv4Src{Addr: a.As4()}, nil)
		}
		return one(&SetIPv4Dst{Addr: a.As4()}, nil)
	case "mod_nw_tos":
		v, err := u(8)
		if err == nil && v&^0xfc != 0 {
			err = fmt.Errorf("%s: not a valid TOS", arg)
		}
		return one(&SetIPDSCP{DSCP: uint8(v)}, err)
	case "mod_nw_ecn":
		v, err := u(8)
		if err == nil && v > 3 {
			err = fmt.Errorf("%s: not a valid ECN", arg)
		}
		return one(&SetIPECN{ECN: uint8(v)}, err)
	case "mod_nw_ttl":
		v, err := u(8)
		return one(&SetIPTTL{TTL: uint8(v)}, err)
	case "mod_tp_src":
		v, err := u(16)
		return one(&SetL4SrcPort{Port: uint16(v)}, err)
	case "mod_tp_dst":
		v, err := u(16)
		return one(&SetL4DstPort{Port: uint16(v)}, err)
	case "set_field":
		return one(parseSetField(arg))
	case "load":
		return one(parseLoad(arg))
	case "move":
		src, dst, ok := strings.Cut(arg, "->")
		if !ok {
			return nil, fmt.Errorf("%s: missing `->' following source", arg)
		}
		s, err := parseSubfield(src)
		if err != nil {
			return nil, err
		}
		d, err := parseSubfield(dst)
		if err != nil {
			return nil, err
		}
		if s.NBits != d.NBits {
			return nil, fmt.Errorf("%s: source field is %d bits wide but destination is %d bits wide", arg, s.NBits, d.NBits)
		}
		return one(&RegMove{Src: s, Dst: d}, nil)
	case "push", "pop":
		sf, err := parseSubfield(arg)
		if err != nil {
			return nil, err
		}
		if name == "push" {
			return one(&StackPush{Field: sf}, nil)
		}
		return one(&StackPop{Field: sf}, nil)
	case "dec_ttl":
		if paren == "" {
			return one(&DecTTL{CntIDs: []uint16{0}}, nil)
		}
		d := &DecTTL{Raw: RawNXDecTTLCntIDs}
		items, err := splitTop(paren)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			v, err := parseUint(it, 16)
			if err != nil {
				return nil, err
			}
			d.CntIDs = append(d.CntIDs, uint16(v))
		}
		if len(d.CntIDs) == 0 {
			return nil, errors.New("dec_ttl_cnt_ids: expected at least one controller id")
		}
		return one(d, nil)
	case "set_tunnel", "set_tunnel64":
		v, err := u(64)
		raw := RawDefault
		if name == "set_tunnel64" {
			raw = RawNXSetTunnel64
		}
		return one(&SetTunnel{TunID: v, Raw: raw}, err)
	case "note":
		var data []byte
		for _, part := range strings.FieldsFunc(arg, func(r rune) bool { return r == '.' }) {
			v, err := strconv.ParseUint(part, 16, 8)
			if err != nil {
				return nil, fmt.Errorf("%s: bad hex digit in note", arg)
			}
			data = append(data, byte(v))
		}
		return one(&Note{Data: data}, nil)
	case "exit":
		return one(&Exit{}, nil)
	case "ct_clear":
		return one(&CTClear{}, nil)
	case "dec_mpls_ttl":
		return one(&DecMPLSTTL{}, nil)
	case "set_mpls_label":
		v, err := parseUint(arg+paren, 32)
		return one(&SetMPLSLabel{Label: uint32(v)}, err)
	case "set_mpls_tc":
		v, err := parseUint(arg+paren, 8)
		return one(&SetMPLSTC{TC: uint8(v)}, err)
	case "set_mpls_ttl":
		v, err := parseUint(arg+paren, 8)
		return one(&SetMPLSTTL{TTL: uint8(v)}, err)
	case "push_mpls":
		v, err := u(16)
		if err == nil && v != 0x8847 && v != 0x8848 {
			err = fmt.Errorf("%s: push_mpls ethertype must be 0x8847 or 0x8848", arg)
		}
		return one(&PushMPLS{EtherType: uint16(v)}, err)
	case "pop_mpls":
		v, err := u(16)
		return one(&PopMPLS{EtherType: uint16(v)}, err)
	case "delete_field":
		f := fieldByName(strings.TrimSpace(arg))
		if f == nil {
			return nil, fmt.Errorf("%s is not a valid OXM field name", arg)
		}
		return one(&DeleteField{Field: f}, nil)
	case "dec_nsh_ttl":
		return one(&DecNSHTTL{}, nil)
	case "conjunction":
		var id uint32
		var k, n int
		if c, err := fmt.Sscanf(paren, "%d,%d/%d", &id, &k, &n); c != 3 || err != nil {
			return nil, fmt.Errorf(`"conjunction" syntax is "conjunction(id,i/n)"`)
		}
		if n < 2 || n > 64 || k < 1 || k > n {
			return nil, fmt.Errorf("conjunction must have between 2 and 64 clauses, and the clause number must be between 1 and n")
		}
		return one(&Conjunction{ID: id, Clause: uint8(k - 1), NClauses: uint8(n)}, nil)
	case "fin_timeout":
		ft := &FinTimeout{}
		kv, err := parseKV(paren)
		if err != nil {
			return nil, err
		}
		for _, p := range kv {
			v, err := parseUint(p[1], 16)
			if err != nil {
				return nil, err
			}
			switch p[0] {
			case "idle_timeout":
				ft.IdleTimeout = uint16(v)
			case "hard_timeout":
				ft.HardTimeout = uint16(v)
			default:
				return nil, fmt.Errorf("invalid key '%s' in 'fin_timeout' argument", p[0])
			}
		}
		return one(ft, nil)
	case "learn":
		return one(parseLearn(paren))
	case "encap":
		return one(parseEncap(paren))
	case "decap":
		return one(parseDecap(paren))
	case "multipath":
		return one(parseMultipath(paren))
	case "bundle", "bundle_load":
		return one(parseBundle(paren, name == "bundle_load"))
	case "sample":
		return one(parseSample(paren))
	case "ct":
		return one(parseCT(paren, depth))
	case "nat":
		return one(parseNAT(paren))
	case "clone":
		nested, err := parseList(paren, depth+1)
		if err != nil {
			return nil, err
		}
		return one(&Clone{Actions: nested}, nil)
	case "check_pkt_larger":
		v, err := parseUint(paren, 16)
		if err != nil {
			return nil, err
		}
		dst, ok := strings.CutPrefix(rest, "->")
		if !ok {
			return nil, fmt.Errorf("%s: missing `->'", item)
		}
		sf, err := parseSubfield(dst)
		if err != nil {
			return nil, err
		}
		if sf.NBits != 1 {
			return nil, errors.New("Only 1-bit destination field is allowed")
		}
		return one(&CheckPktLarger{Len: uint16(v), Dst: sf}, nil)
	case "goto_table":
		v, err := u(8)
		return one(&GotoTable{TableID: uint8(v)}, err)
	case "write_metadata":
		vs, ms, masked := strings.Cut(arg, "/")
		v, err := parseUint(vs, 64)
		if err != nil {
			return nil, err
		}
		m := ^uint64(0)
		if masked {
			if m, err = parseUint(ms, 64); err != nil {
				return nil, err
			}
		}
		return one(&WriteMetadata{Metadata: v, Mask: m}, nil)
	case "clear_actions":
		return one(&ClearActions{}, nil)
	case "write_actions":
		nested, err := parseList(paren, depth+1)
		if err != nil {
			return nil, err
		}
		for _, a := range nested {
			if !AllowedInActionSet(a.Kind()) {
				return nil, fmt.Errorf("%s action not allowed in write_actions", a.Kind())
			}
		}
		return one(&WriteActions{Actions: nested}, nil)
	case "apply_actions":
		return parseList(paren, depth+1)
	}
	if arg == "" && paren == "" {
		if p, ok := ParsePort(name); ok {
			return one(outputTo(p), nil)
		}
		if strings.HasPrefix(strings.ToUpper(name), "CONTROLLER") {
			return one(outputTo(mf.PortController), nil)
		}
	}
	if strings.EqualFold(name, "CONTROLLER") { // CONTROLLER:LEN
		v, err := u(16)
		return one(&Output{Port: mf.PortController, MaxLen: uint16(v)}, err)
	}
	return nil, fmt.Errorf("unknown action %s", name)
}

func outputTo(p uint32) *Output {
	o := &Output{Port: p}
	if p == mf.PortController {
		o.MaxLen = 0xffff
	}
	return o
}

func parseOutputTrunc(s string) (Action, error) {
	if !strings.Contains(s, "port") || !strings.Contains(s, "max_len") {
		return nil, fmt.Errorf("%s: output to unknown port", s)
	}
	kv, err := parseKV(s)
	if err != nil {
		return nil, err
	}
	o := &OutputTrunc{}
	for _, p := range kv {
		switch p[0] {
		case "port":
			port, ok := ParsePort(p[1])
			if !ok {
				return nil, fmt.Errorf("output to unknown truncate port: %s", p[1])
			}
			if port > mf.PortMax && port != mf.PortLocal && port != mf.PortInPort {
				return nil, fmt.Errorf("output to unsupported truncate port: %s", p[1])
			}
			o.Port = port
		case "max_len":
			v, err := parseUint(p[1], 32)
			if err != nil {
				return nil, err
			}
			if v < 14 {
				return nil, fmt.Errorf("max_len %d is less than the minimum value 14", v)
			}
			o.MaxLen = uint32(v)
		default:
			return nil, fmt.Errorf("invalid key '%s' in output_trunc argument", p[0])
		}
	}
	return o, nil
}

func parseController(arg, paren string) (Action, error) {
	c := &Controller{MaxLen: 0xffff, Reason: ReasonAction, MeterID: NoMeter}
	s := arg + paren
	if s != "" {
		if v, err := strconv.ParseUint(s, 10, 16); err == nil {
			c.MaxLen = uint16(v)
		} else {
			kv, err := parseKV(s)
			if err != nil {
				return nil, err
			}
			for _, p := range kv {
				switch p[0] {
				case "reason":
					r, ok := reasonByName(p[1])
					if !ok {
						return nil, fmt.Errorf("unknown reason \"%s\"", p[1])
					}
					c.Reason = r
				case "max_len":
					v, err := parseUint(p[1], 16)
					if err != nil {
						return nil, err
					}
					c.MaxLen = uint16(v)
				case "id":
					v, err := parseUint(p[1], 16)
					if err != nil {
						return nil, err
					}
					c.ControllerID = uint16(v)
				case "userdata":
					for _, part := range strings.Split(p[1], ".") {
						v, err := strconv.ParseUint(part, 16, 8)
						if err != nil {
							return nil, fmt.Errorf("%s: bad userdata", p[1])
						}
						c.Userdata = append(c.Userdata, byte(v))
					}
				case "pause":
					c.Pause = true
				case "meter_id":
					v, err := parseUint(p[1], 32)
					if err != nil {
						return nil, err
					}
					c.MeterID = uint32(v)
				default:
					return nil, fmt.Errorf("unknown key \"%s\" parsing controller action", p[0])
				}
			}
		}
	}
	if c.Reason == ReasonAction && c.ControllerID == 0 && len(c.Userdata) == 0 && !c.Pause && c.MeterID == NoMeter {
		return &Output{Port: mf.PortController, MaxLen: c.MaxLen}, nil
	}
	return c, nil
}

func reasonByName(s string) (uint8, bool) {
	for r := uint8(0); r <= ReasonPacketOut; r++ {
		if reasonName(r) == s {
			return r, true
		}
	}
	return 0, false
}

func parseEnqueue(s string) (Action, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ',' || r == 'q' })
	if len(fields) != 2 {
		return nil, errors.New(`"enqueue" syntax is "enqueue:PORT:QUEUE" or "enqueue(PORT,QUEUE)"`)
	}
	p, ok := ParsePort(fields[0])
	if !ok {
		return nil, fmt.Errorf("%s: enqueue to unknown port", fields[0])
	}
	q, err := parseUint(fields[1], 32)
	if err != nil {
		return nil, err
	}
	return &Enqueue{Port: p, Queue: uint32(q)}, nil
}

func parseResubmit(arg, paren string) (Action, error) {
	r := &Resubmit{InPort: mf.PortInPort, TableID: TableInPort, Raw: RawNXResubmitTable}
	if paren == "" {
		p, ok := ParsePort(arg)
		if !ok {
			return nil, fmt.Errorf("%s: resubmit to unknown port", arg)
		}
		r.InPort, r.Raw = p, RawNXResubmit
		return r, nil
	}
	parts := strings.Split(paren, ",")
	if len(parts) > 3 {
		return nil, errors.New("resubmit: too many arguments")
	}
	if s := strings.TrimSpace(parts[0]); s != "" {
		p, ok := ParsePort(s)
		if !ok {
			return nil, fmt.Errorf("%s: resubmit to unknown port", s)
		}
		r.InPort = p
	}
	if len(parts) > 1 {
		if s := strings.TrimSpace(parts[1]); s != "" {
			t, err := parseUint(s, 8)
			if err != nil {
				return nil, fmt.Errorf("%s: resubmit to unknown table", s)
			}
			r.TableID = uint8(t)
		}
	}
	if len(parts) > 2 {
		if strings.TrimSpace(parts[2]) != "ct" {
			return nil, fmt.Errorf("%s: unknown resubmit argument", parts[2])
		}
		r.WithCTOrig, r.Raw = true, RawNXResubmitTableCT
	}
	if r.InPort == mf.PortInPort && r.TableID == TableInPort {
		return nil, errors.New("at least one \"in_port\" or \"table\" must be specified on resubmit")
	}
	return r, nil
}

// parseSetField parses "VALUE[/MASK]->FIELD".
func parseSetField(arg string) (Action, error) {
	i := strings.LastIndex(arg, "->")
	if i < 0 {
		return nil, fmt.Errorf("%s: missing `->'", arg)
	}
	name := strings.TrimSpace(arg[i+2:])
	switch name { // MPLS fields: not in gvs's registry
	case "mpls_label":
		v, err := parseUint(arg[:i], 32)
		if err != nil || v > 0xfffff {
			return nil, fmt.Errorf("%s is not a valid value for field %s", arg[:i], name)
		}
		return &SetMPLSLabel{Label: uint32(v), Raw: RawOFSetField}, nil
	case "mpls_tc":
		v, err := parseUint(arg[:i], 8)
		if err != nil || v > 7 {
			return nil, fmt.Errorf("%s is not a valid value for field %s", arg[:i], name)
		}
		return &SetMPLSTC{TC: uint8(v), Raw: RawOFSetField}, nil
	}
	if name == "" {
		return nil, fmt.Errorf("%s: missing field name following `->'", arg)
	}
	f := fieldByName(name)
	if f == nil {
		return nil, fmt.Errorf("%s is not a valid OXM field name", name)
	}
	if !fieldWritable(f) {
		return nil, fmt.Errorf("%s is read-only", name)
	}
	v, m, err := parseFieldValue(f, arg[:i])
	if err != nil {
		return nil, err
	}
	if !valueValid(f, &v) {
		return nil, fmt.Errorf("%s is not a valid value for field %s", arg[:i], name)
	}
	return &SetField{Field: f, Value: v, Mask: m}, nil
}

// parseLoad parses "VALUE->DST" (Nicira reg_load).
func parseLoad(arg string) (Action, error) {
	i := strings.LastIndex(arg, "->")
	if i < 0 {
		return nil, fmt.Errorf("%s: missing `->' following value", arg)
	}
	dst, err := parseSubfield(arg[i+2:])
	if err != nil {
		return nil, err
	}
	n, ok := new(big.Int).SetString(strings.TrimSpace(arg[:i]), 0)
	if !ok || n.Sign() < 0 {
		return nil, fmt.Errorf("%s: bad value", arg[:i])
	}
	if n.BitLen() > dst.NBits {
		return nil, fmt.Errorf("%s: value %s does not fit into %d bits", arg, arg[:i], dst.NBits)
	}
	sf := &SetField{Field: dst.Field, Raw: RawNXRegLoad}
	nb := fieldBytes(dst.Field)
	for bit := 0; bit < dst.NBits; bit++ {
		bitwisePut(uint64(n.Bit(bit)), sf.Value[:nb], dst.Ofs+bit, 1)
		bitwisePut(1, sf.Mask[:nb], dst.Ofs+bit, 1)
	}
	return sf, nil
}

func parseCT(s string, depth int) (Action, error) {
	ct := &CT{RecircTable: CTNoRecirc}
	kv, err := parseKV(s)
	if err != nil {
		return nil, err
	}
	for _, p := range kv {
		k, v := p[0], p[1]
		switch {
		case k == "commit":
			ct.Flags |= CTCommit
		case k == "force":
			ct.Flags |= CTForce
		case k == "table":
			t, err := parseUint(v, 8)
			if err != nil {
				return nil, err
			}
			ct.RecircTable = uint8(t)
		case k == "zone":
			if z, err := strconv.ParseUint(v, 0, 16); err == nil {
				ct.ZoneImm = uint16(z)
			} else {
				sf, err := parseSubfield(v)
				if err != nil {
					return nil, err
				}
				if sf.NBits != 16 {
					return nil, fmt.Errorf("%s: zone subfield must be 16 bits", v)
				}
				ct.ZoneSrc = sf
			}
		case k == "alg":
			switch v {
			case "ftp":
				ct.Alg = CTAlgFTP
			case "tftp":
				ct.Alg = CTAlgTFTP
			default:
				a, err := parseUint(v, 16)
				if err != nil {
					return nil, fmt.Errorf("unknown alg %s", v)
				}
				ct.Alg = uint16(a)
			}
		case k == "nat" || strings.HasPrefix(k, "nat("):
			_, _, paren, _ := splitItem(k)
			nat, err := parseNAT(paren)
			if err != nil {
				return nil, err
			}
			ct.Actions = append([]Action{nat}, ct.Actions...)
		case strings.HasPrefix(k, "exec("):
			_, _, paren, _ := splitItem(k)
			nested, err := parseList(paren, depth+1)
			if err != nil {
				return nil, err
			}
			if err := verify(nested, of15, instApplyActions, KindCT); err != nil {
				return nil, fmt.Errorf("ct: %v", err)
			}
			ct.Actions = append(ct.Actions, nested...)
		default:
			return nil, fmt.Errorf("invalid argument to \"ct\" action: `%s'", k)
		}
	}
	if ct.Flags&CTForce != 0 && ct.Flags&CTCommit == 0 {
		return nil, errors.New("\"force\" flag requires \"commit\" flag")
	}
	return ct, nil
}

func parseNAT(s string) (Action, error) {
	n := &NAT{}
	kv, err := parseKV(s)
	if err != nil {
		return nil, err
	}
	for _, p := range kv {
		switch p[0] {
		case "src", "dst":
			if n.Flags&(NATSrc|NATDst) != 0 {
				return nil, errors.New("May only specify one of \"src\" or \"dst\".")
			}
			if p[0] == "src" {
				n.Flags |= NATSrc
			} else {
				n.Flags |= NATDst
			}
			if p[1] != "" {
				if err := parseNATRange(p[1], n); err != nil {
					return nil, err
				}
			}
		case "persistent":
			n.Flags |= NATPersistent
		case "hash":
			n.Flags |= NATProtoHash
		case "random":
			n.Flags |= NATProtoRandom
		default:
			return nil, fmt.Errorf("invalid key \"%s\" in \"nat\" argument", p[0])
		}
	}
	if n.Flags&NATProtoHash != 0 && n.Flags&NATProtoRandom != 0 {
		return nil, errors.New("Both \"hash\" and \"random\" are specified.")
	}
	return n, nil
}

// parseNATRange parses ADDR[-ADDR][:PORT[-PORT]] (IPv6 addresses in
// brackets when a port follows).
func parseNATRange(s string, n *NAT) error {
	bad := fmt.Errorf("invalid nat range \"%s\"", s)
	addrs, ports := s, ""
	if strings.HasPrefix(s, "[") {
		// [a]-[b]:p-q or [a]:p
		end := strings.LastIndex(s, "]")
		if end < 0 {
			return bad
		}
		addrs, ports = s[:end+1], strings.TrimPrefix(s[end+1:], ":")
		addrs = strings.NewReplacer("[", "", "]", "").Replace(addrs)
	} else if strings.Count(s, ":") == 1 {
		addrs, ports, _ = strings.Cut(s, ":")
	}
	lo, hi, ranged := strings.Cut(addrs, "-")
	a, err := netip.ParseAddr(lo)
	if err != nil {
		return bad
	}
	n.AddrMin = a
	if ranged {
		b, err := netip.ParseAddr(hi)
		if err != nil || b.Is4() != a.Is4() || b.Less(a) {
			return bad
		}
		n.AddrMax = b
	}
	if ports != "" {
		plo, phi, pr := strings.Cut(ports, "-")
		v, err := strconv.ParseUint(plo, 10, 16)
		if err != nil {
			return bad
		}
		n.PortMin = uint16(v)
		if pr {
			w, err := strconv.ParseUint(phi, 10, 16)
			if err != nil || w < v {
				return bad
			}
			n.PortMax = uint16(w)
		}
	}
	return nil
}

// learnKV splits learn's arguments at top-level commas into key and value
// at the first ':' or '=' (OVS's ofputil_parse_key_value).
func learnKV(s string) ([][2]string, error) {
	items, err := splitTop(s)
	if err != nil {
		return nil, err
	}
	out := make([][2]string, 0, len(items))
	for _, it := range items {
		i := strings.IndexAny(it, ":=")
		if i < 0 {
			out = append(out, [2]string{it, ""})
			continue
		}
		out = append(out, [2]string{it[:i], it[i+1:]})
	}
	return out, nil
}

// parseImm parses an integer (decimal or 0x hex, any width) into the
// low n bytes of an immediate value.
func parseImm(s string, n int) ([]byte, bool) {
	x, ok := new(big.Int).SetString(strings.TrimSpace(s), 0)
	if !ok || x.Sign() < 0 || x.BitLen() > 8*n {
		return nil, false
	}
	return x.FillBytes(make([]byte, n)), true
}

func immBits(nbits int, b []byte) []byte {
	n := (nbits + 7) / 8
	return append([]byte(nil), b[len(b)-n:]...)
}

// parseLearn parses learn(...)'s arguments (OVS's learn_parse).
func parseLearn(s string) (Action, error) {
	l := &Learn{TableID: 1, Priority: 0x8000}
	kv, err := learnKV(s)
	if err != nil {
		return nil, err
	}
	num := func(v string, bits int) (uint64, error) { return parseUint(v, bits) }
	for _, p := range kv {
		name, value := strings.TrimSpace(p[0]), strings.TrimSpace(p[1])
		var v uint64
		switch name {
		case "table":
			if v, err = num(value, 8); err != nil {
				return nil, err
			}
			if v == 255 {
				return nil, fmt.Errorf("%s: table id 255 not valid for `learn' action", s)
			}
			l.TableID = uint8(v)
		case "priority":
			v, err = num(value, 16)
			l.Priority = uint16(v)
		case "idle_timeout":
			v, err = num(value, 16)
			l.IdleTimeout = uint16(v)
		case "hard_timeout":
			v, err = num(value, 16)
			l.HardTimeout = uint16(v)
		case "fin_idle_timeout":
			v, err = num(value, 16)
			l.FinIdleTimeout = uint16(v)
		case "fin_hard_timeout":
			v, err = num(value, 16)
			l.FinHardTimeout = uint16(v)
		case "cookie":
			l.Cookie, err = num(value, 64)
		case "limit":
			v, err = num(value, 32)
			l.Limit = uint32(v)
		case "send_flow_rem":
			l.Flags |= LearnSendFlowRem
		case "delete_learned":
			l.Flags |= LearnDeleteLearned
		case "result_dst":
			l.Flags |= LearnWriteResult
			sf, perr := parseSubfield(value)
			if perr != nil {
				return nil, perr
			}
			if sf.NBits != 1 {
				return nil, errors.New("result_dst in 'learn' action must be a single bit")
			}
			if !fieldWritable(sf.Field) {
				return nil, fmt.Errorf("%s is read-only", value)
			}
			l.ResultDst = sf
		default:
			spec, serr := parseLearnSpec(s, name, value)
			if serr != nil {
				return nil, serr
			}
			l.Specs = append(l.Specs, spec)
		}
		if err != nil {
			return nil, err
		}
	}
	return l, nil
}

func parseLearnSpec(orig, name, value string) (LearnSpec, error) {
	var spec LearnSpec
	if dst, err := parseSubfield(name); err == nil {
		if !hasNXMHeader(dst.Field) {
			return spec, fmt.Errorf("%s: experimenter OXM field '%s' not supported", orig, name)
		}
		spec.Dst, spec.NBits, spec.DstType = dst, dst.NBits, LearnDstMatch
		if value == "" {
			spec.Src, spec.SrcType = dst, LearnSrcField
			return spec, nil
		}
		if src, err := parseSubfield(value); err == nil {
			if src.NBits != dst.NBits {
				return spec, fmt.Errorf("%s: bit widths of %s (%d) and %s (%d) differ", orig, name, dst.NBits, value, src.NBits)
			}
			spec.Src, spec.SrcType = src, LearnSrcField
			return spec, nil
		}
		n := fieldBytes(dst.Field)
		var imm []byte
		if dst.IsWhole() {
			v, _, err := parseFieldValue(dst.Field, value)
			if err != nil || strings.Contains(value, "/") {
				return spec, fmt.Errorf("%s: cannot parse value %s", orig, value)
			}
			imm = v[:n]
		} else {
			b, ok := parseImm(value, n)
			if !ok {
				return spec, fmt.Errorf("%s: cannot parse integer value", orig)
			}
			if new(big.Int).SetBytes(b).BitLen() > dst.NBits {
				return spec, fmt.Errorf("%s: value does not fit into %d bits", orig, dst.NBits)
			}
			imm = b
		}
		spec.SrcType, spec.Imm = LearnSrcImmediate, immBits(dst.NBits, imm)
		return spec, nil
	}
	switch name {
	case "load":
		src, dstS, ok := strings.Cut(value, "->")
		if !ok {
			return spec, fmt.Errorf("%s: missing `->' in `%s'", orig, value)
		}
		if src == "" {
			return spec, fmt.Errorf("%s: missing source before `->' in `%s'", orig, value)
		}
		dst, err := parseSubfield(dstS)
		if err != nil {
			return spec, err
		}
		spec.Dst, spec.NBits, spec.DstType = dst, dst.NBits, LearnDstLoad
		if b, ok := parseImm(src, 16); ok {
			if new(big.Int).SetBytes(b).BitLen() > dst.NBits {
				return spec, fmt.Errorf("%s: value does not fit into %d bits", orig, dst.NBits)
			}
			spec.SrcType, spec.Imm = LearnSrcImmediate, immBits(dst.NBits, b)
		} else {
			srcSF, err := parseSubfield(src)
			if err != nil {
				return spec, err
			}
			if srcSF.NBits != dst.NBits {
				return spec, fmt.Errorf("%s: source field is %d bits wide but destination is %d bits wide", value, srcSF.NBits, dst.NBits)
			}
			spec.Src, spec.SrcType = srcSF, LearnSrcField
		}
		if !fieldWritable(dst.Field) {
			return spec, fmt.Errorf("%s is read-only", dstS)
		}
		return spec, nil
	case "output":
		src, err := parseSubfield(value)
		if err != nil {
			return spec, err
		}
		spec.Src, spec.NBits, spec.SrcType, spec.DstType = src, src.NBits, LearnSrcField, LearnDstOutput
		return spec, nil
	}
	return spec, fmt.Errorf("%s: unknown keyword %s", orig, name)
}

func hashFieldsByName(s string) (uint16, bool) {
	for f := HashEthSrc; f <= HashSymmetricL3; f++ {
		if strings.EqualFold(hashFieldsName(f), s) {
			return f, true
		}
	}
	return 0, false
}

func splitArgs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

// parseMultipath parses "fields,basis,algorithm,n_links,arg,dst".
func parseMultipath(s string) (Action, error) {
	a := splitArgs(s)
	if len(a) < 6 {
		return nil, fmt.Errorf("%s: not enough arguments to multipath action", s)
	}
	mp := &Multipath{}
	var ok bool
	if mp.Fields, ok = hashFieldsByName(a[0]); !ok {
		return nil, fmt.Errorf("%s: unknown fields `%s'", s, a[0])
	}
	basis, _ := strconv.Atoi(a[1])
	mp.Basis = uint16(basis)
	switch strings.ToLower(a[2]) {
	case "modulo_n":
		mp.Algorithm = MultipathModuloN
	case "hash_threshold":
		mp.Algorithm = MultipathHashThreshold
	case "hrw":
		mp.Algorithm = MultipathHRW
	case "iter_hash":
		mp.Algorithm = MultipathIterHash
	default:
		return nil, fmt.Errorf("%s: unknown algorithm `%s'", s, a[2])
	}
	nLinks, _ := strconv.Atoi(a[3])
	if nLinks < 1 || nLinks > 65536 {
		return nil, fmt.Errorf("%s: n_links %d is not in valid range 1 to 65536", s, nLinks)
	}
	mp.MaxLink = uint16(nLinks - 1)
	arg, _ := strconv.Atoi(a[4])
	mp.Arg = uint32(arg)
	dst, err := parseSubfield(a[5])
	if err != nil {
		return nil, err
	}
	if dst.NBits < 16 && nLinks > 1<<dst.NBits {
		return nil, fmt.Errorf("%s: %d-bit destination field has %d possible values, less than specified n_links %d", s, dst.NBits, 1<<dst.NBits, nLinks)
	}
	mp.Dst = dst
	return mp, nil
}

// parseBundle parses "fields,basis,algorithm,ofport,[dst,]members:p1,p2...".
func parseBundle(s string, load bool) (Action, error) {
	a := splitArgs(s)
	need := 5
	if load {
		need = 6
	}
	if len(a) < need {
		return nil, fmt.Errorf("%s: not enough arguments to bundle action", s)
	}
	bd := &Bundle{}
	var ok bool
	if bd.Fields, ok = hashFieldsByName(a[0]); !ok {
		return nil, fmt.Errorf("%s: unknown fields `%s'", s, a[0])
	}
	basis, _ := strconv.Atoi(a[1])
	bd.Basis = uint16(basis)
	switch strings.ToLower(a[2]) {
	case "active_backup":
		bd.Algorithm = BundleActiveBackup
	case "hrw":
		bd.Algorithm = BundleHRW
	default:
		return nil, fmt.Errorf("%s: unknown algorithm `%s'", s, a[2])
	}
	if !strings.EqualFold(a[3], "ofport") {
		return nil, fmt.Errorf("%s: unknown member_type `%s'", s, a[3])
	}
	rest := a[4:]
	if load {
		dst, err := parseSubfield(rest[0])
		if err != nil {
			return nil, err
		}
		bd.Dst, rest = dst, rest[1:]
	}
	first, _, _ := strings.Cut(rest[0], ":")
	if !strings.EqualFold(first, "members") && !strings.EqualFold(first, "slaves") {
		return nil, fmt.Errorf("%s: missing member delimiter, expected `members', got `%s'", s, first)
	}
	if _, p, ok := strings.Cut(rest[0], ":"); ok && p != "" {
		rest[0] = p
	} else {
		rest = rest[1:]
	}
	for _, m := range rest {
		p, ok := ParsePort(strings.Trim(m, "[]"))
		if !ok {
			return nil, fmt.Errorf("%s: bad port number", m)
		}
		bd.Members = append(bd.Members, p)
	}
	return bd, nil
}

// parseSample parses sample(probability=...,collector_set_id=...,...).
func parseSample(s string) (Action, error) {
	sm := &Sample{SamplingPort: mf.PortNone}
	kv, err := parseKV(s)
	if err != nil {
		return nil, err
	}
	for _, p := range kv {
		var v uint64
		switch p[0] {
		case "probability":
			if v, err = parseUint(p[1], 16); err == nil && v == 0 {
				err = errors.New("invalid probability value \"0\"")
			}
			sm.Probability = uint16(v)
		case "collector_set_id":
			v, err = parseUint(p[1], 32)
			sm.CollectorSetID = uint32(v)
		case "obs_domain_id":
			v, err = parseUint(p[1], 32)
			sm.ObsDomainID = uint32(v)
		case "obs_point_id":
			v, err = parseUint(p[1], 32)
			sm.ObsPointID = uint32(v)
		case "sampling_port":
			port, ok := ParsePort(p[1])
			if !ok {
				err = fmt.Errorf("%s: unknown port", p[1])
			}
			sm.SamplingPort = port
		case "ingress":
			sm.Direction = SampleIngress
		case "egress":
			sm.Direction = SampleEgress
		default:
			err = fmt.Errorf("invalid key \"%s\" in \"sample\" argument", p[0])
		}
		if err != nil {
			return nil, err
		}
	}
	if sm.Probability == 0 {
		return nil, errors.New("non-zero \"probability\" must be specified on sample")
	}
	return sm, nil
}

// parseEncap parses "ethernet", "mpls", "mpls_mc" or
// "nsh[(md_type=N,tlv(0xCLASS,TYPE,0xVALUE)...)]".
func parseEncap(s string) (Action, error) {
	name, _, paren, _ := splitItem(strings.TrimSpace(s))
	e := &Encap{}
	switch name {
	case "ethernet":
		e.PacketType = PacketTypeEthernet
	case "nsh":
		e.PacketType = PacketTypeNSH
	case "mpls":
		e.PacketType = PacketTypeMPLS
	case "mpls_mc":
		e.PacketType = PacketTypeMPLSMC
	default:
		return nil, fmt.Errorf("Encap hdr not supported: %s", name)
	}
	if paren == "" {
		return e, nil
	}
	if e.PacketType != PacketTypeNSH {
		return nil, fmt.Errorf("Invalid property: %s", paren)
	}
	items, err := splitTop(paren)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		key, value, _, _ := splitItem(it)
		switch key {
		case "md_type":
			v, err := parseUint(value, 8)
			if err != nil {
				return nil, err
			}
			if v < 1 || v > 2 {
				return nil, errors.New("invalid md_type")
			}
			e.Props = append(e.Props, EncapProp{Class: EncapPropClassNSH, Type: EncapPropMDType, MDType: uint8(v)})
		case "tlv":
			_, _, args, _ := splitItem(it)
			parts := strings.Split(args, ",")
			if len(parts) != 3 || !strings.HasPrefix(parts[0], "0x") {
				return nil, fmt.Errorf("Invalid NSH TLV header: %s", args)
			}
			class, err1 := strconv.ParseUint(parts[0][2:], 16, 16)
			typ, err2 := strconv.ParseUint(parts[1], 10, 8)
			// OVS wants 0x before the value but prints a zero value as
			// "0": take both.
			hexv := strings.TrimPrefix(parts[2], "0x")
			if len(hexv)%2 == 1 {
				hexv = "0" + hexv
			}
			data, err3 := hexDecode(hexv)
			if err1 != nil || err2 != nil || err3 != nil || len(data) > 127 {
				return nil, fmt.Errorf("Invalid NSH TLV header: %s", args)
			}
			padded := make([]byte, roundUp(len(data), 8))
			copy(padded, data)
			e.Props = append(e.Props, EncapProp{Class: EncapPropClassNSH, Type: EncapPropTLV, TLVClass: uint16(class),
				TLVType: uint8(typ), TLVLen: uint8(len(data)), Data: padded})
		default:
			return nil, fmt.Errorf("Invalid property: %s", key)
		}
	}
	return e, nil
}

func hexDecode(s string) ([]byte, error) {
	out := make([]byte, len(s)/2)
	for i := range out {
		v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			return nil, err
		}
		out[i] = byte(v)
	}
	return out, nil
}

// parseDecap parses "" or "packet_type(ns=N,type=T)".
func parseDecap(s string) (Action, error) {
	d := &Decap{PacketType: PacketTypeNextProto}
	s = strings.TrimSpace(s)
	if s == "" {
		return d, nil
	}
	name, _, paren, _ := splitItem(s)
	if name != "packet_type" {
		return nil, fmt.Errorf("Invalid decap argument: %s", name)
	}
	kv, err := parseKV(paren)
	if err != nil || len(kv) != 2 || kv[0][0] != "ns" || kv[1][0] != "type" {
		return nil, errors.New("Missing packet_type attribute ns or type")
	}
	ns, err := parseUint(kv[0][1], 16)
	if err != nil {
		return nil, err
	}
	if ns >= 2 {
		return nil, fmt.Errorf("Unsupported ns value: %d", ns)
	}
	typ, err := parseUint(kv[1][1], 16)
	if err != nil {
		return nil, err
	}
	d.PacketType = uint32(ns)<<16 | uint32(typ)
	return d, nil
}
