package mf

import (
	"strings"
	"testing"
)

func TestParseExactFlow(t *testing.T) {
	f, err := ParseExactFlow("in_port=3,tcp,tp_src=7,ct_state=est|trk", nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.InPort != 3 || f.IPProto != 6 || f.SrcPort != 7 || f.EtherType != 0x0800 {
		t.Errorf("parsed %+v", f)
	}
	if f, err := ParseExactFlow("ip", nil); err != nil || f.InPort != PortNone {
		t.Errorf("no in_port: %v, in_port %#x, want OFPP_NONE", err, f.InPort)
	}
	for s, want := range map[string]string{
		"udp,tp_src=1":                          "udp,tp_src=1: prerequisites not met for setting tp_src",
		"ct_state=+trk":                         "ct_state=+trk: bad value for ct_state (+trk: wildcards not allowed here)",
		"ip,nw_dst=198.18.0.0/15":               "ip,nw_dst=198.18.0.0/15: bad value for nw_dst (198.18.0.0/15: wildcards not allowed here)",
		"ip,tcp":                                "ip,tcp: Ethernet type set multiple times",
		"reg0=1,reg0=2":                         "reg0=1,reg0=2: field reg0 set multiple times",
		"priority=1":                            "priority=1: unknown field priority",
		"dl_type=0x0800,nw_proto=6,nw_proto=17": "dl_type=0x0800,nw_proto=6,nw_proto=17: field nw_proto set multiple times",
	} {
		_, err := ParseExactFlow(s, nil)
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", s, err, want)
		}
	}
}

// FuzzParseExactFlow: any text gets a flow or an error prefixed by the
// text, never a panic; a flow parsed is one whose formatting parses back.
func FuzzParseExactFlow(f *testing.F) {
	for _, s := range []string{"in_port=1,tcp,tp_src=5", "ct_state=+trk", "udp,tp_src=1", "ip,nw_src=1.2.3.4/8",
		"arp,arp_op=1", "ipv6,ipv6_src=2001:2::1", "reg0[1..2]=3", "tun_id=0x5,metadata=1", "vlan_tci=0x1005"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := ParseExactFlow(s, nil)
		if err != nil && !strings.HasPrefix(err.Error(), s+": ") {
			t.Fatalf("%q: error %q does not name the flow", s, err)
		}
	})
}
