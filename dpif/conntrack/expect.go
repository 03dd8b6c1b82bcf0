package conntrack

import (
	"sync"
	"sync/atomic"

	"gvs/packet"
)

// The tracker's side of the application-layer gateways (alg*.go parse
// and rewrite control messages): the table of expected connections
// (Open vSwitch's alg_expectations), and where in a packet's path the
// helpers run.

// expectation is an expected connection with what it inherits.
type expectation struct {
	algExpectation
	parentKey connKey // the control connection's original key
	mark      uint32
	label     [16]byte
}

// expectations is the table; its lock comes after Tracker.mu and a
// connection's lock.
type expectations struct {
	mu       sync.RWMutex
	n        atomic.Int32 // len(byKey), read without the lock to skip lookups
	byKey    map[Tuple]*expectation
	byParent map[connKey][]Tuple
}

// add records e unless one with its key exists (expectation_create).
func (x *expectations) add(e *expectation) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byKey == nil {
		x.byKey, x.byParent = map[Tuple]*expectation{}, map[connKey][]Tuple{}
	}
	if _, ok := x.byKey[e.Key]; ok {
		return
	}
	x.byKey[e.Key] = e
	x.byParent[e.parentKey] = append(x.byParent[e.parentKey], e.Key)
	x.n.Store(int32(len(x.byKey)))
}

// lookup returns the expectation a new connection with key k meets.
func (x *expectations) lookup(k *connKey) *expectation {
	if x.n.Load() == 0 {
		return nil
	}
	key := algExpectKey(natTuple(k))
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.byKey[key]
}

// dropParent forgets the expectations of a control connection going away.
func (x *expectations) dropParent(parent *connKey) {
	if x.n.Load() == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, k := range x.byParent[*parent] {
		delete(x.byKey, k)
	}
	delete(x.byParent, *parent)
	x.n.Store(int32(len(x.byKey)))
}

// natKindOf is c's nat as the helpers take it.
func natKindOf(c *conn) NATKind {
	switch {
	case c.nat&natSrc != 0:
		return NATSrc
	case c.nat&natDst != 0:
		return NATDst
	}
	return NATApply
}

// ftpBeforeUpdate runs the FTP helper on a packet of control connection
// c ahead of the TCP tracker when Open vSwitch does: a packet with no
// control message travelling against the skew, whose acknowledgement the
// helper un-skews first. It reports whether it ran.
func (t *Tracker) ftpBeforeUpdate(b *packet.Buffer, c *conn, reply bool, nat bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if reply == c.ftp.SkewReply || algFTPCarriesControl(b) {
		return false
	}
	orig, rep := natTuple(&c.key[0]), natTuple(&c.key[1])
	algFTP(b, &orig, &rep, natKindOf(c), nat, reply, &c.ftp)
	return true
}

// ftpAfter runs the FTP helper after the TCP tracker and NAT: the
// expectation a control message announces; false for a malformed one
// (the packet is then +inv).
func (t *Tracker) ftpAfter(b *packet.Buffer, c *conn, reply bool, nat bool) bool {
	c.mu.Lock()
	orig, rep := natTuple(&c.key[0]), natTuple(&c.key[1])
	e, res := algFTP(b, &orig, &rep, natKindOf(c), nat, reply, &c.ftp)
	mark, label := c.mark, c.label
	c.mu.Unlock()
	switch res {
	case algFTPInvalid:
		return false
	case algFTPExpected:
		t.exp.add(&expectation{algExpectation: e, parentKey: c.key[0], mark: mark, label: label})
	}
	return true
}

// tftpExpect records the transfer a TFTP request announces.
func (t *Tracker) tftpExpect(c *conn, reply bool) {
	orig, rep := natTuple(&c.key[0]), natTuple(&c.key[1])
	c.mu.Lock()
	mark, label := c.mark, c.label
	c.mu.Unlock()
	e := algTFTPExpectation(&orig, &rep, natKindOf(c), reply)
	t.exp.add(&expectation{algExpectation: e, parentKey: c.key[0], mark: mark, label: label})
}

// algCtlOf classifies a packet as Open vSwitch's get_alg_ctl_type does
// in its datapath, where the ct action names a helper but no port: UDP
// to port 69 is TFTP, TCP from or to port 21 is FTP, whatever the
// helper (it decides only whether a connection committed with it keeps
// it, and which helper runs).
func algCtlOf(k *packet.Key) Helper {
	switch {
	case k.IPProto == packet.ProtoUDP && k.DstPort == algTFTPPort:
		return HelperTFTP
	case k.IPProto == packet.ProtoTCP && (k.SrcPort == algFTPPort || k.DstPort == algFTPPort):
		return HelperFTP
	}
	return HelperNone
}
