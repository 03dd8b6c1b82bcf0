package dpif

import (
	"gvs/dpif/conntrack"
	"gvs/packet"
)

// ActionKind names what an Action does to a packet.
type ActionKind uint8

const (
	// ActOutput sends (a copy of) the packet to Port.
	ActOutput ActionKind = iota + 1
	// ActPushVLAN inserts an 802.1Q tag with TCI as the outermost tag.
	ActPushVLAN
	// ActPopVLAN removes the outermost VLAN tag, if any.
	ActPopVLAN
	// ActSetEthSrc and ActSetEthDst overwrite an Ethernet address with MAC.
	ActSetEthSrc
	ActSetEthDst
	// ActSetVLANTCI rewrites the TCI of the outermost tag in place (no-op
	// on an untagged frame).
	ActSetVLANTCI
	// ActSet writes every field of one key attribute (Set.Attr) from
	// Set.Value: Open vSwitch's OVS_ACTION_ATTR_SET.
	ActSet
	// ActSetMasked writes the bits of Set.Value that Set.Mask selects:
	// OVS_ACTION_ATTR_SET_MASKED.
	ActSetMasked
	// ActRecirc sets the key's RecircID to Arg and classifies the packet
	// again (re-parsed, metadata kept).
	ActRecirc
	// ActHash sets the key's DPHash to a hash of the packet (Hash picks
	// the algorithm) with basis Arg.
	ActHash
	// ActUserspace sends a copy of the packet to the layer above with
	// Userspace (UserspaceHandler).
	ActUserspace
	// ActClone runs Nested[0] on a copy of the packet; the actions after
	// it see the packet as it was before the clone.
	ActClone
	// ActCheckPktLen runs Nested[0] if the packet is longer than Arg
	// bytes, Nested[1] otherwise.
	ActCheckPktLen
	// ActMeter passes the packet through datapath meter Arg, which drops
	// it when over its rate.
	ActMeter
	// ActTrunc truncates the packet to Arg bytes for the next output.
	ActTrunc
	// ActCT runs the packet through the datapath's connection tracker
	// with CT's arguments (zone, commit, mark, label, nat, helper): Open
	// vSwitch's OVS_ACTION_ATTR_CT. It sets the key's conntrack fields
	// and, under NAT, rewrites the packet.
	ActCT
	// ActCTClear zeroes the key's conntrack fields (ct_state, ct_zone,
	// ct_mark, ct_label, the original tuple): OVS_ACTION_ATTR_CT_CLEAR.
	ActCTClear
)

// KeyAttr names a group of key fields the way Open vSwitch's datapath
// key attributes (OVS_KEY_ATTR_*) group them: a set action writes one
// group.
type KeyAttr uint8

const (
	AttrEthernet KeyAttr = iota + 1 // SrcMAC, DstMAC
	AttrIPv4                        // SrcIPv4, DstIPv4, IPTOS, IPTTL (IPProto, IPFrag read-only)
	AttrIPv6                        // SrcIPv6, DstIPv6, FlowLabel, IPTOS, IPTTL (IPProto, IPFrag read-only)
	AttrTCP                         // SrcPort, DstPort
	AttrUDP                         // SrcPort, DstPort
	AttrSCTP                        // SrcPort, DstPort
	AttrICMP                        // ICMPType, ICMPCode
	AttrICMPv6                      // ICMPType, ICMPCode
	AttrARP                         // SrcIPv4 (sip), DstIPv4 (tip), ARPOp, ARPSHA, ARPTHA
	AttrND                          // NDTarget, ARPSHA (sll), ARPTHA (tll)
	AttrSkbMark                     // PktMark
	AttrPriority                    // SkbPriority
)

// SetField is the argument of ActSet and ActSetMasked: which attribute,
// the new values, and (for a masked set) which bits to write. Only the
// fields of Attr matter; the constructors clear the others.
type SetField struct {
	Attr  KeyAttr
	Value packet.Key
	Mask  packet.Mask
}

// HashAlg is the algorithm of an ActHash action.
type HashAlg uint8

const (
	// HashL4 hashes the 5-tuple (Open vSwitch's OVS_HASH_ALG_L4).
	HashL4 HashAlg = iota
	// HashSymL4 hashes the 5-tuple symmetrically: both directions of a
	// connection get the same hash (OVS_HASH_ALG_SYM_L4).
	HashSymL4
)

