package conntrack

import (
	"sort"
	"sync/atomic"
)

// timeoutAttrs are the CT_Timeout_Policy keys the userspace tracker
// uses, for each timeout class (Open vSwitch's tm_to_ct_dpif_tp: note
// that "other" multiple maps to udp_single and bidirectional to
// udp_multiple).
var timeoutAttrs = [numTimeouts]string{
	tmTCPFirstPacket: "tcp_syn_sent",
	tmTCPOpening:     "tcp_syn_recv",
	tmTCPEstablished: "tcp_established",
	tmTCPClosing:     "tcp_fin_wait",
	tmTCPFinWait:     "tcp_time_wait",
	tmTCPClosed:      "tcp_close",
	tmOtherFirst:     "udp_first",
	tmOtherMultiple:  "udp_single",
	tmOtherBidir:     "udp_multiple",
	tmICMPFirst:      "icmp_first",
	tmICMPReply:      "icmp_reply",
}

// defaultTimeouts are Open vSwitch's netdev defaults, in seconds.
var defaultTimeouts = [numTimeouts]uint32{
	tmTCPFirstPacket: 30,
	tmTCPOpening:     30,
	tmTCPEstablished: 24 * 60 * 60,
	tmTCPClosing:     15 * 60,
	tmTCPFinWait:     45,
	tmTCPClosed:      30,
	tmOtherFirst:     60,
	tmOtherMultiple:  60,
	tmOtherBidir:     30,
	tmICMPFirst:      60,
	tmICMPReply:      30,
}

// TimeoutNames lists the timeout policy keys the tracker honours.
func TimeoutNames() []string {
	names := append([]string(nil), timeoutAttrs[:]...)
	sort.Strings(names)
	return names
}

// policies is an immutable snapshot of the timeout policies, replaced
// whole by the control plane and read by PMDs without locks.
type policies struct {
	def    *[numTimeouts]uint32 // byID[0], without a map lookup
	byID   map[uint32]*[numTimeouts]uint32
	byZone map[uint16]uint32
}

func newPolicies() *policies {
	d := defaultTimeouts
	return &policies{def: &d, byID: map[uint32]*[numTimeouts]uint32{0: &d}, byZone: map[uint16]uint32{}}
}

func (p *policies) clone() *policies {
	n := &policies{byID: make(map[uint32]*[numTimeouts]uint32, len(p.byID)), byZone: make(map[uint16]uint32, len(p.byZone))}
	for k, v := range p.byID {
		n.byID[k] = v
	}
	for k, v := range p.byZone {
		n.byZone[k] = v
	}
	return n
}

// timeout returns the timeout in milliseconds of class tm under policy
// id: Open vSwitch reads the policy at each update, so a changed policy
// applies to the connections under it.
func (p *policies) timeout(id uint32, tm int) int64 {
	if id == 0 {
		return int64(p.def[tm]) * 1000
	}
	if t, ok := p.byID[id]; ok {
		return int64(t[tm]) * 1000
	}
	return int64(defaultTimeouts[tm]) * 1000
}

// policyFor is the policy of a new connection: the request's, else the
// zone's, else the default.
func (p *policies) policyFor(req *Request) uint32 {
	if req.TimeoutPolicy != 0 {
		return req.TimeoutPolicy
	}
	if len(p.byZone) != 0 {
		return p.byZone[req.Zone]
	}
	return 0
}

type policyStore struct{ p atomic.Pointer[policies] }

// SetTimeoutPolicy defines or replaces policy id: the keys it has,
// defaults for the others (Open vSwitch's timeout_policy_update).
// Unknown keys are ignored, as the userspace datapath ignores the
// attributes it has no state for.
func (t *Tracker) SetTimeoutPolicy(id uint32, tp TimeoutPolicy) {
	t.polMu.Lock()
	defer t.polMu.Unlock()
	vals := defaultTimeouts
	for i, name := range timeoutAttrs {
		if v, ok := tp[name]; ok {
			vals[i] = v
		}
	}
	n := t.pol.p.Load().clone()
	n.byID[id] = &vals
	n.def = n.byID[0]
	t.pol.p.Store(n)
}

// DelTimeoutPolicy drops policy id; its connections fall back to the
// defaults. The default policy (0) goes back to the defaults.
func (t *Tracker) DelTimeoutPolicy(id uint32) {
	t.polMu.Lock()
	defer t.polMu.Unlock()
	n := t.pol.p.Load().clone()
	if id == 0 {
		d := defaultTimeouts
		n.byID[0] = &d
	} else {
		delete(n.byID, id)
	}
	n.def = n.byID[0]
	t.pol.p.Store(n)
}

// SetZonePolicy makes policy id that of new connections in zone (0: the
// default policy).
func (t *Tracker) SetZonePolicy(zone uint16, id uint32) {
	t.polMu.Lock()
	defer t.polMu.Unlock()
	n := t.pol.p.Load().clone()
	if id == 0 {
		delete(n.byZone, zone)
	} else {
		n.byZone[zone] = id
	}
	n.def = n.byID[0]
	t.pol.p.Store(n)
}
