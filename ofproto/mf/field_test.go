package mf

import (
	"math/rand/v2"
	"testing"

	"gvs/packet"
)

func randValue(r *rand.Rand, fd *Field) Value {
	var v Value
	for i := 0; i < fd.Bytes; i++ {
		v[i] = byte(r.Uint32())
	}
	return v.And(fd.AllOnes())
}

// Every plain field reads back what was written, in both the flow and the
// mask, and touches no other field's storage outside what it shares.
func TestFieldSetGetRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range Fields() {
		fd := &Fields()[i]
		if fd.ID >= TunMetadata0 && fd.ID < TunMetadata0+NumTunMetadata && fd.ID != TunMetadata0 {
			continue
		}
		for n := 0; n < 50; n++ {
			v := randValue(r, fd)
			if fd.ID == InPortOXM || fd.ID == ActsetOutput {
				v = ValueFromUint(v.Uint(4)%0xff00, 4) // a valid port
			}
			if !fd.IsValueValid(v) || fd.ID == PacketType {
				continue
			}
			var f Flow
			fd.Set(&f, v)
			want := v
			if got := fd.Get(&f); got != want {
				t.Fatalf("%s: set %x, got %x", fd.Name, v[:fd.Bytes], got[:fd.Bytes])
			}
			var w Wildcards
			fd.SetMaskTo(&w, fd.AllOnes())
			if got := fd.GetMask(&w); got != fd.AllOnes() {
				t.Fatalf("%s: mask all-ones reads back %x", fd.Name, got[:fd.Bytes])
			}
			if !fd.IsExact(&w) {
				t.Fatalf("%s: not exact after Unwildcard", fd.Name)
			}
		}
	}
}

func TestFieldRegistryLookups(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   FieldID
	}{
		{"in_port", InPort}, {"dl_src", EthSrc}, {"eth_src", EthSrc}, {"nw_src", IPv4Src}, {"ip_src", IPv4Src},
		{"tp_dst", TCPDst}, {"reg15", Reg15}, {"xreg7", XReg7}, {"xxreg3", XXReg3}, {"tun_metadata63", TunMetadata0 + 63},
		{"tunnel_id", TunID}, {"nw_tos", IPDSCP}, {"ip_dscp", IPDSCPShifted}, {"ip_ecn", IPECN}, {"nw_frag", IPFrag},
	} {
		fd := FieldByName(tc.name)
		if fd == nil || fd.ID != tc.id {
			t.Errorf("FieldByName(%q) = %v, want id %d", tc.name, fd, tc.id)
		}
	}
	if fd := FieldByNXM(ClassNXM1, 3); fd == nil || fd.ID != Reg3 {
		t.Errorf("NXM_NX_REG3 lookup: %v", fd)
	}
	if fd := FieldByOXM(ClassPacketRegs, 2, 0); fd == nil || fd.ID != XReg2 {
		t.Errorf("OXM_OF_PKT_REG2 lookup: %v", fd)
	}
	if fd := FieldByOXM(ClassExperimenter, 42, ExperimenterONF); fd == nil || fd.ID != TCPFlags {
		t.Errorf("ONF tcp_flags lookup: %v", fd)
	}
	// Header choice per version, as Open vSwitch's nxm_field_by_mf_id.
	for _, tc := range []struct {
		id      FieldID
		version uint8
		want    string
	}{
		{EthSrc, 0, "NXM_OF_ETH_SRC"}, {EthSrc, 1, "NXM_OF_ETH_SRC"}, {EthSrc, 3, "OXM_OF_ETH_SRC"},
		{TCPFlags, 3, "NXM_NX_TCP_FLAGS"}, {TCPFlags, 4, "ONFOXM_ET_TCP_FLAGS"}, {TCPFlags, 6, "OXM_OF_TCP_FLAGS"},
		{XReg0, 0, "OXM_OF_PKT_REG0"}, {Metadata, 0, "OXM_OF_METADATA"}, {TunID, 4, "OXM_OF_TUNNEL_ID"},
		{TunID, 3, "NXM_NX_TUN_ID"}, {DPHash, 0, "NXM_NX_DP_HASH"}, {DPHash, 6, "NXM_NX_DP_HASH"},
	} {
		if h := FieldByID(tc.id).HeaderFor(tc.version); h == nil || h.Name != tc.want {
			t.Errorf("%s.HeaderFor(%d) = %v, want %s", FieldByID(tc.id).Name, tc.version, h, tc.want)
		}
	}
}