// CookieType says what a userspace action's cookie is for, as Open
// vSwitch's enum user_action_cookie_type.
type CookieType uint8

const (
	// CookieUnspec carries only Userdata, opaque to the datapath.
	CookieUnspec CookieType = 0
	// CookieSlowPath marks a flow the layer above must handle itself
	// (SlowPathReasons say why).
	CookieSlowPath CookieType = 2
	// CookieController sends the packet to the OpenFlow controllers.
	CookieController CookieType = 5
)

// Slow path reasons (Open vSwitch's enum slow_path_reason), for
// UserspaceCookie.SlowPathReasons.
const (
	SlowCFM    uint32 = 1 << 0
	SlowBFD    uint32 = 1 << 1
	SlowLACP   uint32 = 1 << 2
	SlowSTP    uint32 = 1 << 3
	SlowLLDP   uint32 = 1 << 4
	SlowAction uint32 = 1 << 5
	SlowMatch  uint32 = 1 << 6
)

// UserspaceCookie is what a userspace action hands back to the layer
// above with the packet, so it can act on a packet that hit a cached
// megaflow (a packet-in, a slow-path protocol) without translating
// again. It is typed, not bytes: the datapath formats it as Open vSwitch
// formats its struct user_action_cookie.
type UserspaceCookie struct {
	Type CookieType
	// InPort is the OpenFlow input port, for the layer above.
	InPort uint32

	// CookieController.
	Reason       uint8 // OpenFlow packet-in reason
	DontSend     bool
	Continuation bool
	RecircID     uint32
	RuleCookie   uint64
	ControllerID uint16
	MaxLen       uint16

	// CookieSlowPath.
	SlowPathReasons uint32

	// Userdata is opaque bytes for the layer above (CookieUnspec),
	// formatted as userdata(hex).
	Userdata []byte
}

// Action is one datapath action. Actions are executed in order on the
// packet; each output sees the packet as modified by the actions before it.
// An empty action list drops the packet, as in Open vSwitch.
//
// Action is a value type; what does not fit in it (a set action's
// fields, a userspace cookie, nested action lists) hangs off pointers
// and slices made when the action is built and never modified after, so
// executing allocates nothing.
type Action struct {
	Kind ActionKind
	Hash HashAlg // ActHash
	TCI  uint16  // ActPushVLAN, ActSetVLANTCI
	// TPID is ActPushVLAN's tag EtherType: 802.1ad (0x88a8) or 802.1Q;
	// zero means 802.1Q.
	TPID uint16
	Port uint32 // ActOutput
	// Arg is ActRecirc's id, ActHash's basis, ActMeter's meter id,
	// ActTrunc's max_len and ActCheckPktLen's size.
	Arg uint32
	MAC [6]byte // ActSetEthSrc, ActSetEthDst

	Set       *SetField        // ActSet, ActSetMasked
	Userspace *UserspaceCookie // ActUserspace
	// CT is ActCT's request, built once with the action and shared
	// read-only by every PMD that executes it.
	CT *conntrack.Request
	// Nested holds ActClone's actions (Nested[0]) and ActCheckPktLen's
	// greater-than (Nested[0]) and less-or-equal (Nested[1]) actions.
	Nested [2]Actions
}

// Actions is an ordered action list. Flows share their list read-only
// with every PMD: never modify one after handing it to the datapath.
type Actions []Action

// Output returns an output(port) action.
func Output(port uint32) Action { return Action{Kind: ActOutput, Port: port} }

// PushVLAN returns a push_vlan action for an 802.1Q tag with tci.
func PushVLAN(tci uint16) Action { return Action{Kind: ActPushVLAN, TCI: tci} }

// PushVLANTag returns a push_vlan action for a tag with EtherType tpid
// (802.1Q or 802.1ad) and tci.
func PushVLANTag(tpid, tci uint16) Action {
	if tpid == packet.EtherTypeVLAN {
		tpid = 0
	}
	return Action{Kind: ActPushVLAN, TPID: tpid, TCI: tci}
}

// pushTPID is the EtherType a push_vlan action's tag gets.
func (a *Action) pushTPID() uint16 {
	if a.TPID == 0 {
		return packet.EtherTypeVLAN
	}
	return a.TPID
}

