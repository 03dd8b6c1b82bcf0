package conntrack

import "gvs/packet"

// The tracker's calls into the NAT half of the package (nat*.go): the
// choice of a connection's reply tuple and the packet rewrite. They go
// through these two functions so the tracker does not depend on how the
// NAT code names things.

// natBind chooses c's NATed reply key (c.key[1] holds the plain reverse
// of the original) under the writer lock, so that no live connection
// has it, and records which sides change in c.nat. False: the ranges are
// exhausted.
func (t *Tracker) natBind(tbl *table, c *conn, n *NAT, now int64) bool {
	inUse := func(k *connKey) bool {
		other, _ := tbl.lookup(k, now)
		return other != nil
	}
	reply, action, ok := natChooseReply(&c.key[0], n, inUse)
	if !ok {
		return false
	}
	c.key[1], c.nat = reply, action
	return true
}

// natRewrite rewrites packet b so that its addresses and ports are to's
// on the sides action names (to is the tuple the packet must carry), and
// for an ICMP error (related) the quoted packet's the other way round.
func natRewrite(b *packet.Buffer, to *connKey, action natAction, related bool) {
	natRewriteStub(b, to, action, related)
}
