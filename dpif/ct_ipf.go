package dpif

import (
	"gvs/dpif/ipf"
	"gvs/packet"
)

// IPF returns the datapath's fragment reassembler (dpctl/ipf-*). Every
// datapath has one, as every Open vSwitch userspace datapath's conntrack
// has; the ct action uses it while the datapath has a tracker.
func (dp *Datapath) IPF() *ipf.IPF { return dp.ipf }

// newIPF makes a datapath's fragment reassembler, its expiry running
// until closeIPF.
func newIPF() *ipf.IPF {
	f := ipf.New(nil)
	f.Start()
	return f
}

func (dp *Datapath) closeIPF() {
	if dp.ipf != nil {
		dp.ipf.Close()
	}
}

// isFragment reports whether the ct action must take b through the
// fragment reassembler: the one test a packet that is not a fragment
// pays.
func (c *execCtx) isFragment(b *packet.Buffer) bool {
	return b.Key.IPFrag&packet.FragAny != 0
}

// conntrackFragment is the ct action for an IP fragment (see dpif/ipf):
// a fragment held is consumed; a fragment that completes its set is
// consumed, the reassembled packet runs through the tracker, and each
// original fragment, carrying the tracker's verdict and NAT, goes on with
// rest here; a fragment reassembly refuses goes on as the tracker or the
// reassembler marked it. It reports, as conntrack does, whether b goes on
// with rest.
func (c *execCtx) conntrackFragment(b *packet.Buffer, a *Action, rest Actions) bool {
	v, r := c.dp.ipf.Preprocess(b, a.CT.Zone)
	switch v {
	case ipf.Pass:
		c.dp.ct.Execute(b, a.CT)
		return true
	case ipf.Invalid:
		return true
	case ipf.Held:
		c.pool.Put(b)
		return false
	}
	c.pool.Put(b)
	c.dp.ct.Execute(r.Packet, a.CT)
	for _, f := range c.dp.ipf.Postprocess(r, c.pool, nil) {
		c.execute(f, rest)
	}
	return false
}
