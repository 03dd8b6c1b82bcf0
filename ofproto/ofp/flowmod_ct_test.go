package ofp

import (
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
)

// TestFlowModCTInconsistent: conntrack original-direction addresses of
// the wrong IP version are refused as Open vSwitch does, with the same
// error ovs-ofctl reports for the same bytes.
func TestFlowModCTInconsistent(t *testing.T) {
	for _, c := range []struct {
		s   string
		err error
	}{
		{"ct_state=+trk-inv,ct_nw_src=10.0.0.1", ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"ct_state=+trk-inv,ip,ct_nw_src=10.0.0.1", nil},
		{"ct_state=+trk-inv,ipv6,ct_ipv6_dst=::1", nil},
		{"ct_state=+trk-inv,ip,ct_ipv6_src=::1", ofperr.OFPBAC_MATCH_INCONSISTENT},
	} {
		m, _, err := mf.ParseMatch(c.s)
		if err != nil {
			t.Fatal(c.s, err)
		}
		b, err := Encode(Version15, 1, &FlowMod{Match: m, BufferID: BufferNone, OutPort: mf.PortNone, OutGroup: GroupAny})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = Decode(b)
		if err != c.err {
			t.Errorf("%s: %v, want %v", c.s, err, c.err)
		}
		out := ofpPrint(t, b, 2)
		if gotOVS := ovsDecodeError.FindStringSubmatch(out); (gotOVS != nil) != (c.err != nil) || gotOVS != nil && gotOVS[1] != c.err.Error() {
			t.Errorf("%s: ovs-ofctl says:\n%s", c.s, out)
		}
	}
}
