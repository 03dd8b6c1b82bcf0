package ofpact

import "testing"

// A typical OVN action list (from the recorded two-port pipeline).
const ovnActions = "ct(commit,zone=NXM_NX_REG13[0..15],nat(src),exec(set_field:0/0x1->ct_mark,move:NXM_NX_XXREG0[0..31]->NXM_NX_CT_LABEL[96..127])),set_field:0x4->reg13,set_field:0x1->metadata,resubmit(,27)"

func BenchmarkPullInstructions(b *testing.B) {
	acts, err := Parse(ovnActions)
	if err != nil {
		b.Fatal(err)
	}
	wire := AppendInstructions(nil, acts, of15)
	b.ReportAllocs()
	b.SetBytes(int64(len(wire)))
	for i := 0; i < b.N; i++ {
		if _, err := PullInstructions(wire, of15); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendInstructions(b *testing.B) {
	acts, err := Parse(ovnActions)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendInstructions(buf[:0], acts, of15)
	}
}

func BenchmarkFormat(b *testing.B) {
	acts, err := Parse(ovnActions)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = Format(acts)
	}
}
