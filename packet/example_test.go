package packet_test

import (
	"fmt"

	"gvs/packet"
)

// A PMD's inner loop: fill a batch from the pool, "receive" into each
// buffer, parse into the buffer's key slot, count statuses, look up a
// masked key, and give the buffers back (a real Send would take them).
func Example() {
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: 64, FrameSize: 2048})
	if err != nil {
		panic(err)
	}
	var batch packet.Batch // lives as long as the PMD; never reallocated
	var statuses [packet.NumStatus]uint64
	mask := packet.Mask{EtherType: 0xffff}
	megaflows := map[packet.Key]string{{EtherType: packet.EtherTypeARP}: "flood"}

	frames := [][]byte{
		// An ARP request, as a device would deliver it.
		append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06,
			0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 198, 18, 0, 1},
			make([]byte, 10)...),
		// A runt.
		{1, 2, 3},
	}
	pool.GetBatch(&batch, len(frames))
	for i, b := range batch.Buffers() {
		b.SetLen(copy(b.Room(), frames[i]))
		b.InPort = 1
		statuses[b.Parse()]++
		var masked packet.Key
		b.Key.ApplyMask(&mask, &masked)
		fmt.Printf("frame %d: ethertype %#04x, action %q\n", i, b.Key.EtherType, megaflows[masked])
	}
	pool.PutBatch(&batch)
	fmt.Println("ok:", statuses[packet.StatusOK], "truncated-l2:", statuses[packet.StatusTruncatedL2], "free:", pool.Stats().Free)
	// Output:
	// frame 0: ethertype 0x0806, action "flood"
	// frame 1: ethertype 0x0000, action ""
	// ok: 1 truncated-l2: 1 free: 64
}
