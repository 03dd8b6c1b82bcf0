package mf

import (
	"bytes"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"gvs/packet"
)

// ovsOfctl runs the real ovs-ofctl with stdin and returns its output
// lines, or skips the test if it is not installed.
func ovsOfctl(t *testing.T, stdin string, args ...string) []string {
	t.Helper()
	cmd := ovsCmd(t, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("ovs-ofctl %v: %v\n%s", args, err, errb.String())
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// ovsCmd returns an ovs-ofctl command, or skips the test if it is not
// installed.
func ovsCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	path, err := exec.LookPath("ovs-ofctl")
	if err != nil {
		t.Skip("ovs-ofctl not installed")
	}
	return exec.Command(path, args...)
}

// ourParseNXM does what ovs-ofctl --strict parse-nx-match / parse-oxm
// does for one line: text to bytes, strict decode, re-encode for
// version (0 = NXM), text.
func ourParseNXM(t *testing.T, line string, version uint8) string {
	return ourParseNXMStrict(t, line, version, true)
}

// ourParseNXMStrict is ourParseNXM with strict (flow_mod) or loose
// decoding, as ovs-ofctl with or without --strict.
func ourParseNXMStrict(t *testing.T, line string, version uint8, strict bool) string {
	raw, err := ParseNXMatchText(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	m, cookie, cookieMask, err := DecodeNXMatch(raw, strict, version == 0, false)
	if err != nil {
		return "nx_pull_match() returned error " + err.Error()
	}
	b, _ := AppendNXMatch(nil, &m, version, cookie, cookieMask)
	return FormatNXMatch(b)
}

var nxmCases = []string{
	"<any>",
	"NXM_OF_IN_PORT(0001) NXM_OF_ETH_TYPE(0800) NXM_OF_IP_SRC_W(c0a80000/ffff0000)",
	"NXM_NX_REG0(00000005) NXM_OF_IN_PORT(0001) NXM_OF_ETH_TYPE(0806) NXM_OF_ARP_OP(0001)",
	"NXM_OF_ETH_TYPE(0806) NXM_OF_ARP_OP(0101)",
	"NXM_OF_IP_SRC(01020304)",
	"NXM_NX_REG0_W(00000005/00000004)",
	"NXM_OF_ETH_TYPE(0800) NXM_OF_ETH_TYPE(0800)",
	"NXM_NX_DP_HASH(00000001)",
	"NXOXM_ET_DP_HASH(00000001)",
	"NXM_OF_VLAN_TCI(0000)",
	"NXM_OF_VLAN_TCI_W(1000/1000)",
	"NXM_OF_VLAN_TCI_W(0005/0fff)",
	"NXM_OF_VLAN_TCI(3005)",
	"NXM_OF_ETH_TYPE(86dd) NXM_OF_IP_PROTO(3a) NXM_NX_ICMPV6_TYPE(87) NXM_NX_ICMPV6_CODE(00) ERICOXM_OF_ICMPV6_ND_RESERVED(00000001) ERICOXM_OF_ICMPV6_ND_OPTIONS_TYPE(01) NXM_NX_ND_TARGET(20010db8000000000000000000000001) NXM_NX_ND_SLL(001122334455)",
	"NXM_OF_ETH_TYPE(86dd) NXM_OF_IP_PROTO(3a) NXM_NX_ICMPV6_TYPE(88) NXM_NX_ICMPV6_CODE(00) NXM_NX_ND_TLL_W(001122334455/ffffffffff00)",
	"NXM_OF_ETH_TYPE(86dd) NXM_OF_IP_PROTO(3a) NXM_NX_ICMPV6_TYPE(88) NXM_NX_ND_SLL(001122334455)",
	"NXM_NX_IP_FRAG_W(01/03)",
	"NXM_OF_ETH_TYPE(0800) NXM_NX_IP_FRAG_W(03/03)",
	"NXM_OF_ETH_TYPE(0800) NXM_NX_IP_FRAG_W(01/01)",
	"NXM_OF_ETH_TYPE(0800) NXM_NX_IP_FRAG(04)",
	"NXM_OF_ETH_TYPE(0800) NXM_OF_IP_TOS(03)",
	"NXM_OF_ETH_TYPE(0800) NXM_OF_IP_TOS(fc) NXM_NX_IP_ECN(03) NXM_NX_IP_TTL(40)",
	"NXM_OF_ETH_TYPE(0800) NXM_OF_IP_SRC_W(01020304/ffff0000)",
	"NXM_OF_ETH_TYPE(0800) NXM_OF_IP_PROTO(06) NXM_NX_TCP_FLAGS(0fff)",
	"NXM_OF_ETH_TYPE(0800) NXM_OF_IP_PROTO(06) NXM_NX_TCP_FLAGS_W(0002/0fff)",
	"NXM_OF_ETH_TYPE(0800) NXM_OF_IP_PROTO(06) NXM_NX_TCP_FLAGS(1000)",
	"NXM_OF_ETH_TYPE(0800) NXM_OF_IP_PROTO(11) NXM_OF_TCP_SRC(0050)",
	"NXM_OF_ETH_TYPE(0800) NXM_OF_IP_PROTO(11) NXM_OF_UDP_DST_W(0035/fff0)",
	"NXM_OF_ETH_TYPE(0800) NXM_OF_IP_PROTO(01) NXM_OF_ICMP_TYPE(08) NXM_OF_ICMP_CODE(00)",
	"NXM_OF_ETH_TYPE(86dd) NXM_NX_IPV6_LABEL(00012345)",
	"NXM_OF_ETH_TYPE(86dd) NXM_NX_IPV6_LABEL_W(00012345/000fffff)",
	"NXM_OF_ETH_TYPE(86dd) NXM_NX_IPV6_LABEL_W(00002345/0000ffff)",
	"NXM_OF_ETH_TYPE(86dd) NXM_NX_IPV6_LABEL(00112345)",
	"NXM_NX_CT_STATE(00000020) NXM_NX_CT_NW_PROTO(06)",
	"NXM_NX_CT_STATE(00000021) NXM_NX_CT_NW_PROTO(06) NXM_NX_CT_TP_SRC(0050)",
	"NXM_NX_CT_STATE_W(00000020/00000020) NXM_NX_CT_NW_PROTO(06)",
	"NXM_NX_CT_NW_PROTO(06)",
	"NXM_NX_CT_STATE(00000100)",
	"NXM_NX_CT_ZONE(0005) NXM_NX_CT_MARK_W(00000001/00000003) NXM_NX_CT_LABEL(0000000000000000000000000000abcd)",
	"NXM_NX_TUN_ID(0000000000000005) NXM_NX_TUN_IPV4_SRC(01020304) NXM_NX_TUN_FLAGS(0001) NXM_NX_PKT_MARK(00000007)",
	"NXM_NX_TUN_FLAGS(0002)",
	"NXM_NX_TUN_GBP_ID(0001) NXM_NX_TUN_GBP_FLAGS(02) NXM_NX_TUN_IPV6_DST(20010db8000000000000000000000001)",
	"NXM_NX_XXREG1_W(000000000000000000000000000000ff/000000000000000000000000000000ff) NXM_NX_REG7(00000001)",
	"NXM_NX_CONJ_ID(00000005) NXM_NX_RECIRC_ID(00000001)",
	"OXM_OF_METADATA(0000000000000001) OXM_OF_PKT_REG3(0000000100000002)",
	"OXM_OF_ACTSET_OUTPUT(00000001)",
	"OXM_OF_IN_PORT(fffffffe)",
	"OXM_OF_IN_PORT(ffffff00)",
	"OXM_OF_IN_PORT(fffeff00)",
	"NXM_OF_ETH_DST_W(010000000000/010000000000) NXM_OF_ETH_SRC(001122334455)",
	"NXM_OF_ETH_TYPE(0806) NXM_NX_ARP_SHA(001122334455) NXM_OF_ARP_SPA_W(0a000000/ff000000) NXM_NX_ARP_THA_W(000000000000/ffffffffffff)",
	"NXM_NX_COOKIE(0000000000000001)",
	"NXM_NX_COOKIE_W(0000000000000001/00000000000000ff) NXM_NX_REG1(00000002)",
	"NXM_OF_ETH_TYPE(0800) OXM_OF_IP_DSCP(3f) OXM_OF_IP_ECN(01) NXM_OF_IP_TOS(fc)",
	"OXM_OF_VLAN_VID(1005) OXM_OF_VLAN_PCP(03)",
	"OXM_OF_VLAN_PCP(03)",
	"OXM_OF_VLAN_VID_W(1000/1000) OXM_OF_VLAN_PCP(03)",
	"OXM_OF_VLAN_VID(0000)",
	"OXM_OF_VLAN_VID(2005)",
	"OXM_OF_ETH_TYPE(0800) OXM_OF_IP_PROTO(84) OXM_OF_SCTP_SRC(0001) OXM_OF_SCTP_DST(0002)",
	"OXM_OF_ETH_TYPE(0800) OXM_OF_IP_PROTO(06) ONFOXM_ET_TCP_FLAGS(0012)",
	"NXM_OF_ETH_TYPE(0800) NXM_NX_TUN_ID_W(0000000000000005/00000000000000ff) NXM_NX_IP_TTL(01)",
}

// Our decoder and encoder agree with ovs-ofctl --strict parse-nx-match
// and parse-oxm for every version, line by line (errors included).
func TestNXMatchAgainstOVS(t *testing.T) {
	stdin := strings.Join(nxmCases, "\n") + "\n"
	check := func(name string, version uint8, args ...string) {
		got := ovsOfctl(t, stdin, args...)
		if len(got) != len(nxmCases) {
			t.Fatalf("%s: %d lines of output for %d cases: %q", name, len(got), len(nxmCases), got)
		}
		for i, c := range nxmCases {
			if ours := ourParseNXM(t, c, version); ours != got[i] {
				t.Errorf("%s %s:\n ours %s\n ovs  %s", name, c, ours, got[i])
			}
		}
	}
	check("nxm", 0, "--strict", "parse-nx-match")
	for v, name := range map[uint8]string{3: "OpenFlow12", 4: "OpenFlow13", 5: "OpenFlow14", 6: "OpenFlow15"} {
		check(name, v, "--strict", "parse-oxm", name)
	}
}

// randomMatch returns a match on a random selection of fields whose
// prerequisites it satisfies, with random values and masks.
func randomMatch(r *rand.Rand) Match {
	var m Match
	set := func(id FieldID) {
		fd := FieldByID(id)
		v := randValue(r, fd)
		switch id {
		case InPort:
			v = ValueFromUint(uint64(r.IntN(0xff00)), 2)
		case ARPOp:
			v = ValueFromUint(uint64(r.IntN(256)), 2) // Open vSwitch keeps 8 bits
		case CTState:
			v = ValueFromUint(uint64(r.IntN(256)), 4)
		}
		if !fd.IsValueValid(v) {
			return
		}
		if id == VLANTCI {
			v[0] |= 0x10
		}
		if fd.Maskable && r.IntN(2) == 0 {
			mask := randValue(r, fd)
			if id == VLANTCI {
				// A consistent VLAN match: PCP/VID bits only with "present".
				mask[0] |= 0x10
				v[0] |= 0x10
			}
			if !mask.IsZero() {
				fd.SetMatchMasked(&m, v.And(mask), mask)
				return
			}
		}
		fd.SetMatch(&m, v)
	}
	maybe := func(ids ...FieldID) {
		for _, id := range ids {
			if r.IntN(3) == 0 {
				set(id)
			}
		}
	}
	maybe(InPort, EthSrc, EthDst, VLANTCI, TunID, TunSrc, TunDst, PktMark, Metadata, Reg0, Reg3, Reg15, XXReg2, RecircID, ConjID, CTMark, CTZone, CTLabel)
	if r.IntN(4) == 0 {
		set(CTState)
	}
	switch r.IntN(5) {
	case 0:
		return m
	case 1:
		FieldByID(EthType).SetMatch(&m, ValueFromUint(uint64(packet.EtherTypeARP), 2))
		maybe(ARPOp, ARPSPA, ARPTPA, ARPSHA, ARPTHA)
		return m
	case 2:
		FieldByID(EthType).SetMatch(&m, ValueFromUint(uint64(packet.EtherTypeIPv4), 2))
		maybe(IPv4Src, IPv4Dst)
	default:
		FieldByID(EthType).SetMatch(&m, ValueFromUint(uint64(packet.EtherTypeIPv6), 2))
		maybe(IPv6Src, IPv6Dst, IPv6Label)
	}
	maybe(IPFrag, IPDSCP, IPECN, IPTTL)
	protos := []uint8{packet.ProtoTCP, packet.ProtoUDP, packet.ProtoSCTP, packet.ProtoICMP, packet.ProtoICMPv6, 47}
	proto := protos[r.IntN(len(protos))]
	if r.IntN(4) == 0 {
		return m
	}
	if m.Flow.IPFrag&packet.FragLater != 0 {
		FieldByID(IPFrag).SetWild(&m)
	}
	FieldByID(IPProto).SetMatch(&m, ValueFromUint(uint64(proto), 1))
	switch proto {
	case packet.ProtoTCP:
		maybe(TCPSrc, TCPDst, TCPFlags)
	case packet.ProtoUDP:
		maybe(UDPSrc, UDPDst)
	case packet.ProtoSCTP:
		maybe(SCTPSrc, SCTPDst)
	case packet.ProtoICMP:
		if m.Flow.EtherType == packet.EtherTypeIPv4 {
			maybe(ICMPv4Type, ICMPv4Code)
		}
	case packet.ProtoICMPv6:
		if m.Flow.EtherType == packet.EtherTypeIPv6 {
			if r.IntN(2) == 0 {
				FieldByID(ICMPv6Type).SetMatch(&m, ValueFromUint(uint64(135+r.IntN(2)), 1))
				FieldByID(ICMPv6Code).SetMatch(&m, Value{})
				maybe(NDTarget, NDReserved, NDOptionsType)
				if m.Flow.ICMPType == 135 {
					maybe(NDSLL)
				} else {
					maybe(NDTLL)
				}
			} else {
				maybe(ICMPv6Type, ICMPv6Code)
			}
		}
	}
	return m
}

// Random matches encoded by us are a fixed point of ovs-ofctl's strict
// decode and re-encode in NXM and every OXM version: same entries, same
// order, same masks. And our own decoder gives back the same match.
func TestRandomNXMatchAgainstOVS(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 13))
	const n = 300
	for _, v := range []struct {
		version uint8
		args    []string
	}{
		{0, []string{"--strict", "parse-nx-match"}},
		{4, []string{"--strict", "parse-oxm", "OpenFlow13"}},
		{6, []string{"--strict", "parse-oxm", "OpenFlow15"}},
	} {
		var lines []string
		for i := 0; i < n; i++ {
			m := randomMatch(r)
			b, _ := AppendNXMatch(nil, &m, v.version, 0, 0)
			m2, _, _, err := DecodeNXMatch(b, true, false, false)
			if err != nil {
				t.Fatalf("version %d: our own encoding %s does not decode: %v", v.version, FormatNXMatch(b), err)
			}
			b2, _ := AppendNXMatch(nil, &m2, v.version, 0, 0)
			if !bytes.Equal(b, b2) {
				t.Fatalf("version %d: round trip changed\n %s\n %s", v.version, FormatNXMatch(b), FormatNXMatch(b2))
			}
			lines = append(lines, FormatNXMatch(b))
		}
		got := ovsOfctl(t, strings.Join(lines, "\n")+"\n", v.args...)
		for i := range lines {
			if got[i] != lines[i] {
				t.Errorf("version %d:\n ours %s\n ovs  %s", v.version, lines[i], got[i])
			}
		}
	}
}
