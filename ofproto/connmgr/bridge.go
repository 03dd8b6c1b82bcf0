package connmgr

import (
	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
)

// Bridge is what the connection layer asks of one OpenFlow switch: Open
// vSwitch's ofproto as handle_openflow sees it. Package ofproto (the
// core) implements it; connmgrtest.Bridge fakes it.
//
// Requests and replies are the decoded, version-independent messages of
// package ofproto/ofp: the Manager decodes each request in its
// connection's version and encodes the replies (split into multipart
// messages with REPLY_MORE as needed). A method's error goes back to the
// requester as an OpenFlow error: an ofperr.Error as is (its type/code
// for the connection's version), any other error as OFPBRC_EPERM.
// Modifying methods get the Origin of the request (flow monitor updates
// a connection caused are abbreviated for it).
//
// Contract: the Manager calls these methods from its one dispatch
// goroutine, never concurrently with each other; they may run
// concurrently with the datapath and the bridge's own goroutines. They
// may call the Events methods (which never block), never another Manager
// method.
type Bridge interface {
	// Features is the FEATURES_REPLY without its ports (the Manager adds
	// PortDescs for OpenFlow 1.0-1.2): datapath id, n_buffers (0),
	// n_tables, capabilities as Open vSwitch's version-independent
	// OFPUTIL_C_* bits (CapFlowStats..., which the Manager encodes per
	// version, adding CapBundles), OpenFlow 1.0 actions.
	Features() ofp.FeaturesReply
	// Desc is the DESC reply.
	Desc() ofp.DescReply
	// PortDescs describes every port, LOCAL included, in port-number
	// order (PORT_DESC, and the ports of a 1.0-1.2 FEATURES_REPLY).
	PortDescs() []ofp.Port
	// FragHandling and SetFragHandling are the switch's fragment
	// handling (ofp.FragNormal...): GET_CONFIG/SET_CONFIG. SetFragHandling
	// returns an error for a mode it does not implement (the Manager logs
	// it and keeps the old mode, as Open vSwitch).
	FragHandling() uint16
	SetFragHandling(mode uint16) error

	// FlowMod: TableID is ofp.TableAll for an OpenFlow 1.0/Nicira flow
	// mod when the connection has not enabled NXT_FLOW_MOD_TABLE_ID.
	FlowMod(fm *ofp.FlowMod, o Origin) error
	GroupMod(gm *ofp.GroupMod, o Origin) error
	MeterMod(mm *ofp.MeterMod) error
	PortMod(pm *ofp.PortMod) error
	TableMod(tm *ofp.TableMod) error
	// PacketOut runs a packet through the pipeline (in_port may be
	// CONTROLLER or LOCAL).
	PacketOut(po *ofp.PacketOut, o Origin) error
	// Resume continues a translation paused by controller(pause)
	// (NXT_RESUME).
	Resume(r *ofp.Resume, o Origin) error

	// CommitBundle applies msgs (FLOW_MOD, GROUP_MOD, PORT_MOD,
	// PACKET_OUT, in order) all or nothing, as Open vSwitch's
	// do_bundle_commit: no lookup ever sees part of the flow and group
	// changes; with BundleAtomic a PORT_MOD fails the commit (port mods
	// are not atomic). On failure nothing stays applied, and failed is
	// the index of the message whose error err is (the Manager sends
	// that error for the BUNDLE_ADD_MESSAGE that carried it, then
	// OFPBFC_MSG_FAILED for the commit).
	CommitBundle(msgs []BundleMsg, flags uint16, o Origin) (failed int, err error)

	// Statistics. A request naming a table, port, group or meter that
	// does not exist gets the error Open vSwitch sends. Replies are
	// whole.
	FlowStats(req *ofp.FlowStatsRequest) ([]ofp.FlowStats, error)
	AggregateStats(req *ofp.FlowStatsRequest) (ofp.AggregateReply, error)
	TableStats() []ofp.TableStats
	// TableFeatures is the TABLE_FEATURES reply: every visible table. A
	// request that changes features goes to a bridge that also
	// implements TableFeaturesSetter; others refuse it with
	// OFPTFFC_EPERM.
	TableFeatures() []ofp.TableFeatures
	TableDescs() []ofp.TableDesc
	PortStats(port uint32) ([]ofp.PortStats, error) // mf.PortNone: every port
	// QueueStats: mf.PortNone and ofp.QueueAll select every port and
	// queue.
	QueueStats(port, queue uint32) ([]ofp.QueueStats, error)
	GroupStats(group uint32) ([]ofp.GroupStats, error) // ofp.GroupAll: all
	GroupDescs(group uint32) []ofp.GroupDesc
	GroupFeatures() ofp.GroupFeaturesReply
	MeterStats(meter uint32) ([]ofp.MeterStats, error) // ofp.MeterAll: all
	MeterConfigs(meter uint32) ([]ofp.MeterConfig, error)
	MeterFeatures() ofp.MeterFeaturesReply

	// TLVTableMod and TLVTable: tunnel metadata field mappings
	// (NXT_TLV_TABLE_MOD / REQUEST).
	TLVTableMod(m *ofp.TLVTableMod) error
	TLVTable() ofp.TLVTableReply
	// CTFlushZone flushes a conntrack zone (NXT_CT_FLUSH_ZONE). A bridge
	// that also implements CTFlusher gets NXT_CT_FLUSH; others answer it
	// with OFPBRC_BAD_TYPE (advertise Datapath capability ct_flush only
	// with it).
	CTFlushZone(zone uint16) error

	// FlushFlows deletes every flow of every table (Open vSwitch's
	// ofproto_flush__), without flow-removed messages. The Manager calls
	// it when the presence of controllers or the fail mode changes, then
	// adds back the flows it owns.
	FlushFlows()
	// AddNormalFlow adds or replaces, in table 0, a flow the switch owns
	// (Open vSwitch's ofproto_add_flow): match everything, output to
	// NORMAL, at priority: 0 for the standalone default flow, 0xf0f0f0
	// (above OpenFlow's 16 bits: hidden from OpenFlow) for fail-open.
	// DeleteFlow removes such a flow (m nil: match everything).
	AddNormalFlow(priority uint32)
	DeleteFlow(m *mf.Match, priority uint32)

	// MonitorFlows lists the current flows the monitors of req concern
	// (their table, out port and group, and their match loosely: what
	// MonitorMatches accepts), with actions, for OFPFMF_INITIAL. Hidden
	// flows (priority above 0xffff) are never listed. The Manager sets
	// the event and drops the actions monitors did not ask for.
	MonitorFlows(req *ofp.FlowMonitorRequest) []ofp.FlowUpdate
}

