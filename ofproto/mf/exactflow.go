package mf

import "fmt"

// ParseExactFlow parses s, a comma-separated list of FIELD=VALUE items and
// protocol names, into a flow, as Open vSwitch's parse_ofp_exact_flow
// (ofproto/trace's br_flow): every value exact (no masks, no flag
// wildcards), fields in an order that meets each one's prerequisites
// (tcp before tp_src), no field set twice; a flow without in_port gets
// OFPP_NONE. Errors are Open vSwitch's texts, each prefixed by s.
func ParseExactFlow(s string, ports PortParser) (Flow, error) {
	var f Flow
	fail := func(format string, args ...any) (Flow, error) {
		return Flow{}, fmt.Errorf("%s: "+format, append([]any{s}, args...)...)
	}
	for _, kv := range SplitKeyValues(s) {
		if p, ok := protocols[kv.Key]; ok {
			if f.EtherType != 0 {
				return fail("Ethernet type set multiple times")
			}
			f.EtherType = p.dlType
			if p.proto != 0 {
				if f.IPProto != 0 {
					return fail("network protocol set multiple times")
				}
				f.IPProto = p.proto
			}
			continue
		}
		fd := FieldByName(kv.Key)
		if fd == nil {
			return fail("unknown field %s", kv.Key)
		}
		if !fd.PrereqsOK(&f) {
			return fail("prerequisites not met for setting %s", kv.Key)
		}
		if !fd.Get(&f).IsZero() {
			return fail("field %s set multiple times", kv.Key)
		}
		v, mask, err := fd.ParseValue(kv.Value, ports)
		if err == nil && mask != onesBytes(fd.Bytes) {
			err = fmt.Errorf("%s: wildcards not allowed here", kv.Value)
		}
		if err != nil {
			return fail("bad value for %s (%v)", kv.Key, err)
		}
		fd.Set(&f, v)
	}
	if f.InPort == 0 {
		f.InPort = PortNone
	}
	return f, nil
}