// xregN is regs 2N (high half) and 2N+1; xxregN is regs 4N..4N+3, high first.
func TestRegisterViews(t *testing.T) {
	var f Flow
	FieldByID(XReg1).Set(&f, ValueFromUint(0x1122334455667788, 8))
	if f.Regs[2] != 0x11223344 || f.Regs[3] != 0x55667788 {
		t.Fatalf("xreg1 -> regs %x %x", f.Regs[2], f.Regs[3])
	}
	f.Regs[4], f.Regs[5], f.Regs[6], f.Regs[7] = 1, 2, 3, 4
	v := FieldByID(XXReg1).Get(&f)
	want := Value{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4}
	if v != want {
		t.Fatalf("xxreg1 = %x", v)
	}
}

// vlan_tci's CFI bit is "a tag is present"; in gvs that is VLANs[0].TPID.
func TestVLANFields(t *testing.T) {
	var f Flow
	f.VLANs[0] = packet.VLANTag{TPID: packet.EtherTypeQinQ, TCI: 0x3005 | 0x1000}
	if got := FieldByID(VLANTCI).Get(&f).Uint(2); got != 0x3005 {
		t.Errorf("vlan_tci of 802.1ad pcp 1 vid 5 with DEI = %#x, want 0x3005", got)
	}
	if got := FieldByID(VLANVID).Get(&f).Uint(2); got != 0x1005 {
		t.Errorf("vlan_vid = %#x", got)
	}
	if got := FieldByID(DLVLAN).Get(&f).Uint(2); got != 5 {
		t.Errorf("dl_vlan = %d", got)
	}
	if got := FieldByID(VLANPCP).Get(&f).Uint(1); got != 1 {
		t.Errorf("vlan_pcp = %d", got)
	}

	// Matching "any tag" (vlan_tci=0x1000/0x1000) matches 802.1Q and 802.1ad.
	var m Match
	FieldByID(VLANTCI).SetMatchMasked(&m, ValueFromUint(0x1000, 2), ValueFromUint(0x1000, 2))
	for _, tpid := range []uint16{packet.EtherTypeVLAN, packet.EtherTypeQinQ} {
		var p Flow
		p.VLANs[0] = packet.VLANTag{TPID: tpid, TCI: 7}
		if !m.Matches(&p) {
			t.Errorf("vlan_tci=0x1000/0x1000 does not match TPID %#x", tpid)
		}
	}
	if m.Matches(&Flow{}) {
		t.Error("vlan_tci=0x1000/0x1000 matches an untagged packet")
	}

	// dl_vlan=0xffff is "no tag" (exact vlan_tci=0).
	m = Match{}
	FieldByID(DLVLAN).SetMatch(&m, ValueFromUint(0xffff, 2))
	if got := FieldByID(VLANTCI).GetMask(&m.Wildcards).Uint(2); got != 0xffff {
		t.Errorf("dl_vlan=0xffff mask = %#x", got)
	}
	if !m.Matches(&Flow{}) {
		t.Error("dl_vlan=0xffff does not match untagged")
	}

	// dl_vlan=5 sets VID and present; dl_vlan_pcp=3 adds PCP.
	m = Match{}
	FieldByID(DLVLAN).SetMatch(&m, ValueFromUint(5, 2))
	FieldByID(DLVLANPCP).SetMatch(&m, ValueFromUint(3, 1))
	tciV, tciM := FieldByID(VLANTCI).Get(&m.Flow).Uint(2), FieldByID(VLANTCI).GetMask(&m.Wildcards).Uint(2)
	if tciV != 0x7005 || tciM != 0xffff {
		t.Errorf("dl_vlan=5,dl_vlan_pcp=3: vlan_tci=%#x/%#x, want 0x7005/0xffff", tciV, tciM)
	}
}

