package ofproto

import (
	"fmt"
	"gvs/ofproto/ofpact"
	"sync"
	"sync/atomic"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/pipeline"
)

// TestConcurrentReaders: translation's reads (rules, groups, ports)
// run while flow mods, group mods and port changes go on (run with
// -race).
func TestConcurrentReaders(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	b.SetFailMode(FailStandalone)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := &mf.Flow{}
			for !stop.Load() {
				v := b.Version()
				var wc mf.Wildcards
				if r := b.LookupRule(v, 0, f, &wc); r == nil {
					t.Error("the default flow vanished")
					return
				}
				if g := b.Group(v, 1); g != nil {
					_ = g.Buckets()
				}
				for _, p := range b.Ports() {
					if b.Port(p.OFPort) == nil && b.PortByDatapath(p.DPPort) == nil {
						_ = p
					}
				}
			}
		}()
	}
	for i := range 200 {
		name := fmt.Sprintf("p%d", i%5)
		if i%10 < 5 {
			b.AddPorts([]PortSpec{{Name: name, DPPort: uint32(i%5 + 1)}})
		} else {
			b.DelPort(name)
		}
		var m mf.Match
		m.Flow.InPort, m.Wildcards.Masks.InPort = uint32(i%7), ^uint32(0)
		if err := b.Pipeline().FlowMod(&pipeline.FlowMod{Command: pipeline.FlowAdd, Match: m, Priority: 10,
			OutPort: mf.PortNone, OutGroup: pipeline.GroupAny, Actions: []pipeline.Action{&ofpact.Output{Port: 2}}}); err != nil {
			t.Fatal(err)
		}
		cmd := pipeline.GroupAddOrModify
		if i%3 == 0 {
			cmd = pipeline.GroupDelete
		}
		if err := b.Pipeline().GroupMod(&pipeline.GroupMod{Command: cmd, GroupID: 1, Buckets: []pipeline.Bucket{{ID: uint32(i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
}