// PopVLAN returns a pop_vlan action.
func PopVLAN() Action { return Action{Kind: ActPopVLAN} }

// SetEthSrc returns an action rewriting the Ethernet source address.
func SetEthSrc(mac [6]byte) Action { return Action{Kind: ActSetEthSrc, MAC: mac} }

// SetEthDst returns an action rewriting the Ethernet destination address.
func SetEthDst(mac [6]byte) Action { return Action{Kind: ActSetEthDst, MAC: mac} }

// SetVLANTCI returns an action rewriting the outer tag's TCI.
func SetVLANTCI(tci uint16) Action { return Action{Kind: ActSetVLANTCI, TCI: tci} }

// Set returns a set action writing every field of attr from value (the
// attribute's read-only fields, IPProto and IPFrag, are formatted but not
// written).
func Set(attr KeyAttr, value *packet.Key) Action {
	sf := &SetField{Attr: attr}
	full := packet.FullMask()
	copyAttr(attr, &sf.Value, value)
	copyAttr(attr, (*packet.Key)(&sf.Mask), (*packet.Key)(&full))
	return Action{Kind: ActSet, Set: sf}
}

// SetMasked returns a masked set action writing the bits of value that
// mask selects, within attr's fields (other fields of value and mask are
// ignored, so a caller may pass a whole key and the mask of everything it
// changed).
func SetMasked(attr KeyAttr, value *packet.Key, mask *packet.Mask) Action {
	sf := &SetField{Attr: attr}
	copyAttr(attr, (*packet.Key)(&sf.Mask), (*packet.Key)(mask))
	// The value's bits outside the mask are cleared, as Open vSwitch's
	// commit_masked_set_action does, so the action prints as its
	// datapath flows show it.
	copyAttr(attr, &sf.Value, value)
	sf.Value.ApplyMask(&sf.Mask, &sf.Value)
	return Action{Kind: ActSetMasked, Set: sf}
}

// SetPktMark returns set(skb_mark(mark/mask)).
func SetPktMark(mark, mask uint32) Action {
	var k packet.Key
	var m packet.Mask
	k.PktMark, m.PktMark = mark, mask
	return SetMasked(AttrSkbMark, &k, &m)
}

// SetSkbPriority returns set(skb_priority(prio/mask)).
func SetSkbPriority(prio, mask uint32) Action {
	var k packet.Key
	var m packet.Mask
	k.SkbPriority, m.SkbPriority = prio, mask
	return SetMasked(AttrPriority, &k, &m)
}

// Recirc returns a recirc(id) action.
func Recirc(id uint32) Action { return Action{Kind: ActRecirc, Arg: id} }

// Hash returns a hash(alg(basis)) action.
func Hash(alg HashAlg, basis uint32) Action { return Action{Kind: ActHash, Hash: alg, Arg: basis} }

// Userspace returns a userspace action handing the packet and a copy of
// cookie to the UserspaceHandler.
func Userspace(cookie UserspaceCookie) Action {
	c := cookie
	if c.Userdata != nil {
		c.Userdata = append([]byte(nil), c.Userdata...)
	}
	return Action{Kind: ActUserspace, Userspace: &c}
}

// Clone returns a clone(actions) action. actions is copied.
func Clone(actions Actions) Action {
	return Action{Kind: ActClone, Nested: [2]Actions{cloneActions(actions)}}
}

// CheckPktLen returns check_pkt_len(size=size,gt(gt),le(le)). gt and le
// are copied.
func CheckPktLen(size uint16, gt, le Actions) Action {
	return Action{Kind: ActCheckPktLen, Arg: uint32(size), Nested: [2]Actions{cloneActions(gt), cloneActions(le)}}
}

// Meter returns a meter(id) action.
func Meter(id uint32) Action { return Action{Kind: ActMeter, Arg: id} }

// Trunc returns a trunc(maxLen) action.
func Trunc(maxLen uint32) Action { return Action{Kind: ActTrunc, Arg: maxLen} }

// CT returns a ct action with req's arguments. req is copied (its NAT
// clause too), so the caller may reuse it; the tracker only reads it.
func CT(req conntrack.Request) Action {
	r := req
	if r.NAT != nil {
		n := *r.NAT
		r.NAT = &n
	}
	if r.Force {
		r.Commit = true // force_commit commits, as in Open vSwitch's datapath
	}
	return Action{Kind: ActCT, CT: &r}
}

