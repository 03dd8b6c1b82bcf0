package connmgr

// STAND-IN: the decoded OpenFlow messages belong to package ofproto/ofp
// (helper "ofp"), which is not on main yet. Each name below becomes an
// alias of ofp's type of the same meaning (type FlowMod = ofp.FlowMod, ...)
// once it is; code implementing Bridge should name them through this
// package (connmgr.FlowMod) or through ofp after the switch, never rely on
// these empty bodies.
type (
	SwitchFeatures     struct{ standin }
	DescStats          struct{ standin }
	PortDesc           struct{ standin }
	FlowMod            struct{ standin }
	GroupMod           struct{ standin }
	MeterMod           struct{ standin }
	PortMod            struct{ standin }
	TableMod           struct{ standin }
	PacketOut          struct{ standin }
	Resume             struct{ standin }
	FlowStatsRequest   struct{ standin }
	FlowStats          struct{ standin }
	AggregateStats     struct{ standin }
	TableStats         struct{ standin }
	TableFeatures      struct{ standin }
	TableDesc          struct{ standin }
	PortStats          struct{ standin }
	QueueStats         struct{ standin }
	GroupStats         struct{ standin }
	GroupDesc          struct{ standin }
	GroupFeatures      struct{ standin }
	MeterStats         struct{ standin }
	MeterConfig        struct{ standin }
	MeterFeatures      struct{ standin }
	TLVTableMod        struct{ standin }
	TLVTableReply      struct{ standin }
	FlowMonitorRequest struct{ standin }
	FlowUpdate         struct{ standin }
	PacketIn           struct{ standin }
	FlowRemoved        struct{ standin }
)

type standin struct{}
