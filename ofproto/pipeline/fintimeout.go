package pipeline

import "gvs/ofproto/ofpact"

// fin_timeout: a rule whose actions hold fin_timeout has its idle and
// hard timeouts lowered once a flow using it sees a TCP FIN or RST (Open
// vSwitch's ofproto_rule_reduce_timeouts). The rule's own IdleTimeout and
// HardTimeout stay as added (they are read without locks); the lowered
// values live in its ext, and Timeouts gives the ones in force. A rule
// with fin_timeout is indexed as expirable when added, so that lowering
// a zero timeout needs no pipeline lock.

// ReduceTimeouts lowers the rule's idle and hard timeouts to at most idle
// and hard seconds (0: that one unchanged); a zero (never) timeout
// becomes the given one. Any goroutine (the revalidator, upcall handlers).
func (r *Rule) ReduceTimeouts(idle, hard uint16) {
	if idle == 0 && hard == 0 {
		return
	}
	e := r.extension()
	lower(&e.finIdle, r.IdleTimeout, idle)
	lower(&e.finHard, r.HardTimeout, hard)
}

// lower sets *cur (0: base in force) to limit when the timeout in force
// is never or longer.
func lower(cur interface {
	Load() uint32
	CompareAndSwap(old, new uint32) bool
}, base, limit uint16) {
	if limit == 0 {
		return
	}
	for {
		old := cur.Load()
		inForce := base
		if old != 0 {
			inForce = uint16(old)
		}
		if inForce != 0 && inForce <= limit {
			return
		}
		if cur.CompareAndSwap(old, uint32(limit)) {
			return
		}
	}
}

// Timeouts returns the idle and hard timeouts in force: as added, or as
// lowered by fin_timeout.
func (r *Rule) Timeouts() (idle, hard uint16) {
	idle, hard = r.IdleTimeout, r.HardTimeout
	if e := r.ext.Load(); e != nil {
		if v := e.finIdle.Load(); v != 0 {
			idle = uint16(v)
		}
		if v := e.finHard.Load(); v != 0 {
			hard = uint16(v)
		}
	}
	return idle, hard
}

// hasFinTimeout reports whether acts hold a fin_timeout action (nested
// ones included: it acts on the rule whose actions run it).
func hasFinTimeout(acts []Action) bool {
	return !walk(acts, func(a any) bool {
		_, ok := a.(*ofpact.FinTimeout)
		return !ok
	})
}
