package ofproto

import (
	"sync/atomic"
	"testing"
	"time"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/pipeline"
)

// TestMemTrimAfterBulkChange: the bridge returns memory once after a bulk
// change settles, never after small ones, and not after Close.
func TestMemTrimAfterBulkChange(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	defer b.Close()
	var trims atomic.Int32
	b.trim.mu.Lock()
	b.trim.free, b.trim.settle, b.trim.bulk = func() { trims.Add(1) }, 20*time.Millisecond, 50
	b.trim.mu.Unlock()
	add := func(from, n int) {
		for i := from; i < from+n; i++ {
			var m mf.Match
			m.Flow.EtherType, m.Wildcards.Masks.EtherType = 0x0800, 0xffff
			m.Flow.SrcIPv4, m.Wildcards.Masks.SrcIPv4 = [4]byte{10, 0, byte(i >> 8), byte(i)}, [4]byte{255, 255, 255, 255}
			if err := b.Pipeline().FlowMod(&pipeline.FlowMod{Command: pipeline.FlowAdd, Match: m, Priority: 1,
				BufferID: pipeline.BufferNone, OutPort: mf.PortNone, OutGroup: pipeline.GroupAny,
				Actions: []pipeline.Action{&ofpact.Output{Port: 1}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(0, 10)
	time.Sleep(100 * time.Millisecond)
	if n := trims.Load(); n != 0 {
		t.Fatalf("%d trims after 10 rules", n)
	}
	add(10, 60) // 70 rules since the last trim: bulk
	time.Sleep(100 * time.Millisecond)
	if n := trims.Load(); n != 1 {
		t.Fatalf("%d trims after a bulk change, want 1", n)
	}
	add(70, 10)
	time.Sleep(100 * time.Millisecond)
	if n := trims.Load(); n != 1 {
		t.Fatalf("%d trims after a small change following a trim, want 1", n)
	}
	b.Close()
	add(80, 100)
	time.Sleep(100 * time.Millisecond)
	if n := trims.Load(); n != 1 {
		t.Fatalf("%d trims after Close, want 1", n)
	}
}