// TableFeaturesSetter is implemented by a Bridge that lets a
// TABLE_FEATURES request change its tables (Open vSwitch's
// handle_table_features_change, with its errors).
type TableFeaturesSetter interface {
	SetTableFeatures(tables []ofp.TableFeatures) error
}

// PortModFrom is implemented by a Bridge that wants to know which
// connection a PORT_MOD came from, so that its PortChanged can name it
// (connections before OpenFlow 1.5 do not hear of their own port mods).
type PortModFrom interface {
	PortModFrom(pm *ofp.PortMod, o Origin) error
}

// CTFlusher is implemented by a Bridge that flushes the conntrack
// entries of a zone matching NXT_CT_FLUSH's tuples.
type CTFlusher interface {
	CTFlush(m *ofp.CTFlush) error
}

// Origin identifies the connection and request behind a modification.
type Origin struct {
	Conn uint64 // the Manager's id of the connection; 0 for the switch itself
	XID  uint32
}

// BundleMsg is one message of a bundle: exactly one field is set.
type BundleMsg struct {
	FlowMod   *ofp.FlowMod
	GroupMod  *ofp.GroupMod
	PortMod   *ofp.PortMod
	PacketOut *ofp.PacketOut
	// Prepared is the bridge's own form of the message, which its
	// BundlePreparer made when the message was added (the field it came
	// from is then nil).
	Prepared any
}

