package ipf

import (
	"testing"

	"gvs/packet"
)

// BenchmarkPreprocessNonFragment is the cost the ct action pays for a
// packet that is not a fragment.
func BenchmarkPreprocessNonFragment(b *testing.B) {
	f := New(nil)
	buf := bufferOf(udpFrame(false, 1400, 1), 1)
	b.ReportAllocs()
	for b.Loop() {
		f.Preprocess(buf, 1)
	}
}

// BenchmarkReassemble is one 4,000-byte UDP datagram in three IPv4
// fragments held, reassembled and emitted again (per datagram).
func BenchmarkReassemble(b *testing.B) {
	f := New(nil)
	whole := udpFrame(false, 4000, 1)
	frags := fragmentFrame(whole, false, 1, evenPieces(len(whole)-34, 1400))
	bufs := make([]*packet.Buffer, len(frags))
	for i, fr := range frags {
		bufs[i] = bufferOf(fr, 1)
	}
	pool := testPool()
	var out []*packet.Buffer
	b.ReportAllocs()
	for b.Loop() {
		for i, buf := range bufs {
			buf.SetLen(len(frags[i]))
			copy(buf.Data(), frags[i])
			buf.Parse()
			if v, r := f.Preprocess(buf, 0); v == Reassembled {
				out = f.Postprocess(r, pool, out[:0])
				for _, o := range out {
					o.Free()
				}
			}
		}
	}
}