func TestSubfieldReadWrite(t *testing.T) {
	var f Flow
	sf := Subfield{Field: FieldByID(Reg0), Ofs: 4, NBits: 8}
	f.Regs[0] = 0xffffffff
	sf.WriteUint(&f, 0x5a)
	if f.Regs[0] != 0xfffff5af {
		t.Fatalf("reg0 = %#x", f.Regs[0])
	}
	if got := sf.ReadUint(&f); got != 0x5a {
		t.Fatalf("read %#x", got)
	}
	eth := Subfield{Field: FieldByID(EthDst), Ofs: 40, NBits: 8}
	eth.WriteUint(&f, 0xab)
	if f.DstMAC[0] != 0xab {
		t.Fatalf("eth_dst[40..47] wrote %x", f.DstMAC)
	}
}

func TestSubfieldText(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"reg0[0..15]", "NXM_NX_REG0[0..15]"},
		{"NXM_NX_REG0[]", "NXM_NX_REG0[]"},
		{"reg3", "NXM_NX_REG3[]"},
		{"NXM_OF_ETH_DST[5]", "NXM_OF_ETH_DST[5]"},
		{"xreg1[0..31]", "OXM_OF_PKT_REG1[0..31]"},
		{"metadata[32..63]", "OXM_OF_METADATA[32..63]"},
		{"NXM_NX_REG1_W[0..3]", "NXM_NX_REG1[0..3]"},
	} {
		sf, err := ParseSubfield(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := sf.String(); got != tc.out {
			t.Errorf("%s formats as %s, want %s", tc.in, got, tc.out)
		}
	}
	for _, tc := range []struct{ in, err string }{
		{"foo[1]", "foo[1]: unknown field `foo'"},
		{"reg0[5..1]", "reg0[5..1]: starting bit 5 is after ending bit 1"},
		{"reg0[32]", "reg0[32]: starting bit 32 is not valid because field is only 32 bits wide"},
		{"reg0[0..32]", "reg0[0..32]: ending bit 32 is not valid because field is only 32 bits wide"},
		{"reg0[x]", "reg0[x]: syntax error expecting [] or [<bit>] or [<start>..<end>]"},
	} {
		if _, err := ParseSubfield(tc.in); err == nil || err.Error() != tc.err {
			t.Errorf("%s: error %v, want %s", tc.in, err, tc.err)
		}
	}
}

func TestPrereqs(t *testing.T) {
	var f Flow
	f.EtherType = packet.EtherTypeIPv6
	f.IPProto = packet.ProtoICMPv6
	f.ICMPType = 135
	var wc Wildcards
	if !FieldByID(NDSLL).PrereqsOKWildcards(&f, &wc) {
		t.Fatal("nd_sll prereqs on a neighbour solicitation")
	}
	if wc.Masks.EtherType != 0xffff || wc.Masks.IPProto != 0xff || wc.Masks.ICMPType != 0xff || wc.Masks.ICMPCode != 0xff {
		t.Fatalf("prereq wildcards not recorded: %+v", wc.Masks.Key)
	}
	if FieldByID(NDTLL).PrereqsOK(&f) {
		t.Fatal("nd_tll prereqs hold on a solicitation")
	}
	f.IPFrag = packet.FragAny | packet.FragLater
	f.IPProto = packet.ProtoTCP
	if FieldByID(TCPSrc).PrereqsOK(&f) {
		t.Fatal("tcp_src on a later fragment")
	}
}

