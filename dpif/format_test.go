package dpif

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"gvs/dpif/conntrack"
	"gvs/packet"
)

func ip4(s string) [4]byte  { return netip.MustParseAddr(s).As4() }
func ip6(s string) [16]byte { return netip.MustParseAddr(s).As16() }

// TestActionFormatMatchesOVS compares with strings from Open vSwitch's
// tests/odp.at ("OVS datapath actions parsing and formatting - valid
// forms"); the netdev datapath's userspace pid is 0, so the pid there is
// rewritten to 0. Masked sets show the value with the bits outside the
// mask cleared, as translation (commit_masked_set_action) emits them:
// odp.at's "src=35.8.2.41/255.255.255.0" is parser input that
// translation never produces; it prints here as 35.8.2.0/255.255.255.0.
func TestActionFormatMatchesOVS(t *testing.T) {
	var k packet.Key
	var m packet.Mask
	k.SrcMAC, k.DstMAC = [6]byte{0, 1, 2, 3, 4, 5}, [6]byte{0x10, 0x11, 0x12, 0x13, 0x14, 0x15}
	m.SrcMAC, m.DstMAC = [6]byte{255, 255, 255, 255, 255, 255}, [6]byte{255, 255, 255}
	k.SrcIPv4, k.DstIPv4, k.IPProto, k.IPTOS, k.IPTTL = ip4("35.8.2.41"), ip4("172.16.0.20"), 5, 0x80, 128
	k.SrcPort, k.DstPort = 80, 8080
	k.ICMPType, k.ICMPCode = 1, 2
	k.SrcIPv6, k.DstIPv6, k.FlowLabel = ip6("::1"), ip6("::2"), 0

	maskOf := func(f func(m *packet.Mask)) *packet.Mask {
		var m packet.Mask
		f(&m)
		return &m
	}
	k6 := k
	k6.IPProto, k6.IPTOS = 10, 0x70
	eth2 := k
	eth2.SrcMAC, eth2.DstMAC = [6]byte{0, 1, 2, 3, 4, 6}, [6]byte{0x10, 0x11, 0x12, 0x13, 0x14, 0x16}

	cases := []struct {
		a    Action
		want string
	}{
		{Set(AttrEthernet, &k), "set(eth(src=00:01:02:03:04:05,dst=10:11:12:13:14:15))"},
		{SetMasked(AttrEthernet, &k, &m), "set(eth(src=00:01:02:03:04:05,dst=10:11:12:00:00:00/ff:ff:ff:00:00:00))"},
		{Set(AttrIPv4, &k), "set(ipv4(src=35.8.2.41,dst=172.16.0.20,proto=5,tos=0x80,ttl=128,frag=no))"},
		{SetMasked(AttrIPv4, &k, maskOf(func(m *packet.Mask) {
			m.SrcIPv4, m.DstIPv4, m.IPProto, m.IPTTL, m.IPFrag = [4]byte{255, 255, 255, 255}, [4]byte{255, 255, 255, 255}, 0xff, 0xff, 0xff
		})), "set(ipv4(src=35.8.2.41,dst=172.16.0.20,proto=5,ttl=128,frag=no))"},
		{SetMasked(AttrIPv4, &k, maskOf(func(m *packet.Mask) {
			m.SrcIPv4, m.IPTOS, m.IPTTL, m.IPFrag = [4]byte{255, 255, 255, 0}, 0xff, 0xff, 0xff
		})), "set(ipv4(src=35.8.2.0/255.255.255.0,tos=0x80,ttl=128,frag=no))"},
		{SetMasked(AttrIPv4, &packet.Key{}, maskOf(func(m *packet.Mask) { m.IPTOS = 0x03 })), "set(ipv4(tos=0/0x3))"},
		{SetMasked(AttrIPv4, &k, maskOf(func(m *packet.Mask) { m.IPTOS = 0xfc })), "set(ipv4(tos=0x80/0xfc))"},
		{SetMasked(AttrIPv4, &k, maskOf(func(m *packet.Mask) { m.IPTOS = 0x03 })), "set(ipv4(tos=0/0x3))"},
		{Set(AttrTCP, &k), "set(tcp(src=80,dst=8080))"},
		{SetMasked(AttrTCP, &k, maskOf(func(m *packet.Mask) { m.SrcPort, m.DstPort = 0xff00, 0xffff })), "set(tcp(src=0/0xff00,dst=8080))"},
		{SetMasked(AttrUDP, &k, maskOf(func(m *packet.Mask) { m.SrcPort = 0xffff })), "set(udp(src=80))"},
		{SetMasked(AttrSCTP, &k, maskOf(func(m *packet.Mask) { m.DstPort = 0xffff })), "set(sctp(dst=8080))"},
		{Set(AttrICMP, &k), "set(icmp(type=1,code=2))"},
		{Set(AttrICMPv6, &k), "set(icmpv6(type=1,code=2))"},
		{Set(AttrIPv6, &k6), "set(ipv6(src=::1,dst=::2,label=0,proto=10,tclass=0x70,hlimit=128,frag=no))"},
		{SetMasked(AttrIPv6, &k6, maskOf(func(m *packet.Mask) {
			m.SrcIPv6, m.DstIPv6 = packet.FullMask().SrcIPv6, packet.FullMask().DstIPv6
		})), "set(ipv6(src=::1,dst=::2))"},
		{SetMasked(AttrIPv6, &k6, maskOf(func(m *packet.Mask) { m.FlowLabel, m.IPProto, m.IPTOS = 0xfff, 0xff, 0x70 })),
			"set(ipv6(label=0/0xfff,proto=10,tclass=0x70/0x70))"},
		{SetPktMark(0x1234, 0xffffffff), "set(skb_mark(0x1234))"},
		{SetPktMark(0, 0xff), "set(skb_mark(0/0xff))"},
		{SetSkbPriority(3, 0xffffffff), "set(skb_priority(0x3))"},
		{PushVLAN(12), "push_vlan(vid=12,pcp=0)"},
		{PushVLANTag(packet.EtherTypeQinQ, 100), "push_vlan(tpid=0x88a8,vid=100,pcp=0)"},
		{PushVLANTag(packet.EtherTypeVLAN, 100), "push_vlan(vid=100,pcp=0)"},
		{PopVLAN(), "pop_vlan"},
		{Trunc(100), "trunc(100)"},
		{Clone(Actions{Output(1)}), "clone(1)"},
		{Clone(Actions{Clone(Actions{PushVLAN(12), Output(2)}), Output(1)}), "clone(clone(push_vlan(vid=12,pcp=0),2),1)"},
		{CheckPktLen(200, Actions{Output(4)}, Actions{Output(5)}), "check_pkt_len(size=200,gt(4),le(5))"},
		{CheckPktLen(200, Actions{Set(AttrEthernet, &k)}, Actions{Set(AttrEthernet, &eth2)}),
			"check_pkt_len(size=200,gt(set(eth(src=00:01:02:03:04:05,dst=10:11:12:13:14:15))),le(set(eth(src=00:01:02:03:04:06,dst=10:11:12:13:14:16))))"},
		{Recirc(1), "recirc(0x1)"},
		{Recirc(0), "recirc(0)"},
		{Hash(HashL4, 0), "hash(l4(0))"},
		{Hash(HashSymL4, 7), "hash(sym_l4(7))"},
		{Meter(0), "meter(0)"},
		{Userspace(UserspaceCookie{Type: CookieSlowPath}), "userspace(pid=0,slow_path(0))"},
		{Userspace(UserspaceCookie{Type: CookieSlowPath, SlowPathReasons: SlowCFM}), "userspace(pid=0,slow_path(cfm))"},
		{Userspace(UserspaceCookie{Userdata: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}),
			"userspace(pid=0,userdata(0102030405060708090a0b0c0d0e0f))"},
		{Userspace(UserspaceCookie{Type: CookieController, Reason: 1, Continuation: true, RecircID: 4444, RuleCookie: 0x5555, MaxLen: 65535}),
			"userspace(pid=0,controller(reason=1,dont_send=0,continuation=1,recirc_id=4444,rule_cookie=0x5555,controller_id=0,max_len=65535))"},
		{Userspace(UserspaceCookie{Type: CookieController, Reason: 1, DontSend: true, RecircID: 2, MaxLen: 65535}),
			"userspace(pid=0,controller(reason=1,dont_send=1,continuation=0,recirc_id=2,rule_cookie=0,controller_id=0,max_len=65535))"},
	}
	for _, c := range cases {
		if got := c.a.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
	// Datapath actions Debian's ovs-vswitchd 3.1 made from OpenFlow (a
	// dp_hash select group; check_pkt_larger with a controller action;
	// a reversible clone), as its dpctl/dump-flows printed them.
	var ttl5, ttl64 packet.Key
	ttl5.IPTTL, ttl64.IPTTL = 5, 64
	ttlMask := packet.Mask{IPTTL: 0xff}
	for _, c := range []struct {
		acts Actions
		want string
	}{
		{Actions{Hash(HashL4, 0), Recirc(1)}, "hash(l4(0)),recirc(0x1)"},
		{Actions{CheckPktLen(100, Actions{Output(3)}, Actions{Userspace(UserspaceCookie{Type: CookieController, Reason: 1, RecircID: 2, MaxLen: 128}), Output(1)})},
			"check_pkt_len(size=100,gt(3),le(userspace(pid=0,controller(reason=1,dont_send=0,continuation=0,recirc_id=2,rule_cookie=0,controller_id=0,max_len=128)),1))"},
		{Actions{SetMasked(AttrIPv4, &ttl5, &ttlMask), Output(1), SetMasked(AttrIPv4, &ttl64, &ttlMask), Output(2)}, "set(ipv4(ttl=5)),1,set(ipv4(ttl=64)),2"},
	} {
		if got := c.acts.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
	// ct actions as Open vSwitch's tests print them (tests/odp.at,
	// tests/ofproto-dpif.at, tests/system-traffic.at).
	addr := netip.MustParseAddr
	for _, c := range []struct {
		a    Action
		want string
	}{
		{CT(conntrack.Request{}), "ct"},
		{CT(conntrack.Request{Commit: true}), "ct(commit)"},
		{CT(conntrack.Request{Zone: 10}), "ct(zone=10)"},
		{CT(conntrack.Request{Commit: true, SetMark: true, Mark: 0xa0a0a0a0, MarkMask: 0xfefefefe}), "ct(commit,mark=0xa0a0a0a0/0xfefefefe)"},
		{CT(conntrack.Request{Commit: true, SetLabel: true,
			Label:     [16]byte{0x12, 0x34, 0x56, 0x78, 0x90, 0xab, 0xcd, 0xef, 0x12, 0x34, 0x56, 0x78, 0x90, 0xab, 0xcd, 0xef},
			LabelMask: [16]byte{0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xf0, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff}}),
			"ct(commit,label=0x1234567890abcdef1234567890abcdef/0xf1f2f3f4f5f6f7f8f9f0fafbfcfdfeff)"},
		{CT(conntrack.Request{Commit: true, SetLabel: true, Label: [16]byte{15: 1}, LabelMask: allOnes16}), "ct(commit,label=0x1)"},
		{CT(conntrack.Request{Commit: true, NAT: &conntrack.NAT{Kind: conntrack.NATSrc}}), "ct(commit,nat(src))"},
		{CT(conntrack.Request{NAT: &conntrack.NAT{}}), "ct(nat)"},
		{CT(conntrack.Request{Commit: true, NAT: &conntrack.NAT{Kind: conntrack.NATSrc, AddrMin: addr("10.0.0.240"), PortMin: 32768, PortMax: 65535, Random: true}}),
			"ct(commit,nat(src=10.0.0.240:32768-65535,random))"},
		{CT(conntrack.Request{Commit: true, NAT: &conntrack.NAT{Kind: conntrack.NATDst, AddrMin: addr("10.0.0.128"), AddrMax: addr("10.0.0.254"), Hash: true}}),
			"ct(commit,nat(dst=10.0.0.128-10.0.0.254,hash))"},
		{CT(conntrack.Request{Commit: true, NAT: &conntrack.NAT{Kind: conntrack.NATSrc, AddrMin: addr("10.0.0.240"), AddrMax: addr("10.0.0.254"), PortMin: 32768, PortMax: 65535, Persistent: true}}),
			"ct(commit,nat(src=10.0.0.240-10.0.0.254:32768-65535,persistent))"},
		{CT(conntrack.Request{Commit: true, NAT: &conntrack.NAT{Kind: conntrack.NATSrc, AddrMin: addr("fe80::20c:29ff:fe88:1"), AddrMax: addr("fe80::20c:29ff:fe88:a18b"), PortMin: 255, PortMax: 4096, Random: true}}),
			"ct(commit,nat(src=[fe80::20c:29ff:fe88:1]-[fe80::20c:29ff:fe88:a18b]:255-4096,random))"},
		{CT(conntrack.Request{Commit: true, Helper: conntrack.HelperFTP, NAT: &conntrack.NAT{Kind: conntrack.NATSrc, AddrMin: addr("10.1.1.240"), AddrMax: addr("10.1.1.255")}}),
			"ct(commit,helper=ftp,nat(src=10.1.1.240-10.1.1.255))"},
		{CT(conntrack.Request{Commit: true, NAT: &conntrack.NAT{Kind: conntrack.NATDst, AddrMin: addr("10.10.10.7"), PortMin: 80}}), "ct(commit,nat(dst=10.10.10.7:80))"},
		{CT(conntrack.Request{Force: true, Zone: 1}), "ct(force_commit,zone=1)"},
		{CT(conntrack.Request{Commit: true, TimeoutPolicy: 1, NAT: &conntrack.NAT{Kind: conntrack.NATSrc}}), "ct(commit,timeout=1,nat(src))"},
		{CTClear(), "ct_clear"},
	} {
		if got := c.a.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
	if got := (Actions{Output(1), Output(2), Output(3)}).String(); got != "1,2,3" {
		t.Errorf("list: %s", got)
	}
	if got := (Actions{}).String(); got != "drop" {
		t.Errorf("empty: %s", got)
	}
}

// TestSetMaskedKeepsOnlyTheAttributesFields: a caller may pass a whole
// key and mask; only the attribute's fields are kept, masked.
func TestSetMaskedKeepsOnlyTheAttributesFields(t *testing.T) {
	k := packet.Key{SrcPort: 0x1234, SrcIPv4: ip4("198.18.0.1"), PktMark: 5}
	m := packet.FullMask()
	m.SrcPort = 0xff00
	a := SetMasked(AttrTCP, &k, &m)
	want := packet.Key{SrcPort: 0x1200}
	wantMask := packet.Mask{SrcPort: 0xff00, DstPort: 0xffff}
	if a.Set.Value != want || a.Set.Mask != wantMask {
		t.Fatalf("value %+v mask %+v", a.Set.Value, a.Set.Mask)
	}
}

// TestFlowKeyFormatMatchesOVS: megaflow keys as Open vSwitch's
// dpctl/dump-flows prints them for the netdev datapath (strings of
// tests/dpif-netdev.at and ofproto-dpif.at).
func TestFlowKeyFormatMatchesOVS(t *testing.T) {
	full := packet.FullMask()
	base := func() (packet.Key, packet.Mask) {
		var k packet.Key
		var m packet.Mask
		k.InPort, m.InPort = 1, ^uint32(0)
		m.RecircID = ^uint32(0)
		return k, m
	}
	cases := []struct {
		name string
		f    func(k *packet.Key, m *packet.Mask)
		want string
	}{
		{"eth and frag", func(k *packet.Key, m *packet.Mask) {
			k.SrcMAC, k.DstMAC = [6]byte{0x50, 0x54, 0, 0, 0, 9}, [6]byte{0x50, 0x54, 0, 0, 0, 0x0a}
			m.SrcMAC, m.DstMAC = full.SrcMAC, full.DstMAC
			k.EtherType, m.EtherType = packet.EtherTypeIPv4, 0xffff
			m.IPFrag = 0xff
		}, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(frag=no)"},
		{"ipv4 tcp", func(k *packet.Key, m *packet.Mask) {
			k.EtherType, m.EtherType = packet.EtherTypeIPv4, 0xffff
			k.SrcIPv4, m.SrcIPv4 = ip4("10.0.0.2"), full.SrcIPv4
			k.IPProto, m.IPProto = packet.ProtoTCP, 0xff
			k.IPTOS, m.IPTOS = 0, 0xfc
			m.IPFrag = 0xff
			k.DstPort, m.DstPort = 80, 0xffff
			k.TCPFlags, m.TCPFlags = packet.TCPFlagSYN, packet.TCPFlagSYN|packet.TCPFlagACK
		}, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(src=10.0.0.2,proto=6,tos=0/0xfc,frag=no),tcp(dst=80),tcp_flags(+syn-ack)"},
		// ovs-vswitchd 3.1's flow after a dp_hash select group.
		{"dp_hash", func(k *packet.Key, m *packet.Mask) {
			k.RecircID, k.DPHash, m.DPHash = 1, 0xef8c1cfb, 0xf
			k.EtherType, m.EtherType, m.IPFrag = packet.EtherTypeIPv4, 0xffff, 0xff
		}, "recirc_id(0x1),dp_hash(0xef8c1cfb/0xf),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(frag=no)"},
		{"ct and mark", func(k *packet.Key, m *packet.Mask) {
			k.RecircID = 2
			k.CTState, m.CTState = 0x21, 0x23
			k.PktMark, m.PktMark = 5, 0xff
			k.EtherType, m.EtherType = packet.EtherTypeARP, 0xffff
			k.DstIPv4, m.DstIPv4 = ip4("198.18.0.1"), full.DstIPv4
		}, "skb_mark(0x5/0xff),ct_state(+new-est+trk),recirc_id(0x2),in_port(1),packet_type(ns=0,id=0),eth_type(0x0806),arp(tip=198.18.0.1)"},
		// odp.at: ct_mark(0x12345678),ct_label(0x1234567890abcdef1234567890abcdef)
		{"ct mark label", func(k *packet.Key, m *packet.Mask) {
			k.CTMark, m.CTMark = 0x12345678, ^uint32(0)
			k.CTLabel = [16]byte{0x12, 0x34, 0x56, 0x78, 0x90, 0xab, 0xcd, 0xef, 0x12, 0x34, 0x56, 0x78, 0x90, 0xab, 0xcd, 0xef}
			m.CTLabel = full.CTLabel
			k.CTState, m.CTState = 0x22, ^uint32(0)
		}, "ct_state(-new+est-rel-rpl-inv+trk-snat-dnat),ct_mark(0x12345678),ct_label(0x1234567890abcdef1234567890abcdef),recirc_id(0),in_port(1),packet_type(ns=0,id=0)"},
		// odp.at's ct fields (the masked form its "with masks" test
		// substitutes in).
		{"ct with tuple4", func(k *packet.Key, m *packet.Mask) {
			k.CTState, m.CTState = 0x20, 0x20
			k.CTZone, m.CTZone = 5, 0xff
			k.CTMark, m.CTMark = 0x10305070, 0xf0f0f0f0
			k.CTLabel = [16]byte{0x12, 0x34, 0x56, 0x78, 0x90, 0xab, 0xcd, 0xef, 0x12, 0x34, 0x56, 0x78, 0x90, 0xab, 0xcd, 0xef}
			m.CTLabel = [16]byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00}
			k.CTNwSrc, k.CTNwDst, k.CTNwProto, k.CTTpSrc, k.CTTpDst = ip4("10.10.10.10"), ip4("20.20.20.20"), 17, 1, 2
			m.CTNwSrc, m.CTNwDst, m.CTNwProto, m.CTTpSrc, m.CTTpDst = full.CTNwSrc, full.CTNwDst, 0xff, 0xffff, 0xffff
			k.EtherType, m.EtherType = packet.EtherTypeIPv4, 0xffff
		}, "ct_state(+trk),ct_zone(0x5/0xff),ct_mark(0x10305070/0xf0f0f0f0),ct_label(0x1234567890abcdef1234567890abcdef/0x102030405060708090a0b0c0d0e0f00)," +
			"ct_tuple4(src=10.10.10.10,dst=20.20.20.20,proto=17,tp_src=1,tp_dst=2),recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800)"},
		{"ct tuple6", func(k *packet.Key, m *packet.Mask) {
			k.CTIPv6Src, k.CTIPv6Dst, k.CTNwProto, k.CTTpSrc, k.CTTpDst = ip6("::1"), ip6("::2"), 6, 1, 2
			m.CTIPv6Src, m.CTIPv6Dst, m.CTNwProto, m.CTTpSrc, m.CTTpDst = full.CTIPv6Src, full.CTIPv6Dst, 0xff, 0xffff, 0xffff
			k.EtherType, m.EtherType = packet.EtherTypeIPv6, 0xffff
		}, "ct_tuple6(src=::1,dst=::2,proto=6,src_port=1,dst_port=2),recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x86dd)"},
		{"ct tuple not in the key without ct_nw_proto", func(k *packet.Key, m *packet.Mask) {
			k.CTNwSrc, m.CTNwSrc = ip4("10.10.10.10"), full.CTNwSrc
			k.EtherType, m.EtherType = packet.EtherTypeIPv4, 0xffff
		}, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800)"},
		{"ct label partial, short", func(k *packet.Key, m *packet.Mask) {
			k.CTLabel[15], m.CTLabel[15] = 1, 0xff
		}, "ct_label(0x1/0xff),recirc_id(0),in_port(1),packet_type(ns=0,id=0)"},
		{"nd", func(k *packet.Key, m *packet.Mask) {
			k.EtherType, m.EtherType = packet.EtherTypeIPv6, 0xffff
			k.IPProto, m.IPProto = packet.ProtoICMPv6, 0xff
			m.IPFrag = 0xff
			k.ICMPType, m.ICMPType = 135, 0xff
			m.ICMPCode = 0xff
			k.NDTarget, m.NDTarget = ip6("fe80::1"), full.NDTarget
			k.ARPSHA, m.ARPSHA = [6]byte{0, 0, 0, 0, 0, 1}, full.ARPSHA
		}, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x86dd),ipv6(proto=58,frag=no),icmpv6(type=135,code=0),nd(target=fe80::1,sll=00:00:00:00:00:01)"},
		// The netdev datapath does not export nd_ext (see FormatKey).
		{"nd ext", func(k *packet.Key, m *packet.Mask) {
			k.EtherType, m.EtherType = packet.EtherTypeIPv6, 0xffff
			k.IPProto, m.IPProto = packet.ProtoICMPv6, 0xff
			k.ICMPType, m.ICMPType = 136, 0xff
			k.NDReserved, m.NDReserved = 0x60000000, ^uint32(0)
			k.NDOptionsType, m.NDOptionsType = 2, 0xff
		}, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x86dd),ipv6(proto=58),icmpv6(type=136)"},
	}
	for _, c := range cases {
		k, m := base()
		c.f(&k, &m)
		var b strings.Builder
		FormatKey(&b, &k, &m)
		if got := b.String(); got != c.want {
			t.Errorf("%s:\ngot  %s\nwant %s", c.name, got, c.want)
		}
	}
	// The netdev datapath prints the values of the packet that made the
	// flow with the mask (ofproto-dpif.at: "vlan(vid=11,pcp=7/0x0)").
	for _, c := range []struct {
		tci  uint16
		want string
	}{
		{11 | 7<<13, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8100),vlan(vid=11,pcp=7/0x0),encap(eth_type(0x0800),ipv4(frag=no)), packets:0, bytes:0, used:never, actions:drop"},
		{10, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8100),vlan(vid=10),encap(eth_type(0x0800),ipv4(frag=no)), packets:0, bytes:0, used:never, actions:drop"},
	} {
		k, m := base()
		k.VLANs[0], m.VLANs[0] = packet.VLANTag{TPID: packet.EtherTypeVLAN, TCI: c.tci}, packet.VLANTag{TPID: 0xffff, TCI: 0x0fff}
		k.EtherType, m.EtherType = packet.EtherTypeIPv4, 0xffff
		k.SrcIPv4, m.IPFrag = ip4("198.18.0.1"), 0xff
		var mk packet.Key
		k.ApplyMask(&m, &mk)
		if got := (FlowEntry{Key: mk, Mask: m, Unmasked: k}).Format(time.Now()); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}

	// Statistics and TCP flags as dump-flows prints them
	// (dpif_flow_stats_format, packet_format_tcp_flags).
	now := time.Now()
	k, m := base()
	e := FlowEntry{Key: k, Mask: m, Actions: Actions{Output(2)}, Stats: FlowStats{Packets: 1, Bytes: 60, Used: now.Add(-500 * time.Millisecond), TCPFlags: packet.TCPFlagSYN | packet.TCPFlagACK}}
	if got, want := e.Format(now), "recirc_id(0),in_port(1),packet_type(ns=0,id=0), packets:1, bytes:60, used:0.500s, flags:S., actions:2"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestActionsEqual compares by value: a list built again equals the
// first; any difference in a value, cookie or nested list does not.
func TestActionsEqual(t *testing.T) {
	var v packet.Key
	v.SrcIPv4 = ip4("198.18.0.1")
	m := packet.Mask{SrcIPv4: [4]byte{255, 255, 255, 255}}
	build := func(src [4]byte, userdata byte, nestedPort uint32) Actions {
		v := v
		v.SrcIPv4 = src
		return Actions{SetMasked(AttrIPv4, &v, &m), Userspace(UserspaceCookie{Type: CookieController, Userdata: []byte{userdata}}),
			Clone(Actions{Output(nestedPort)}), CheckPktLen(100, Actions{Output(1)}, nil), Output(2)}
	}
	a := build(ip4("198.18.0.1"), 1, 3)
	if !a.Equal(build(ip4("198.18.0.1"), 1, 3)) {
		t.Fatal("rebuilt list differs")
	}
	for _, b := range []Actions{build(ip4("198.18.0.2"), 1, 3), build(ip4("198.18.0.1"), 2, 3), build(ip4("198.18.0.1"), 1, 4), a[:4], nil} {
		if a.Equal(b) {
			t.Fatalf("%s equals %s", a, b)
		}
	}
	// ct requests compare by value, NAT clause included.
	ctA := func(port uint16) Actions {
		return Actions{CT(conntrack.Request{Commit: true, Zone: 2, NAT: &conntrack.NAT{Kind: conntrack.NATSrc, PortMin: port}}), Recirc(1)}
	}
	if !ctA(5).Equal(ctA(5)) || ctA(5).Equal(ctA(6)) || ctA(5).Equal(Actions{CT(conntrack.Request{Commit: true, Zone: 2}), Recirc(1)}) ||
		(Actions{CTClear()}).Equal(Actions{CT(conntrack.Request{})}) || !(Actions{CTClear()}).Equal(Actions{CTClear()}) {
		t.Fatal("ct actions compare wrongly")
	}
	if (Actions{PushVLANTag(packet.EtherTypeQinQ, 5)}).Equal(Actions{PushVLAN(5)}) {
		t.Fatal("push_vlan TPIDs compare equal")
	}
	if !(Actions{}).Equal(nil) {
		t.Fatal("empty lists differ")
	}
	// UserspaceCookie.equal lists the fields one by one: a new field
	// must be added there.
	if n := reflect.TypeOf(UserspaceCookie{}).NumField(); n != 11 {
		t.Fatalf("UserspaceCookie has %d fields: update its equal", n)
	}
	if n := testing.AllocsPerRun(100, func() { a.Equal(a) }); n != 0 {
		t.Fatalf("Equal allocates %v", n)
	}
}
