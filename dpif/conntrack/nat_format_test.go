package conntrack

import "testing"

// Expected strings are Open vSwitch's format_odp_ct_nat output for the
// same attributes.
func TestNATString(t *testing.T) {
	for _, c := range []struct {
		n    NAT
		want string
	}{
		{NAT{Kind: NATApply}, "nat"},
		{NAT{Kind: NATSrc}, "nat(src)"},
		{NAT{Kind: NATDst, Random: true}, "nat(dst,random)"},
		{NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.0.10")}, "nat(src=198.18.0.10)"},
		{NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.0.10"), AddrMax: ntAddr("198.18.0.10")}, "nat(src=198.18.0.10)"},
		{NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.0.10"), AddrMax: ntAddr("198.18.0.20"), PortMin: 1024, PortMax: 65535, Random: true},
			"nat(src=198.18.0.10-198.18.0.20:1024-65535,random)"},
		{NAT{Kind: NATDst, AddrMin: ntAddr("198.18.5.1"), PortMin: 8080}, "nat(dst=198.18.5.1:8080)"},
		{NAT{Kind: NATDst, AddrMin: ntAddr("198.18.5.1"), PortMin: 8080, PortMax: 8080}, "nat(dst=198.18.5.1:8080)"},
		{NAT{Kind: NATDst, AddrMin: ntAddr("198.18.5.1"), AddrMax: ntAddr("198.18.5.3"), Persistent: true, Hash: true},
			"nat(dst=198.18.5.1-198.18.5.3,persistent,hash)"},
		{NAT{Kind: NATSrc, AddrMin: ntAddr("2001:2::10")}, "nat(src=2001:2::10)"},
		{NAT{Kind: NATSrc, AddrMin: ntAddr("2001:2::10"), AddrMax: ntAddr("2001:2::20")}, "nat(src=2001:2::10-2001:2::20)"},
		{NAT{Kind: NATDst, AddrMin: ntAddr("2001:2::10"), AddrMax: ntAddr("2001:2::20"), PortMin: 80, PortMax: 81, Persistent: true, Hash: true, Random: true},
			"nat(dst=[2001:2::10]-[2001:2::20]:80-81,persistent,hash,random)"},
		{NAT{Kind: NATSrc, AddrMin: ntAddr("0.0.0.0")}, "nat(src=0.0.0.0)"},
		// What Open vSwitch's datapath would refuse.
		{NAT{Kind: NATApply, Persistent: true}, `nat(error: options allowed only with "src" or "dst")`},
		{NAT{Kind: NATSrc, PortMin: 80}, "nat(error: proto but no IP.)"},
		{NAT{Kind: NATSrc, AddrMax: ntAddr("198.18.0.1")}, "nat(error: range max without min.)"},
		{NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.0.1"), PortMax: 80}, "nat(error: range max without min.)"},
		{NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.0.1"), AddrMax: ntAddr("2001:2::1")}, "nat(error: IP address sizes do not match)"},
		{NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.0.9"), AddrMax: ntAddr("198.18.0.1")}, "nat(range error)"},
		{NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.0.1"), PortMin: 90, PortMax: 80}, "nat(range error)"},
	} {
		if got := c.n.String(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.n, got, c.want)
		}
	}
}
