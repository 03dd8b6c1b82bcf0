package connmgr

import "gvs/ofproto/ofp"

// Role is a connection's controller role (OFPCR12_ROLE_*).
type Role uint32

const (
	RoleNoChange Role = 0
	RoleEqual    Role = 1
	RoleMaster   Role = 2 // OVS 3.1: OFPCR12_ROLE_PRIMARY
	RoleSlave    Role = 3 // OFPCR12_ROLE_SECONDARY
)

// String is the Controller.role column's value for the role.
func (r Role) String() string {
	switch r {
	case RoleMaster:
		return "master"
	case RoleSlave:
		return "slave"
	}
	return "other"
}

// Asynchronous message types: indexes into AsyncConfig's masks (Open
// vSwitch's OAM_*).
const (
	AsyncPacketIn       = ofp.AsyncPacketIn
	AsyncPortStatus     = ofp.AsyncPortStatus
	AsyncFlowRemoved    = ofp.AsyncFlowRemoved
	AsyncRoleStatus     = ofp.AsyncRoleStatus
	AsyncTableStatus    = ofp.AsyncTableStatus
	AsyncRequestForward = ofp.AsyncRequestForward
)

// Packet-in reasons as bits of AsyncConfig masks (OFPR_*), with Open
// vSwitch's two internal miss reasons, which the bridge may report and
// each connection gets as its version knows them (wireReason).
const (
	ReasonNoMatch            = ofp.ReasonNoMatch
	ReasonAction             = ofp.ReasonAction
	ReasonInvalidTTL         = ofp.ReasonInvalidTTL
	ReasonActionSet          = ofp.ReasonActionSet
	ReasonGroup              = ofp.ReasonGroup
	ReasonPacketOut          = ofp.ReasonPacketOut
	ReasonExplicitMiss uint8 = 6
	ReasonImplicitMiss uint8 = 7

	pin10Bits       = 1<<ReasonNoMatch | 1<<ReasonAction | 1<<ReasonInvalidTTL
	pin14ActionBits = 1<<ReasonActionSet | 1<<ReasonGroup | 1<<ReasonPacketOut
	pin14Bits       = pin10Bits | pin14ActionBits

	portReasonBits = 1<<0 | 1<<1 | 1<<2 // OFPPR_ADD, DELETE, MODIFY

	flowRemoved10Bits = 1<<0 | 1<<1 | 1<<2              // IDLE, HARD, DELETE
	flowRemoved13Bits = flowRemoved10Bits | 1<<3        // GROUP_DELETE
	flowRemoved14Bits = flowRemoved13Bits | 1<<4 | 1<<5 // METER_DELETE, EVICTION
)

// AsyncConfig says which asynchronous messages, by reason, a connection
// wants as master (or equal) and as slave: Open vSwitch's struct
// ofputil_async_cfg.
type AsyncConfig = ofp.AsyncConfig

// DefaultAsyncConfig is ofputil_async_cfg_default: every packet-in
// reason but invalid TTL (the OF1.4 action reasons are refinements of
// OFPR_ACTION, so on always), flow-removed for the version's reasons to
// masters, port status to everyone.
func DefaultAsyncConfig(version uint8) AsyncConfig {
	pin := uint32(pin14Bits&^(1<<ReasonInvalidTTL)) | 1<<ReasonExplicitMiss
	if version <= OF12 {
		pin |= 1 << ReasonImplicitMiss
	}
	var ac AsyncConfig
	ac.Primary[AsyncPacketIn] = pin
	ac.Primary[AsyncPortStatus] = portReasonBits
	ac.Secondary[AsyncPortStatus] = portReasonBits
	switch {
	case version >= OF14:
		ac.Primary[AsyncFlowRemoved] = flowRemoved14Bits
	case version == OF13:
		ac.Primary[AsyncFlowRemoved] = flowRemoved13Bits
	default:
		ac.Primary[AsyncFlowRemoved] = flowRemoved10Bits
	}
	return ac
}

// defaultMissSendLen is OFP_DEFAULT_MISS_SEND_LEN.
const defaultMissSendLen = 128

// connState is the per-connection OpenFlow state Open vSwitch keeps in
// struct ofconn. Only the Manager's dispatcher touches it.
type connState struct {
	role        Role
	asyncSet    bool // async was set explicitly (SET_ASYNC)
	async       AsyncConfig
	missSendLen int
	controller  uint16 // NXT_SET_CONTROLLER_ID
	pinFormat   uint8  // ofp.PacketInStandard, PacketInNXT, PacketInNXT2
	flowFormat  uint32 // ofp.FlowFormatOpenFlow10 or FlowFormatNXM (OpenFlow 1.0)
	// flowModTableID: NXT_FLOW_MOD_TABLE_ID enabled (OF1.0 flow mods
	// carry a table id in the command's high byte).
	flowModTableID bool
	bundles        map[uint32]*bundle
	monitors       map[uint32]*flowMonitor
}

func (s *connState) init(typ ConnType) {
	s.role = RoleEqual
	if typ == Primary {
		s.missSendLen = defaultMissSendLen
	}
	s.bundles = map[uint32]*bundle{}
	s.monitors = map[uint32]*flowMonitor{}
}

// asyncConfig is ofconn_get_async_config.
func (c *ofconn) asyncConfig() AsyncConfig {
	if c.state.asyncSet {
		return c.state.async
	}
	if !c.svc.cfg.asyncEnabled() {
		return AsyncConfig{}
	}
	return DefaultAsyncConfig(c.version)
}

// setAsyncConfig is ofconn_set_async_config: before OF1.4 the action
// reason implies its OF1.4 refinements.
func (c *ofconn) setAsyncConfig(ac AsyncConfig) {
	if c.version < OF14 {
		if ac.Primary[AsyncPacketIn]&(1<<ReasonAction) != 0 {
			ac.Primary[AsyncPacketIn] |= pin14ActionBits
		}
		if ac.Secondary[AsyncPacketIn]&(1<<ReasonAction) != 0 {
			ac.Secondary[AsyncPacketIn] |= pin14ActionBits
		}
	}
	c.state.async, c.state.asyncSet = ac, true
}

// receivesAsync is ofconn_receives_async_msg.
func (c *ofconn) receivesAsync(typ int, reason uint8) bool {
	if c.typ == Service && c.state.missSendLen == 0 {
		return false
	}
	ac := c.asyncConfig()
	masks := &ac.Primary
	if c.state.role == RoleSlave {
		masks = &ac.Secondary
	}
	return masks[typ]&(1<<reason) != 0
}
