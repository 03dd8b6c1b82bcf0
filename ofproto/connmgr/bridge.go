package connmgr

import (
	"gvs/ofproto/mf"
)

// Bridge is what the connection layer asks of one OpenFlow switch: Open
// vSwitch's ofproto as handle_openflow sees it. Helper package ofproto
// (the core) implements it; fakeBridge in this package's tests fakes it.
//
// The requests and replies are the decoded OpenFlow messages of package
// ofproto/ofp, version independent (the Manager decodes and encodes per
// connection version). A method's error is returned to the requester as an
// OpenFlow error: an ofperr.Error is sent as is (its wire type/code for the
// connection's version), any other error as OFPBRC_EPERM, logged. Modifying methods get the Origin of the request (flow monitor
// updates caused by a connection are abbreviated for it).
//
// Contract: the Manager calls these methods from its one dispatch
// goroutine, never concurrently with each other; they may run
// concurrently with the datapath and with the bridge's own goroutines. A
// method must not call back into the Manager synchronously except
// through the Events methods (which never block).
type Bridge interface {
	// Features is the FEATURES_REPLY minus the ports (datapath id,
	// n_buffers, n_tables, auxiliary id, capabilities, OF1.0 actions).
	Features() SwitchFeatures
	// Desc is the DESC stats reply (mfr, hw, sw, serial, dp_desc).
	Desc() DescStats
	// PortDescs describes every port, LOCAL included, in port-number order
	// (PORT_DESC reply, and the ports of an OF1.0-1.2 FEATURES_REPLY).
	PortDescs() []PortDesc
	// FragHandling / SetFragHandling: the switch config's OFPC_FRAG_* mode
	// (GET_CONFIG/SET_CONFIG; miss_send_len is per connection and stays
	// here). SetFragHandling returns OFPSCFC_BAD_FLAGS for a mode the
	// switch does not implement.
	FragHandling() uint16
	SetFragHandling(mode uint16) error

	FlowMod(fm *FlowMod, o Origin) error
	GroupMod(gm *GroupMod, o Origin) error
	MeterMod(mm *MeterMod) error
	PortMod(pm *PortMod) error
	TableMod(tm *TableMod) error
	// PacketOut runs a packet through the pipeline (in_port may be
	// CONTROLLER or LOCAL).
	PacketOut(po *PacketOut, o Origin) error
	// Resume continues a paused translation (NXT_RESUME).
	Resume(r *Resume, o Origin) error

	// CommitBundle applies msgs (FLOW_MOD, GROUP_MOD, PORT_MOD, PACKET_OUT)
	// all or nothing, as Open vSwitch's do_bundle_commit: with
	// BundleAtomic set no lookup ever sees part of the bundle. On failure
	// nothing was applied and failed is the index of the message whose
	// error err is (the Manager sends that error for it, then
	// OFPBFC_MSG_FAILED for the commit).
	CommitBundle(msgs []BundleMsg, flags uint16, o Origin) (failed int, err error)

	// Statistics. A request for a table, port, group or meter that does
	// not exist returns the error Open vSwitch sends (OFPBRC_BAD_TABLE_ID,
	// OFPQOFC_BAD_PORT, ...). Replies are whole: the Manager splits them
	// into multipart messages with REPLY_MORE.
	FlowStats(req *FlowStatsRequest) ([]FlowStats, error)
	AggregateStats(req *FlowStatsRequest) (AggregateStats, error)
	TableStats() []TableStats
	TableFeatures() []TableFeatures
	TableDescs() []TableDesc
	PortStats(port uint32) ([]PortStats, error) // port mf.PortNone: all
	QueueStats(port, queue uint32) ([]QueueStats, error)
	GroupStats(group uint32) ([]GroupStats, error) // OFPG_ALL: all
	GroupDescs(group uint32) []GroupDesc
	GroupFeatures() GroupFeatures
	MeterStats(meter uint32) ([]MeterStats, error) // OFPM_ALL: all
	MeterConfigs(meter uint32) ([]MeterConfig, error)
	MeterFeatures() MeterFeatures

	// TLVTableMod and TLVTable: the tunnel metadata field mappings
	// (NXT_TLV_TABLE_MOD / REQUEST).
	TLVTableMod(m *TLVTableMod) error
	TLVTable() TLVTableReply
	// CTFlushZone flushes a conntrack zone (NXT_CT_FLUSH_ZONE).
	CTFlushZone(zone uint16) error

	// FlushFlows deletes every flow of every table (Open vSwitch's
	// ofproto_flush__), without flow-removed messages. The Manager calls
	// it when the presence of controllers or the fail mode changes, then
	// adds back the flows it owns (the standalone default flow).
	FlushFlows()
	// AddFlow adds or replaces, in table 0, a flow the switch itself owns
	// (Open vSwitch's ofproto_add_flow): match everything and output to
	// NORMAL, at priority (above 0xffff for hidden flows, which OpenFlow
	// never sees: fail-open uses 0xf0f0f0). DeleteFlow removes it.
	AddNormalFlow(priority uint32)
	DeleteFlow(m *mf.Match, priority uint32)

	// MonitorFlows lists the current flows a new flow monitor with
	// OFPFMF_INITIAL reports (NXST_FLOW_MONITOR / OF1.4 flow monitor).
	MonitorFlows(req *FlowMonitorRequest) []FlowUpdate
}

// Origin identifies the connection and request behind a modification.
type Origin struct {
	Conn uint64 // the Manager's id of the connection; 0 for the switch itself
	XID  uint32
}

// BundleMsg is one message of a bundle: exactly one field is set.
type BundleMsg struct {
	FlowMod   *FlowMod
	GroupMod  *GroupMod
	PortMod   *PortMod
	PacketOut *PacketOut
}

// Bundle flags (OFPBF_*).
const (
	BundleAtomic  uint16 = 1 << 0
	BundleOrdered uint16 = 1 << 1
)

// Events is how a bridge reports asynchronous messages to its
// controllers: the Manager implements it (compile-time check in
// manager.go). Every method returns at once: the message is queued per
// connection (packet-ins are dropped when a connection's queue is full,
// counted, as Open vSwitch's pinsched does) and sent by the connection's
// goroutine to the connections whose role, async config and miss_send_len
// ask for it, in each connection's packet-in format.
type Events interface {
	// PacketIn: a packet to the controller (miss, action, invalid ttl,
	// with continuation when the action paused). ControllerID selects the
	// connections (controller(id=N)); 0 is the default.
	PacketIn(pin *PacketIn)
	FlowRemoved(fr *FlowRemoved)
	// PortStatus: a port was added, deleted or modified (reason
	// OFPPR_ADD/DELETE/MODIFY).
	PortStatus(reason uint8, desc *PortDesc)
	// FlowMonitor reports a flow change to the flow monitors that match
	// it; an update caused by connection o.Conn is abbreviated for it.
	FlowMonitor(u *FlowUpdate, o Origin)
	// ControllerConnected reports whether any primary controller is
	// connected and admitted (fail-open and NORMAL's behaviour use it).
	ControllerConnected() bool
}
