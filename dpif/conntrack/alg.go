package conntrack

import (
	"net/netip"

	"gvs/packet"
)

// Application-layer gateways (`alg=ftp`, `alg=tftp`): Open vSwitch's
// handle_ftp_ctl, handle_tftp_ctl and expectation_create
// (lib/conntrack.c), rewritten as functions of the packet and the
// connection's tuples. The tracker keeps the state (the expectation
// table, a control connection's algFTPState) and calls these.
//
// How the tracker uses them, as Open vSwitch does:
//
//  1. Every tracked packet: algCtlType(&b.Key, helper) says whether it
//     belongs to an FTP or TFTP control connection (helper is the
//     committed connection's Helper, or the ct action's for a new one).
//     A connection is committed with a helper only when algCtlType gives
//     HelperNone or that helper (Open vSwitch's ct_verify_helper).
//  2. A packet of an existing FTP control connection committed with
//     alg=ftp goes through algFTP once, under the connection's lock,
//     with the state kept in the connection. Open vSwitch's order, which
//     the TCP tracker's window checks see: a packet carrying no control
//     message (algFTPCarriesControl false) that travels against the skew
//     (isReply != st.SkewReply) goes through algFTP before the TCP
//     tracker, which then sees its acknowledgement un-skewed; any other
//     packet after the TCP tracker (unless it restarted the connection)
//     and after the NAT rewrite. algFTP returns the expectation a
//     PORT/227/EPRT/229 message creates; a malformed one makes the
//     packet +inv (+trk).
//  3. A packet of a TFTP connection committed with alg=tftp, when the
//     connection is created, yields algTFTPExpectation.
//  4. A packet that would create a connection first looks its
//     algExpectKey up in the expectation table: a match makes it +rel,
//     gives it the parent's mark and label, and, when committed with a
//     nat clause, the reply tuple of algExpectation.NATReply instead of
//     an allocation. An expectation is dropped with its parent (the
//     parent tuple is in it) and is not made twice.

// algFTPPort and algTFTPPort are the well-known control ports by which a
// packet is an FTP or TFTP control packet even without a helper.
const (
	algFTPPort  = 21
	algTFTPPort = 69
)

// algCtlType classifies a packet as Open vSwitch's get_alg_ctl_type: a
// helper's own protocol (ftp over TCP, tftp over UDP), else by port (UDP
// to 69 is TFTP, TCP from or to 21 is FTP), else HelperNone.
func algCtlType(k *packet.Key, helper Helper) Helper {
	switch {
	case helper == HelperFTP && k.IPProto == packet.ProtoTCP:
		return HelperFTP
	case helper == HelperTFTP && k.IPProto == packet.ProtoUDP:
		return HelperTFTP
	case k.IPProto == packet.ProtoUDP && k.DstPort == algTFTPPort:
		return HelperTFTP
	case k.IPProto == packet.ProtoTCP && (k.SrcPort == algFTPPort || k.DstPort == algFTPPort):
		return HelperFTP
	}
	return HelperNone
}

// algHelperAllowed reports whether a connection of control type ctl may
// be committed with helper (Open vSwitch's ct_verify_helper): anything
// goes for a packet of no ALG, otherwise the helper must be its own.
func algHelperAllowed(helper, ctl Helper) bool {
	return ctl == HelperNone || helper == ctl
}

// algExpectation is a connection an ALG expects (Open vSwitch's
// alg_exp_node): the data connection an FTP control message announced,
// or a TFTP transfer's.
type algExpectation struct {
	// Key is the expected connection's original tuple with SrcPort 0:
	// its source port is not known in advance. A new connection matches
	// when algExpectKey(orig) == Key.
	Key Tuple
	// Parent is the control connection's original tuple; the expected
	// connection inherits its mark and label, and goes when it goes.
	Parent Tuple
	// NATAddr is the address the expected connection's reply tuple gets
	// when it is committed with nat: as its destination (NATReplyDst, a
	// src nat) or its source (a dst nat).
	NATAddr     netip.Addr
	NATReplyDst bool
}

// algExpectKey is the key a new connection with original tuple t is
// looked up by in the expectation table.
func algExpectKey(t Tuple) Tuple {
	t.SrcPort = 0
	return t
}

// NATReply returns the reply tuple and nat kind an expected connection
// gets when committed with nat, from its plain (reversed, un-NATed)
// reply tuple.
func (e *algExpectation) NATReply(plain Tuple) (Tuple, NATKind) {
	if e.NATReplyDst {
		plain.Dst = e.NATAddr
		return plain, NATSrc
	}
	plain.Src = e.NATAddr
	return plain, NATDst
}

// algExpect builds the expectation of a connection to dstPort announced by
// a packet of the control connection (orig, reply: its tuples, reply
// after NAT; kind: its nat, NATApply or NATSrc/NATDst) travelling in the
// reply direction or not: the data connection goes the other way, to
// the sender, and under NAT is NATed back to where the sender really is.
func algExpect(orig, reply *Tuple, kind NATKind, isReply bool, dstPort uint16) algExpectation {
	e := algExpectation{Parent: *orig}
	var src, dst netip.Addr
	if isReply {
		src, dst = orig.Src, orig.Dst
		e.NATReplyDst, e.NATAddr = true, reply.Dst
		if kind == NATDst {
			e.NATReplyDst, e.NATAddr = false, reply.Src
		}
	} else {
		src, dst = reply.Src, reply.Dst
		e.NATReplyDst, e.NATAddr = false, orig.Src
		if kind == NATDst {
			e.NATReplyDst, e.NATAddr = true, orig.Dst
		}
	}
	e.Key = Tuple{Src: src, Dst: dst, DstPort: dstPort, Proto: orig.Proto, Zone: orig.Zone}
	return e
}

// algTFTPExpectation is the expectation a TFTP request creates: the
// server answers from a new port to the client's port. That is the port
// as the server sees it (reply.DstPort): Open vSwitch takes the client's
// own, the same unless SNAT had to move it, when its expectation misses.
func algTFTPExpectation(orig, reply *Tuple, kind NATKind, isReply bool) algExpectation {
	port := orig.SrcPort
	if !isReply {
		port = reply.DstPort
	}
	return algExpect(orig, reply, kind, isReply, port)
}
