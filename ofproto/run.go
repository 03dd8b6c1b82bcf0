package ofproto

import (
	"time"

	"gvs/ofproto/mf"
	"gvs/ofproto/pipeline"
	"gvs/ofproto/upcall"
	"gvs/ofproto/xlate"
)

var _ upcall.Bridge = (*Bridge)(nil)

// Learn implements upcall.Bridge: add the flow a learn action produced
// (a modify-strict that adds when nothing matches, as learn_execute
// builds it), or restart its hard timeout when the same flow is already
// there (ofproto_flow_mod_learn_refresh), which changes nothing the
// revalidator would have to redo.
func (b *Bridge) Learn(f *xlate.LearnedFlow) error {
	if r := b.findExactly(f.TableID, &f.Match, int(f.Priority)); r != nil &&
		r.Cookie == f.Cookie && pipeline.ActionsEqual(r.Actions, f.Actions) {
		r.Refresh(b.now())
		return nil
	}
	if f.Limit > 0 {
		// A learn action with a limit stops adding flows once its table
		// holds that many with its cookie (an approximation of Open
		// vSwitch's count of the learning rule's own flows).
		rules, err := b.pipe.Flows(&pipeline.FlowQuery{TableID: f.TableID, Cookie: f.Cookie, CookieMask: ^uint64(0),
			OutPort: mf.PortNone, OutGroup: pipeline.GroupAny})
		if err == nil && len(rules) >= int(f.Limit) {
			return nil
		}
	}
	var flags pipeline.Flags
	if f.Flags&ofpffSendFlowRem != 0 {
		flags |= pipeline.FlagSendFlowRem
	}
	return b.pipe.FlowMod(&pipeline.FlowMod{
		Command: pipeline.FlowModifyStrict, Match: f.Match, Priority: int(f.Priority), TableID: f.TableID,
		NewCookie: f.Cookie, ModifyCookie: true,
		IdleTimeout: f.IdleTimeout, HardTimeout: f.HardTimeout, Flags: flags,
		BufferID: pipeline.BufferNone, OutPort: mf.PortNone, OutGroup: pipeline.GroupAny,
		Actions: f.Actions,
	})
}

// ofpffSendFlowRem is OFPFF_SEND_FLOW_REM in every OpenFlow version.
const ofpffSendFlowRem = 1

// RunTimers expires flows whose idle or hard timeout passed and MAC
// entries idle longer than the aging time, as of now (Open vSwitch's
// ofproto-dpif run: rule expiry and mac_learning_run). The bridge's timer
// goroutine calls it every second; tests call it with a chosen time.
func (b *Bridge) RunTimers(now time.Time) (flows, macs int) {
	b.pollPacketInOnMiss()
	flows = b.pipe.Expire(now)
	macs = b.macs.Expire(now)
	if macs > 0 {
		b.notifyChanged()
	}
	return flows, macs
}

// Start runs the bridge's timers every interval until Close.
func (b *Bridge) Start(interval time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		return
	}
	b.stop, b.done = make(chan struct{}), make(chan struct{})
	go func(stop, done chan struct{}) {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				b.RunTimers(b.now())
			}
		}
	}(b.stop, b.done)
}

// Close stops the timers.
func (b *Bridge) Close() {
	b.trim.close()
	b.mu.Lock()
	stop, done := b.stop, b.done
	b.stop = nil
	b.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// pollPacketInOnMiss follows the connection manager's
// WantsPacketInOnMiss into translation's settings (revalidating when it
// changes).
func (b *Bridge) pollPacketInOnMiss() {
	e := b.sink()
	if e == nil {
		return
	}
	want := e.WantsPacketInOnMiss()
	if c := b.xcfg.Load(); c.PacketInOnMiss != want {
		nc := *c
		nc.PacketInOnMiss = want
		b.xcfg.Store(&nc)
		b.notifyChanged()
	}
}
