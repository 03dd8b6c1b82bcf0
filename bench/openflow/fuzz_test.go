package openflow

import (
	"strings"
	"testing"
)

// The parsers take any text without panicking; what ParsePorts accepts
// Rewrite can use.
func FuzzParsePorts(f *testing.F) {
	f.Add("vif1 1 lp1 00:00:00:00:01:01 198.18.0.1\nvif2 2 lp2 00:00:00:00:01:02 198.18.0.2\n")
	f.Add("# c\nvif1 65279 lp1 0a:00:00:00:00:fe 198.18.0.1\n")
	f.Fuzz(func(t *testing.T, text string) {
		ports, err := ParsePorts(text)
		if err != nil {
			return
		}
		to := make([]Endpoint, len(ports))
		for i := range to {
			to[i] = Endpoint{MAC: "02:00:00:00:00:01", IP: "198.18.1.1"}
		}
		Rewrite("dl_dst="+ports[0].MAC+",nw_dst="+ports[0].IP, ports, to)
	})
}

func FuzzRewrite(f *testing.F) {
	f.Add("arp_tpa=198.18.0.1 actions=set_field:00:00:00:00:01:01->eth_src,nw_dst=198.18.0.10")
	f.Add("nw_dst=198.18.0.0/24")
	f.Fuzz(func(t *testing.T, flows string) {
		ports := []Port{{Logical: "a", MAC: "00:00:00:00:01:01", IP: "198.18.0.1"}}
		out, err := Rewrite(flows, ports, []Endpoint{{MAC: "00:00:00:00:01:01", IP: "198.18.0.1"}})
		if err == nil && out != flows {
			t.Errorf("rewriting to the same addresses changed %q to %q", flows, out)
		}
		if err == nil && !strings.Contains(flows, "198.18.0.1") && !strings.Contains(flows, "00:00:00:00:01:01") && out != flows {
			t.Errorf("nothing to replace, but %q became %q", flows, out)
		}
	})
}

func FuzzParseTLVMap(f *testing.F) {
	f.Add(" mapping table:\n  0x102  0x80       4  tun_metadata0\n")
	f.Fuzz(func(t *testing.T, text string) {
		ParseTLVMap(text)
		ParseFlowCount(text)
	})
}