// BundlePreparer is an optional Bridge method, called as each message is
// added to a bundle (on the dispatcher): the bridge may replace the
// message by its own form in msg.Prepared (Open vSwitch builds an added
// flow's rule at that point), which CommitBundle gets back, so that a
// bundle of many flows stages one copy of each. It leaves msg alone when
// it does not prepare it; errors stay CommitBundle's.
type BundlePreparer interface {
	PrepareBundleMsg(msg *BundleMsg)
}

// Bundle flags (OFPBF_*).
const (
	BundleAtomic  = ofp.BundleAtomic
	BundleOrdered = ofp.BundleOrdered
)

// Events is how a bridge reports asynchronous messages: the Manager
// implements it. Every method returns at once (the message is queued for
// the dispatcher, which sends it to the connections whose role, async
// config and miss_send_len ask for it, in each one's format); the bridge
// may call them from any goroutine.
type Events interface {
	// PacketIn is a packet for the controllers with controller id 0;
	// PacketInTo for those with controllerID (controller(id=N)). The
	// packet is whole (Open vSwitch buffers nothing, so it sends packets
	// whole whatever max_len says; Format and BufferID are the
	// Manager's); Reason is as the pipeline knows it (ReasonExplicitMiss
	// and ReasonImplicitMiss included: each connection gets it as its
	// version says).
	PacketIn(pin *ofp.PacketIn)
	PacketInTo(controllerID uint16, pin *ofp.PacketIn)
	FlowRemoved(fr *ofp.FlowRemoved)
	// PortStatus: a port was added, deleted or modified
	// (ofp.PortReasonAdd...). PortChanged says more, for Open vSwitch's
	// rules: old is the description before a modification (nil
	// otherwise), and a modification that changes nothing a connection
	// would see is not sent to it; o is the PORT_MOD's origin for a
	// change it caused (zero otherwise), and connections before OpenFlow
	// 1.5 do not hear of their own port mods.
	PortStatus(reason uint8, desc *ofp.Port)
	PortChanged(reason uint8, old, desc *ofp.Port, o Origin)
	// FlowMonitor reports a flow added, modified or removed (u.Event) to
	// the matching flow monitors (ofmonitor_report); a change connection
	// o.Conn caused is reported to it abbreviated, unless its monitor
	// asked for its own changes in full. Hidden flows are not reported.
	// FlowChanged is the same with the flow's outputs, which monitors on
	// an out port or group need (FlowMonitor's updates reach them all).
	FlowMonitor(u *ofp.FlowUpdate, o Origin)
	FlowChanged(fc *FlowChange, o Origin)
	// ControllerConnected reports whether a primary controller is
	// connected and admitted.
	ControllerConnected() bool
	// WantsPacketInOnMiss is connmgr_wants_packet_in_on_miss: some
	// connection with controller id 0 speaks OpenFlow 1.0-1.2 (or an
	// active controller is configured but not connected), so a table
	// miss sends the packet to the controller as those versions do.
	// Cheap (an atomic load); any goroutine.
	WantsPacketInOnMiss() bool
}

// FlowChange is a flow added, modified or removed, for flow monitors.
type FlowChange struct {
	// Update is the flow as the update reports it: Event
	// (ofp.UpdateAdded, UpdateModified, UpdateRemoved), Reason (the
	// flow-removed reason of a removal), table, cookie, priority,
	// timeouts, match and actions. The Manager leaves out the actions
	// for monitors without ofp.MonitorInstructions.
	Update ofp.FlowUpdate
	// OutputsTo reports whether the flow's actions (or, for a
	// modification, its old actions) output to port (mf.PortNone: any
	// port) and to group (ofp.GroupAny: any group), as Open vSwitch's
	// ofproto_rule_has_out_port/has_out_group; nil means they always do.
	// It is called on the dispatcher goroutine after FlowChanged returned:
	// it must only read what it captured.
	OutputsTo func(port, group uint32) bool
}
