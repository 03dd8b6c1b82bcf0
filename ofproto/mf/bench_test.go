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
