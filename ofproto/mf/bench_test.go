package mf

import "testing"

// Field access runs during translation for every field an action or a
// prerequisite touches.
func BenchmarkFieldGetSet(b *testing.B) {
	for _, id := range []FieldID{Reg3, XXReg1, EthDst, IPv4Src, VLANTCI, IPDSCPShifted, TCPDst, InPortOXM} {
		fd := FieldByID(id)
		b.Run(fd.Name, func(b *testing.B) {
			var f Flow
			v := fd.AllOnes()
			for b.Loop() {
				fd.Set(&f, v)
				v = fd.Get(&f)
			}
		})
	}
}

func BenchmarkSubfieldWrite(b *testing.B) {
	sf := Subfield{Field: FieldByID(Reg0), Ofs: 3, NBits: 9}
	var f Flow
	for b.Loop() {
		sf.WriteUint(&f, sf.ReadUint(&f)+1)
	}
}

func BenchmarkPrereqsOKWildcards(b *testing.B) {
	var f Flow
	f.EtherType, f.IPProto = 0x86dd, 58
	f.ICMPType = 135
	var w Wildcards
	fd := FieldByID(NDSLL)
	for b.Loop() {
		fd.PrereqsOKWildcards(&f, &w)
	}
}

// A typical OVN match: metadata, registers, ct_state, ip fields.
func ovnLikeMatch(b *testing.B) Match {
	m, _, err := ParseMatch("priority=110,ct_state=+est+trk,ct_label=0/0x1,tcp,reg14=0x2,metadata=0x1,nw_src=10.0.0.0/24,tp_dst=80")
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func BenchmarkDecodeOXMMatch(b *testing.B) {
	m := ovnLikeMatch(b)
	wire := AppendMatch(nil, 0x06, &m)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := PullMatch(wire, 0x06); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendOXMMatch(b *testing.B) {
	m := ovnLikeMatch(b)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendMatch(buf[:0], 0x06, &m)
	}
}

func BenchmarkMatchFormat(b *testing.B) {
	m := ovnLikeMatch(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.Format(110)
	}
}

func BenchmarkParseMatch(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseMatch("priority=110,ct_state=+est+trk,ct_label=0/0x1,tcp,reg14=0x2,metadata=0x1,nw_src=10.0.0.0/24,tp_dst=80"); err != nil {
			b.Fatal(err)
		}
	}
}