// Get and Set are on translation's path: they must not allocate.
func TestFieldAccessNoAlloc(t *testing.T) {
	var f Flow
	var w Wildcards
	fields := []*Field{FieldByID(Reg3), FieldByID(XXReg1), FieldByID(EthDst), FieldByID(VLANTCI), FieldByID(IPDSCPShifted), FieldByID(InPortOXM)}
	sf := Subfield{Field: FieldByID(Reg0), Ofs: 3, NBits: 9}
	allocs := testing.AllocsPerRun(100, func() {
		for _, fd := range fields {
			v := fd.Get(&f)
			fd.Set(&f, v)
			fd.Unwildcard(&w)
			_ = fd.PrereqsOKWildcards(&f, &w)
		}
		sf.WriteUint(&f, sf.ReadUint(&f)+1)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run", allocs)
	}
}

// The packet_type entry Open vSwitch sends for Ethernet decodes; other
// packet types are refused.
func TestPacketTypeEntry(t *testing.T) {
	if _, _, _, err := DecodeNXMatch(packetTypeEthernet, true, false, false); err != nil {
		t.Fatalf("packet_type=(0,0): %v", err)
	}
	other := append([]byte(nil), packetTypeEthernet...)
	other[7] = 1
	if _, _, _, err := DecodeNXMatch(other, true, false, false); err == nil {
		t.Fatal("packet_type=(0,1) accepted")
	}
}

// The integer fast path of ReadUint/WriteUint agrees with the Value path
// for every field and random bit ranges.
func TestSubfieldUintPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range Fields() {
		fd := &Fields()[i]
		if fd.Bits > 64 || fd.ID == PacketType {
			continue
		}
		for n := 0; n < 200; n++ {
			ofs := r.IntN(fd.Bits)
			nbits := 1 + r.IntN(fd.Bits-ofs)
			sf := Subfield{Field: fd, Ofs: ofs, NBits: nbits}
			var f1 Flow
			for j := range f1.Words() {
				f1.Words()[j] = r.Uint64()
			}
			f2 := f1
			x := r.Uint64()
			sf.WriteUint(&f1, x)
			sf.Write(&f2, fromU128(0, x, 16))
			if f1 != f2 {
				t.Fatalf("%s: WriteUint and Write differ", sf)
			}
			if a, b := sf.ReadUint(&f1), sf.Read(&f1).Uint(16); a != b {
				t.Fatalf("%s: ReadUint %#x, Read %#x", sf, a, b)
			}
			_, m := ones128(nbits)
			if fd.acc.get == nil && fd.acc.bits == 0 && sf.ReadUint(&f1) != x&m {
				t.Fatalf("%s: wrote %#x, read %#x", sf, x&m, sf.ReadUint(&f1))
			}
		}
	}
}

// Wildcarding one half of vlan_tci keeps the tag's presence while the
// other half is matched (match_set_any_vid/pcp).
func TestVLANSetWild(t *testing.T) {
	var m Match
	FieldByID(DLVLAN).SetMatch(&m, ValueFromUint(5, 2))
	FieldByID(DLVLANPCP).SetMatch(&m, ValueFromUint(3, 1))
	FieldByID(VLANVID).SetWild(&m)
	if v, mask := FieldByID(VLANTCI).Get(&m.Flow).Uint(2), FieldByID(VLANTCI).GetMask(&m.Wildcards).Uint(2); v != 0x7000 || mask != 0xf000 {
		t.Fatalf("after wildcarding the VID: vlan_tci=%#x/%#x, want 0x7000/0xf000", v, mask)
	}
	FieldByID(VLANPCP).SetWild(&m)
	if mask := FieldByID(VLANTCI).GetMask(&m.Wildcards).Uint(2); mask != 0 {
		t.Fatalf("vlan_tci mask %#x after wildcarding both halves", mask)
	}
}