// CTClear returns a ct_clear action.
func CTClear() Action { return Action{Kind: ActCTClear} }

// cloneActions copies a list so the caller may reuse its slice; nested
// lists are shared (they are immutable once built).
func cloneActions(as Actions) Actions {
	if as == nil {
		return Actions{}
	}
	return append(Actions(nil), as...)
}

// copyAttr copies attr's fields from src to dst.
func copyAttr(attr KeyAttr, dst, src *packet.Key) {
	switch attr {
	case AttrEthernet:
		dst.SrcMAC, dst.DstMAC = src.SrcMAC, src.DstMAC
	case AttrIPv4:
		dst.SrcIPv4, dst.DstIPv4 = src.SrcIPv4, src.DstIPv4
		dst.IPProto, dst.IPTOS, dst.IPTTL, dst.IPFrag = src.IPProto, src.IPTOS, src.IPTTL, src.IPFrag
	case AttrIPv6:
		dst.SrcIPv6, dst.DstIPv6, dst.FlowLabel = src.SrcIPv6, src.DstIPv6, src.FlowLabel
		dst.IPProto, dst.IPTOS, dst.IPTTL, dst.IPFrag = src.IPProto, src.IPTOS, src.IPTTL, src.IPFrag
	case AttrTCP, AttrUDP, AttrSCTP:
		dst.SrcPort, dst.DstPort = src.SrcPort, src.DstPort
	case AttrICMP, AttrICMPv6:
		dst.ICMPType, dst.ICMPCode = src.ICMPType, src.ICMPCode
	case AttrARP:
		dst.SrcIPv4, dst.DstIPv4, dst.ARPOp = src.SrcIPv4, src.DstIPv4, src.ARPOp
		dst.ARPSHA, dst.ARPTHA = src.ARPSHA, src.ARPTHA
	case AttrND:
		dst.NDTarget, dst.ARPSHA, dst.ARPTHA = src.NDTarget, src.ARPSHA, src.ARPTHA
	case AttrSkbMark:
		dst.PktMark = src.PktMark
	case AttrPriority:
		dst.SkbPriority = src.SkbPriority
	}
}

// Equal reports whether two action lists do the same: same actions in
// the same order, set values, cookies and nested lists compared by
// value (a re-translated list has new pointers). The revalidator uses it
// to decide whether a flow needs FlowModify.
func (as Actions) Equal(bs Actions) bool {
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		if !as[i].Equal(&bs[i]) {
			return false
		}
	}
	return true
}

// Equal reports whether two actions do the same (see Actions.Equal).
func (a *Action) Equal(b *Action) bool {
	if a.Kind != b.Kind || a.Hash != b.Hash || a.TCI != b.TCI || a.TPID != b.TPID || a.Port != b.Port || a.Arg != b.Arg || a.MAC != b.MAC {
		return false
	}
	if (a.CT == nil) != (b.CT == nil) || a.CT != nil && !ctRequestEqual(a.CT, b.CT) {
		return false
	}
	if (a.Set == nil) != (b.Set == nil) || a.Set != nil && *a.Set != *b.Set {
		return false
	}
	if (a.Userspace == nil) != (b.Userspace == nil) || a.Userspace != nil && !a.Userspace.equal(b.Userspace) {
		return false
	}
	return a.Nested[0].Equal(b.Nested[0]) && a.Nested[1].Equal(b.Nested[1])
}

func (c *UserspaceCookie) equal(d *UserspaceCookie) bool {
	return c.Type == d.Type && c.InPort == d.InPort && c.Reason == d.Reason && c.DontSend == d.DontSend &&
		c.Continuation == d.Continuation && c.RecircID == d.RecircID && c.RuleCookie == d.RuleCookie &&
		c.ControllerID == d.ControllerID && c.MaxLen == d.MaxLen && c.SlowPathReasons == d.SlowPathReasons &&
		string(c.Userdata) == string(d.Userdata)
}

// ctRequestEqual compares two ct requests by value, the NAT clause
// included.
func ctRequestEqual(a, b *conntrack.Request) bool {
	x, y := *a, *b
	x.NAT, y.NAT = nil, nil
	if x != y {
		return false
	}
	if (a.NAT == nil) != (b.NAT == nil) {
		return false
	}
	return a.NAT == nil || *a.NAT == *b.NAT
}
