package packet

import "testing"

// The packet path must not allocate: every hot function is run under
// testing.AllocsPerRun and must report 0.
func TestZeroAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("alloc counts are meaningful in full runs only")
	}
	frames := parseCases()
	pool := smallPool(t, 4)
	var batch Batch
	buf := loadBuffer(t, l4Frames()[0].withPartial())
	buf.Parse()
	payload := make([]byte, 1500)
	var k, out Key
	var o Offsets
	m := Mask{EtherType: 0xffff, DstPort: 0xffff}
	var sink uint64

	cases := []struct {
		name string
		fn   func()
	}{
		{"UpdateChecksum", func() {
			sink += uint64(UpdateChecksum(0x1234, payload[:16], payload[16:32]))
		}},
		{"Parse", func() {
			for i := range frames {
				Parse(frames[i].frame, &k)
			}
		}},
		{"ParseOffsets", func() { ParseOffsets(frames[0].frame, &k, &o) }},
		{"Buffer.Parse", func() { buf.Parse() }},
		{"Hash", func() { sink += k.Hash() }},
		{"ApplyMask", func() { k.ApplyMask(&m, &out) }},
		{"Pool.Get/Put", func() { pool.Put(pool.Get()) }},
		{"Pool.GetBatch/PutBatch", func() { pool.GetBatch(&batch, BatchSize); pool.PutBatch(&batch) }},
		{"PushVLAN/PopVLAN", func() { buf.PushVLAN(5); buf.PopVLAN() }},
		{"VnetHdr push/pull", func() { buf.PushVnetHdr(); buf.PullVnetHdr() }},
		{"Checksum", func() { sink += uint64(Checksum(payload, 0)) }},
		{"PseudoHeaderSumV6", func() { sink += uint64(PseudoHeaderSumV6(ip6A, ip6B, ProtoTCP, 1000)) }},
		{"FixPartialChecksum", func() { buf.FixPartialChecksum() }},
		{"IsPartialChecksum", func() { IsPartialChecksum(buf.Data(), &buf.Key, buf.Offsets) }},
		{"Status.String", func() { sink += uint64(len(StatusTruncatedL4.String())) }},
	}
	for _, c := range cases {
		if n := testing.AllocsPerRun(100, c.fn); n != 0 {
			t.Errorf("%s: %v allocations per run", c.name, n)
		}
	}
	_ = sink
}
