package afxdp

import (
	"testing"

	"gvs/packet"
)

// TestRecvSendNoAllocs proves the steady state of the packet path
// allocates nothing: Send of a batch (copy into UMEM, kick, completion
// reaping, buffers back to the pool) and Recv of it on the peer (copy
// out, fill ring refill, partial checksum repair).
func TestRecvSendNoAllocs(t *testing.T) {
	for _, mode := range []XDPMode{ModeGeneric, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			_, a, b := loopPair(t, Config{XDPMode: mode}, 1)
			pool := newTestPool(t)
			frame := buildFrame(frameSpec{payload: 1000, partial: true})
			var batch packet.Batch
			lost := 0
			round := func() {
				for range 16 {
					buf := pool.Get()
					copy(buf.Room(), frame)
					buf.SetLen(len(frame))
					batch.Append(buf)
				}
				if err := a.Send(0, &batch); err != nil {
					t.Fatal(err)
				}
				got := 0
				for tries := 0; got < 16 && tries < 100000; tries++ {
					n, err := b.Recv(0, &batch, pool)
					if err != nil {
						t.Fatal(err)
					}
					got += n
					pool.PutBatch(&batch)
				}
				lost += 16 - got
			}
			round()
			allocs := testing.AllocsPerRun(200, round)
			if allocs != 0 {
				t.Errorf("Recv+Send allocate %.1f times per round", allocs)
			}
			if lost != 0 {
				t.Errorf("%d frames lost", lost)
			}
			if b.ChecksumsFixed() == 0 {
				t.Error("the repair path was not exercised")
			}
		})
	}
}
