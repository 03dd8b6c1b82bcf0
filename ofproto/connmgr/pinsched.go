package connmgr

import (
	"math/rand/v2"
	"slices"
	"time"
)

// pinsched is Open vSwitch's packet-in scheduler (ofproto/pinsched.c), one
// per connection and kind (action, miss) when controller_rate_limit is
// set: a token bucket of rate packet-ins a second holding burst; past it,
// packet-ins wait in per-input-port queues served round robin as tokens
// come, at most burst of them (then the longest queue loses its oldest).
type pinsched struct {
	rate, burst int
	tokens      int64 // thousandths of a packet-in, as OVS's token bucket
	lastFill    time.Time

	queues  map[uint32][][]byte
	order   []uint32 // ports with a queue, in round-robin order
	next    int      // index into order of the next queue to serve
	queued  int
	normal  uint64 // sent at once
	limited uint64 // queued
	dropped uint64 // dropped from a full queue
}

// newPinsched is pinsched_create with adjust_limits: rate 0 means 1000,
// burst 0 a quarter of the rate (at least 1).
func newPinsched(rate, burst int, now time.Time) *pinsched {
	ps := &pinsched{queues: map[uint32][][]byte{}, lastFill: now}
	ps.setLimits(rate, burst)
	ps.tokens = int64(ps.burst) * 1000
	return ps
}

func (ps *pinsched) setLimits(rate, burst int) {
	if rate <= 0 {
		rate = 1000
	}
	if burst <= 0 {
		burst = rate / 4
	}
	ps.rate, ps.burst = rate, max(burst, 1)
	for ps.queued > ps.burst {
		ps.drop()
	}
}

// token is token_bucket_withdraw of one packet-in.
func (ps *pinsched) token(now time.Time) bool {
	if ps.tokens < 1000 {
		if ms := now.Sub(ps.lastFill).Milliseconds(); ms > 0 {
			ps.tokens = min(ps.tokens+int64(ps.rate)*ms, int64(ps.burst)*1000)
			ps.lastFill = ps.lastFill.Add(time.Duration(ms) * time.Millisecond)
		}
		if ps.tokens < 1000 {
			return false
		}
	}
	ps.tokens -= 1000
	return true
}

// send is pinsched_send: true when msg may go now; otherwise it is queued
// (and sent by run).
func (ps *pinsched) send(port uint32, msg []byte, now time.Time) bool {
	if ps.queued == 0 && ps.token(now) {
		ps.normal++
		return true
	}
	if ps.queued >= ps.burst {
		ps.drop()
	}
	if _, ok := ps.queues[port]; !ok {
		ps.order = append(ps.order, port)
	}
	ps.queues[port] = append(ps.queues[port], msg)
	ps.queued++
	ps.limited++
	return false
}

// drop discards the oldest packet-in of a longest queue (chosen at random
// among equals, as OVS).
func (ps *pinsched) drop() {
	ps.dropped++
	var longest []uint32
	for _, p := range ps.order {
		switch n := len(ps.queues[p]); {
		case len(longest) == 0 || n > len(ps.queues[longest[0]]):
			longest = append(longest[:0], p)
		case n == len(ps.queues[longest[0]]):
			longest = append(longest, p)
		}
	}
	if len(longest) == 0 {
		return
	}
	p := longest[rand.IntN(len(longest))]
	ps.queues[p] = ps.queues[p][1:]
	ps.queued--
	if len(ps.queues[p]) == 0 {
		ps.removeQueue(p)
	}
}

func (ps *pinsched) removeQueue(p uint32) {
	delete(ps.queues, p)
	i := slices.Index(ps.order, p)
	ps.order = slices.Delete(ps.order, i, i+1)
	if ps.next > i {
		ps.next--
	}
	if ps.next >= len(ps.order) {
		ps.next = 0
	}
}

// run is pinsched_run: the queued packet-ins tokens allow now (at most 50),
// round robin over the ports.
func (ps *pinsched) run(now time.Time) [][]byte {
	var out [][]byte
	for i := 0; ps.queued > 0 && i < 50 && ps.token(now); i++ {
		p := ps.order[ps.next]
		out = append(out, ps.queues[p][0])
		ps.queues[p] = ps.queues[p][1:]
		ps.queued--
		if len(ps.queues[p]) == 0 {
			ps.removeQueue(p)
		} else {
			ps.next = (ps.next + 1) % len(ps.order)
		}
	}
	return out
}

// wait is how long until run can send the next queued packet-in (0: none
// queued).
func (ps *pinsched) wait() time.Duration {
	if ps.queued == 0 {
		return 0
	}
	return max(time.Millisecond, time.Second/time.Duration(ps.rate))
}

// drain empties the queues (the limit was lifted); nil-safe.
func (ps *pinsched) drain() [][]byte {
	if ps == nil {
		return nil
	}
	var out [][]byte
	for _, p := range ps.order {
		out = append(out, ps.queues[p]...)
	}
	ps.queues, ps.order, ps.next, ps.queued = map[uint32][][]byte{}, nil, 0, 0
	return out
}
