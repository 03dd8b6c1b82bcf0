package conntrack

import (
	"sync"
	"sync/atomic"
)

// conn is one tracked connection: Open vSwitch's struct conn with its
// protocol part. key, zone, proto, id, tpID, admitZone, nat and helper
// are set before the connection is published and never change; the
// rest is guarded by mu (taken by the PMD whose packet updates the
// connection: the connection's own lock, as Open vSwitch's conn->lock),
// but for expiration and dead, which are atomic for lock-free lookups.
type conn struct {
	key       [2]connKey // original, reply (after NAT)
	id        uint32
	tpID      uint32
	admitZone int32 // zone whose limit counted it; noZone: none
	nat       natAction
	helper    Helper

	expiration atomic.Int64 // milliseconds of the tracker's clock
	dead       atomic.Bool  // unlinked (flushed, expired, replaced)

	mu    sync.Mutex
	mark  uint32
	label [16]byte
	// Protocol state: tcp for TCP; state for the others (otherFirst..,
	// icmpFirst..).
	tcp   [2]tcpPeer
	state uint8
}

const noZone int32 = -2

func (c *conn) expired(now int64) bool { return now >= c.expiration.Load() }

// natAction says what a connection's NAT binding rewrites, in the
// original direction (Open vSwitch's nat_action).
type natAction uint8

const (
	natSrc natAction = 1 << iota
	natDst
)

func (a natAction) reverse() natAction {
	var r natAction
	if a&natSrc != 0 {
		r |= natDst
	}
	if a&natDst != 0 {
		r |= natSrc
	}
	return r
}

// updateResult is what a protocol tracker makes of a packet of an
// existing connection (Open vSwitch's ct_update_res).
type updateResult uint8

const (
	updateInvalid updateResult = iota
	updateValid
	updateNew      // the connection is over: start a new one
	updateValidNew // valid, but the connection is not yet established
)

// Other (UDP and every protocol without a tracker of its own) and ICMP
// states.
const (
	otherFirst uint8 = iota
	otherMultiple
	otherBidir
)

const (
	icmpFirst uint8 = iota
	icmpReply
)
