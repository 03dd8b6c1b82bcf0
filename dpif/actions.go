package dpif

import (
	"fmt"
	"net"
	"strings"
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
)

// Action is one datapath action. Actions are executed in order on the
// packet; each output sees the packet as modified by the actions before it.
// An empty action list drops the packet, as in Open vSwitch.
//
// Action is a small value type with no pointers, so an Actions slice is
// one allocation made when the flow is installed and none when executed.
type Action struct {
	Kind ActionKind
	TCI  uint16 // ActPushVLAN, ActSetVLANTCI
	Port uint32 // ActOutput
	MAC  [6]byte
}

// Actions is an ordered action list. Flows share their list read-only
// with every PMD: never modify one after handing it to the datapath.
type Actions []Action

// Output returns an output(port) action.
func Output(port uint32) Action { return Action{Kind: ActOutput, Port: port} }

// PushVLAN returns a push_vlan action for an 802.1Q tag with tci.
func PushVLAN(tci uint16) Action { return Action{Kind: ActPushVLAN, TCI: tci} }

// PopVLAN returns a pop_vlan action.
func PopVLAN() Action { return Action{Kind: ActPopVLAN} }

// SetEthSrc returns an action rewriting the Ethernet source address.
func SetEthSrc(mac [6]byte) Action { return Action{Kind: ActSetEthSrc, MAC: mac} }

// SetEthDst returns an action rewriting the Ethernet destination address.
func SetEthDst(mac [6]byte) Action { return Action{Kind: ActSetEthDst, MAC: mac} }

// SetVLANTCI returns an action rewriting the outer tag's TCI.
func SetVLANTCI(tci uint16) Action { return Action{Kind: ActSetVLANTCI, TCI: tci} }

// String formats an action the way ovs-dpctl dump-flows does.
func (a Action) String() string {
	switch a.Kind {
	case ActOutput:
		return fmt.Sprint(a.Port)
	case ActPushVLAN:
		return fmt.Sprintf("push_vlan(vid=%d,pcp=%d)", a.TCI&0x0fff, a.TCI>>13)
	case ActPopVLAN:
		return "pop_vlan"
	case ActSetEthSrc:
		return fmt.Sprintf("set(eth(src=%s))", net.HardwareAddr(a.MAC[:]))
	case ActSetEthDst:
		return fmt.Sprintf("set(eth(dst=%s))", net.HardwareAddr(a.MAC[:]))
	case ActSetVLANTCI:
		return fmt.Sprintf("set(vlan(vid=%d,pcp=%d))", a.TCI&0x0fff, a.TCI>>13)
	}
	return fmt.Sprintf("unknown(%d)", a.Kind)
}

// String formats the list as "a,b,c", or "drop" when empty.
func (as Actions) String() string {
	if len(as) == 0 {
		return "drop"
	}
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.String()
	}
	return strings.Join(parts, ",")
}

// lastOutput returns the index of the last output action, or -1. The packet
// itself (not a copy) goes to that output when nothing follows it that
// would need the packet again.
func (as Actions) lastOutput() int {
	for i := len(as) - 1; i >= 0; i-- {
		if as[i].Kind == ActOutput {
			return i
		}
	}
	return -1
}
