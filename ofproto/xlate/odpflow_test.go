package xlate

import (
	"testing"

	"gvs/packet"
)

func TestParseODPFlow(t *testing.T) {
	k, err := ParseODPFlow("recirc_id(0),in_port(2),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2/255.255.255.0,proto=6,tos=0,ttl=64,frag=no),tcp(src=8,dst=9)")
	if err != nil {
		t.Fatal(err)
	}
	if k.InPort != 2 || k.EtherType != packet.EtherTypeIPv4 || k.SrcMAC != [6]byte{0x50, 0x54, 0, 0, 0, 5} ||
		k.DstIPv4 != [4]byte{198, 18, 0, 2} || k.IPProto != 6 || k.IPTTL != 64 || k.SrcPort != 8 || k.DstPort != 9 {
		t.Fatalf("key %+v", k)
	}
	k, err = ParseODPFlow("in_port(1),eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x8100),vlan(vid=10,pcp=3),encap(eth_type(0x0806),arp(sip=198.18.0.1,tip=198.18.0.2,op=1,sha=00:00:00:00:00:01,tha=00:00:00:00:00:00))")
	if err != nil {
		t.Fatal(err)
	}
	if !k.VLANs[0].Present() || k.VLANs[0].VID() != 10 || k.VLANs[0].PCP() != 3 || k.EtherType != packet.EtherTypeARP || k.ARPOp != 1 {
		t.Fatalf("tagged ARP key %+v", k)
	}
	// The conntrack metadata of a recirculated packet, as dpctl/dump-flows
	// prints it.
	k, err = ParseODPFlow("recirc_id(0x3),in_port(1),ct_state(+new-est+trk),ct_zone(0x5/0xffff),ct_mark(0x11),ct_label(0x5000000000000000000000000),ct_tuple4(src=198.18.0.1,dst=198.18.0.2,proto=6,tp_src=1000,tp_dst=80),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=6,frag=no)")
	if err != nil {
		t.Fatal(err)
	}
	if k.RecircID != 3 || k.CTState != 0x21 || k.CTZone != 5 || k.CTMark != 0x11 || k.CTLabel[3] != 5 ||
		k.CTNwSrc != [4]byte{198, 18, 0, 1} || k.CTNwDst != [4]byte{198, 18, 0, 2} || k.CTNwProto != 6 || k.CTTpSrc != 1000 || k.CTTpDst != 80 {
		t.Fatalf("conntrack key %+v", k)
	}
	if k, err = ParseODPFlow("ct_state(0x22),ct_tuple6(src=2001:2::1,dst=2001:2::2,proto=17,tp_src=1,tp_dst=2)"); err != nil ||
		k.CTState != 0x22 || k.CTIPv6Dst[15] != 2 || k.CTNwProto != 17 {
		t.Fatalf("ct_tuple6: %+v %v", k, err)
	}
	for _, bad := range []string{"in_port(1", "eth(src=zz)", "bogus(1)", "ipv4(frag=maybe)", "tcp(port=1)", "(1)",
		"ct_state(+bogus)", "ct_label(0xzz)", "ct_tuple4(src=2001:2::1)", "ct_tuple4(port=1)"} {
		if _, err := ParseODPFlow(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseODPFlow(f *testing.F) {
	f.Add("in_port(1),eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x0800),ipv4(src=1.2.3.4,dst=5.6.7.8,proto=17,frag=no),udp(src=1,dst=2)")
	f.Add("recirc_id(0x1),ct_state(+est+trk),ct_label(0x1/0xff),ct_tuple4(src=1.2.3.4,dst=5.6.7.8,proto=6,tp_src=1,tp_dst=2),eth_type(0x0800)")
	f.Add("eth_type(0x8100),vlan(vid=5),encap(eth_type(0x86dd),ipv6(src=::1,dst=fe80::1),icmpv6(type=135,code=0),nd(target=::2,sll=00:00:00:00:00:01))")
	f.Fuzz(func(t *testing.T, s string) {
		ParseODPFlow(s) // must not panic
	})
}
