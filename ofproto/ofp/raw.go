package ofp

import (
	"encoding/binary"
	"fmt"

	"gvs/ofproto/ofperr"
)

// OpenFlow versions (ofp_header.version).
const (
	Version10 uint8 = 0x01
	Version11 uint8 = 0x02
	Version12 uint8 = 0x03
	Version13 uint8 = 0x04
	Version14 uint8 = 0x05
	Version15 uint8 = 0x06

	MinVersion = Version10
	MaxVersion = Version15
)

// VersionName is "OpenFlow10" ... "OpenFlow15" (ovs-ofctl's -O names),
// or "" for versions gvs does not speak.
func VersionName(v uint8) string {
	if v < MinVersion || v > MaxVersion {
		return ""
	}
	return fmt.Sprintf("OpenFlow1%d", v-1)
}

// Experimenter (vendor) ids of the extensions gvs speaks.
const (
	VendorNX  uint32 = 0x00002320 // Nicira
	VendorONF uint32 = 0x4f4e4600 // Open Networking Foundation
	VendorNTR uint32 = 0x0000154d // Netronome (group selection method)
)

// Header type numbers that select a secondary header.
const (
	typeVendor         = 4  // OFPT_VENDOR / OFPT11_EXPERIMENTER
	type10StatsRequest = 16 // OpenFlow 1.0
	type10StatsReply   = 17
	type11StatsRequest = 18 // OpenFlow 1.1+ (OFPT_MULTIPART_*)
	type11StatsReply   = 19
	statVendor         = 0xffff
)

// StatsFlagReplyMore (OFPSF_REPLY_MORE) marks a multipart reply that more
// replies to the same request follow.
const StatsFlagReplyMore uint16 = 1

// Raw is one wire form of a message, as Open vSwitch's enum ofpraw: the
// header type, plus the statistics type or the experimenter and subtype,
// in a range of versions. Its String is Open vSwitch's name without the
// OFPRAW_ prefix (e.g. "OFPT11_FLOW_MOD", "NXT_PACKET_IN2").
type Raw uint16

type hdrKind uint8

const (
	kindT   hdrKind = iota // ofp_header
	kindVT                 // ofp_vendor_header: experimenter, subtype
	kindST                 // statistics (multipart) request/reply
	kindVST                // experimenter statistics
)

type rawInfo struct {
	name     string
	v1, v2   uint8
	kind     hdrKind
	typ      uint8  // kindT: OFPT type
	reply    bool   // kindST/kindVST: reply (else request)
	stat     uint16 // kindST: statistics type
	vendor   uint32 // kindVT/kindVST
	subtype  uint32 // kindVT/kindVST
	minBody  int    // bytes after the headers
	multiple int    // 0: exactly minBody; else the rest is a multiple of this
}

const (
	rawInvalid Raw = iota
	rawHello
	rawError
	rawEchoRequest
	rawEchoReply
	rawFeaturesRequest
	raw10FeaturesReply
	raw11FeaturesReply
	raw13FeaturesReply
	rawGetConfigRequest
	rawGetConfigReply
	rawSetConfig
	raw10PacketIn
	raw11PacketIn
	raw12PacketIn
	raw13PacketIn
	rawNXPacketIn
	rawNXPacketIn2
	raw10FlowRemoved
	raw11FlowRemoved
	raw15FlowRemoved
	rawNXFlowRemoved
	raw10PortStatus
	raw11PortStatus
	raw14PortStatus
	raw10PacketOut
	raw11PacketOut
	raw15PacketOut
	raw10FlowMod
	raw11FlowMod
	rawNXFlowMod
	rawNXGroupMod
	raw11GroupMod
	raw15GroupMod
	raw10PortMod
	raw11PortMod
	raw14PortMod
	raw11TableMod
	raw14TableMod
	raw10BarrierRequest
	raw11BarrierRequest
	raw10BarrierReply
	raw11BarrierReply
	raw10QueueGetConfigRequest
	raw11QueueGetConfigRequest
	raw10QueueGetConfigReply
	raw11QueueGetConfigReply
	raw12RoleRequest
	rawNXRoleRequest
	raw12RoleReply
	rawNXRoleReply
	raw13GetAsyncRequest
	raw14GetAsyncRequest
	raw13GetAsyncReply
	raw14GetAsyncReply
	raw13SetAsync
	rawNXSetAsyncConfig
	rawNXSetAsyncConfig2
	raw14SetAsync
	raw13MeterMod
	rawONF13RoleStatus
	raw14RoleStatus
	raw14TableStatus
	rawNXRequestForward
	rawONF13RequestForward
	raw14RequestForward
	raw14BundleControl
	rawONF13BundleControl
	raw14BundleAddMessage
	rawONF13BundleAddMessage
	rawDescRequest
	rawDescReply
	raw10FlowStatsRequest
	raw11FlowStatsRequest
	rawNXFlowStatsRequest
	raw10FlowStatsReply
	raw11FlowStatsReply
	raw13FlowStatsReply
	raw15FlowStatsReply
	rawNXFlowStatsReply
	raw10AggregateRequest
	raw11AggregateRequest
	raw15AggregateRequest
	rawNXAggregateRequest
	rawAggregateReply
	raw15AggregateReply
	rawNXAggregateReply
	rawTableStatsRequest
	raw10TableStatsReply
	raw11TableStatsReply
	raw12TableStatsReply
	raw13TableStatsReply
	raw10PortStatsRequest
	raw11PortStatsRequest
	raw10PortStatsReply
	raw11PortStatsReply
	raw13PortStatsReply
	raw14PortStatsReply
	raw10QueueStatsRequest
	raw11QueueStatsRequest
	raw10QueueStatsReply
	raw11QueueStatsReply
	raw13QueueStatsReply
	raw14QueueStatsReply
	rawNXGroupStatsRequest
	raw11GroupStatsRequest
	rawNXGroupStatsReply
	raw11GroupStatsReply
	raw13GroupStatsReply
	rawNXGroupDescRequest
	raw11GroupDescRequest
	raw15GroupDescRequest
	rawNXGroupDescReply
	raw11GroupDescReply
	rawNXGroupFeaturesRequest
	raw12GroupFeaturesRequest
	rawNXGroupFeaturesReply
	raw12GroupFeaturesReply
	raw13MeterStatsRequest
	raw13MeterStatsReply
	raw13MeterConfigRequest
	raw13MeterConfigReply
	raw13MeterFeaturesRequest
	raw13MeterFeaturesReply
	raw13TableFeaturesRequest
	raw13TableFeaturesReply
	raw14TableDescRequest
	raw14TableDescReply
	raw10PortDescRequest
	raw15PortDescRequest
	raw10PortDescReply
	raw11PortDescReply
	raw14PortDescReply
	raw14QueueDescRequest
	raw14QueueDescReply
	raw14FlowMonitorRequest
	rawONF13FlowMonitorRequest
	rawNXFlowMonitorRequest
	raw14FlowMonitorReply
	rawONF13FlowMonitorReply
	rawNXFlowMonitorReply
	rawONF13FlowMonitorCancel
	rawNXFlowMonitorCancel
	rawONF13FlowMonitorPaused
	rawNXFlowMonitorPaused
	rawONF13FlowMonitorResumed
	rawNXFlowMonitorResumed
	rawNXSetFlowFormat
	rawNXFlowModTableID
	rawNXSetPacketInFormat
	rawNXFlowAge
	rawNXSetControllerID
	rawNXTLVTableMod
	rawNXTLVTableRequest
	rawNXTLVTableReply
	rawNXResume
	rawNXCTFlushZone
	rawNXCTFlush
	rawNXIPFIXBridgeRequest
	rawNXIPFIXBridgeReply
	rawNXIPFIXFlowRequest
	rawNXIPFIXFlowReply
	numRaws
)

// t, nxt, onft, st, nxst, onfst build table entries (versions v1..v2).
func t(name string, v1, v2, typ uint8, minBody, multiple int) rawInfo {
	return rawInfo{name: name, v1: v1, v2: v2, kind: kindT, typ: typ, minBody: minBody, multiple: multiple}
}

func vt(name string, vendor uint32, v1, v2 uint8, subtype uint32, minBody, multiple int) rawInfo {
	return rawInfo{name: name, v1: v1, v2: v2, kind: kindVT, typ: typeVendor, vendor: vendor, subtype: subtype, minBody: minBody, multiple: multiple}
}

func st(name string, v1, v2 uint8, stat uint16, reply bool, minBody, multiple int) rawInfo {
	return rawInfo{name: name, v1: v1, v2: v2, kind: kindST, stat: stat, reply: reply, minBody: minBody, multiple: multiple}
}

func vst(name string, vendor uint32, v1, v2 uint8, subtype uint32, reply bool, minBody, multiple int) rawInfo {
	return rawInfo{name: name, v1: v1, v2: v2, kind: kindVST, stat: statVendor, vendor: vendor, subtype: subtype, reply: reply, minBody: minBody, multiple: multiple}
}

const (
	all = MaxVersion
	v10 = Version10
	v11 = Version11
	v12 = Version12
	v13 = Version13
	v14 = Version14
	v15 = Version15
	req = false
	rep = true
	nx  = VendorNX
	onf = VendorONF
)

// raws mirrors Open vSwitch's include/openvswitch/ofp-msgs.h: versions,
// numbers and body sizes (fixed part, then 0 = nothing more, 1 = any
// bytes, 8 = 8-byte units, N = an array of N-byte structures).
var raws = [numRaws]rawInfo{
	rawInvalid:                 {name: "<invalid>"},
	rawHello:                   t("OFPT_HELLO", v10, all, 0, 0, 1),
	rawError:                   t("OFPT_ERROR", v10, all, 1, 4, 1),
	rawEchoRequest:             t("OFPT_ECHO_REQUEST", v10, all, 2, 0, 1),
	rawEchoReply:               t("OFPT_ECHO_REPLY", v10, all, 3, 0, 1),
	rawFeaturesRequest:         t("OFPT_FEATURES_REQUEST", v10, all, 5, 0, 0),
	raw10FeaturesReply:         t("OFPT10_FEATURES_REPLY", v10, v10, 6, 24, 48),
	raw11FeaturesReply:         t("OFPT11_FEATURES_REPLY", v11, v12, 6, 24, 64),
	raw13FeaturesReply:         t("OFPT13_FEATURES_REPLY", v13, all, 6, 24, 0),
	rawGetConfigRequest:        t("OFPT_GET_CONFIG_REQUEST", v10, all, 7, 0, 0),
	rawGetConfigReply:          t("OFPT_GET_CONFIG_REPLY", v10, all, 8, 4, 0),
	rawSetConfig:               t("OFPT_SET_CONFIG", v10, all, 9, 4, 0),
	raw10PacketIn:              t("OFPT10_PACKET_IN", v10, v10, 10, 10, 1),
	raw11PacketIn:              t("OFPT11_PACKET_IN", v11, v11, 10, 16, 1),
	raw12PacketIn:              t("OFPT12_PACKET_IN", v12, v12, 10, 8, 1),
	raw13PacketIn:              t("OFPT13_PACKET_IN", v13, all, 10, 16, 1),
	rawNXPacketIn:              vt("NXT_PACKET_IN", nx, v10, all, 17, 24, 1),
	rawNXPacketIn2:             vt("NXT_PACKET_IN2", nx, v10, all, 30, 0, 8),
	raw10FlowRemoved:           t("OFPT10_FLOW_REMOVED", v10, v10, 11, 80, 0),
	raw11FlowRemoved:           t("OFPT11_FLOW_REMOVED", v11, v14, 11, 40, 8),
	raw15FlowRemoved:           t("OFPT15_FLOW_REMOVED", v15, all, 11, 16, 8),
	rawNXFlowRemoved:           vt("NXT_FLOW_REMOVED", nx, v10, all, 14, 40, 8),
	raw10PortStatus:            t("OFPT10_PORT_STATUS", v10, v10, 12, 8+48, 0),
	raw11PortStatus:            t("OFPT11_PORT_STATUS", v11, v13, 12, 8+64, 0),
	raw14PortStatus:            t("OFPT14_PORT_STATUS", v14, all, 12, 8+40, 8),
	raw10PacketOut:             t("OFPT10_PACKET_OUT", v10, v10, 13, 8, 1),
	raw11PacketOut:             t("OFPT11_PACKET_OUT", v11, v14, 13, 16, 1),
	raw15PacketOut:             t("OFPT15_PACKET_OUT", v15, all, 13, 8, 1),
	raw10FlowMod:               t("OFPT10_FLOW_MOD", v10, v10, 14, 64, 8),
	raw11FlowMod:               t("OFPT11_FLOW_MOD", v11, all, 14, 40, 8),
	rawNXFlowMod:               vt("NXT_FLOW_MOD", nx, v10, all, 13, 32, 8),
	rawNXGroupMod:              vt("NXT_GROUP_MOD", nx, v10, v10, 31, 16, 8),
	raw11GroupMod:              t("OFPT11_GROUP_MOD", v11, v14, 15, 8, 8),
	raw15GroupMod:              t("OFPT15_GROUP_MOD", v15, all, 15, 16, 8),
	raw10PortMod:               t("OFPT10_PORT_MOD", v10, v10, 15, 24, 0),
	raw11PortMod:               t("OFPT11_PORT_MOD", v11, v13, 16, 32, 0),
	raw14PortMod:               t("OFPT14_PORT_MOD", v14, all, 16, 24, 8),
	raw11TableMod:              t("OFPT11_TABLE_MOD", v11, v13, 17, 8, 0),
	raw14TableMod:              t("OFPT14_TABLE_MOD", v14, all, 17, 8, 8),
	raw10BarrierRequest:        t("OFPT10_BARRIER_REQUEST", v10, v10, 18, 0, 0),
	raw11BarrierRequest:        t("OFPT11_BARRIER_REQUEST", v11, all, 20, 0, 0),
	raw10BarrierReply:          t("OFPT10_BARRIER_REPLY", v10, v10, 19, 0, 0),
	raw11BarrierReply:          t("OFPT11_BARRIER_REPLY", v11, all, 21, 0, 0),
	raw10QueueGetConfigRequest: t("OFPT10_QUEUE_GET_CONFIG_REQUEST", v10, v10, 20, 4, 0),
	raw11QueueGetConfigRequest: t("OFPT11_QUEUE_GET_CONFIG_REQUEST", v11, v13, 22, 8, 0),
	raw10QueueGetConfigReply:   t("OFPT10_QUEUE_GET_CONFIG_REPLY", v10, v10, 21, 8, 8),
	raw11QueueGetConfigReply:   t("OFPT11_QUEUE_GET_CONFIG_REPLY", v11, v13, 23, 8, 8),
	raw12RoleRequest:           t("OFPT12_ROLE_REQUEST", v12, all, 24, 16, 0),
	rawNXRoleRequest:           vt("NXT_ROLE_REQUEST", nx, v10, all, 10, 4, 0),
	raw12RoleReply:             t("OFPT12_ROLE_REPLY", v12, all, 25, 16, 0),
	rawNXRoleReply:             vt("NXT_ROLE_REPLY", nx, v10, all, 11, 4, 0),
	raw13GetAsyncRequest:       t("OFPT13_GET_ASYNC_REQUEST", v13, v13, 26, 0, 0),
	raw14GetAsyncRequest:       t("OFPT14_GET_ASYNC_REQUEST", v14, all, 26, 0, 0),
	raw13GetAsyncReply:         t("OFPT13_GET_ASYNC_REPLY", v13, v13, 27, 24, 0),
	raw14GetAsyncReply:         t("OFPT14_GET_ASYNC_REPLY", v14, all, 27, 0, 8),
	raw13SetAsync:              t("OFPT13_SET_ASYNC", v13, v13, 28, 24, 0),
	rawNXSetAsyncConfig:        vt("NXT_SET_ASYNC_CONFIG", nx, v10, all, 19, 24, 0),
	rawNXSetAsyncConfig2:       vt("NXT_SET_ASYNC_CONFIG2", nx, v10, v13, 27, 0, 8),
	raw14SetAsync:              t("OFPT14_SET_ASYNC", v14, all, 28, 0, 8),
	raw13MeterMod:              t("OFPT13_METER_MOD", v13, all, 29, 8, 8),
	rawONF13RoleStatus:         vt("ONFT13_ROLE_STATUS", onf, v13, v13, 1911, 16, 8),
	raw14RoleStatus:            t("OFPT14_ROLE_STATUS", v14, all, 30, 16, 8),
	raw14TableStatus:           t("OFPT14_TABLE_STATUS", v14, all, 31, 8, 8),
	rawNXRequestForward:        vt("NXT_REQUESTFORWARD", nx, v10, v12, 132, 8, 8),
	rawONF13RequestForward:     vt("ONFT13_REQUESTFORWARD", onf, v13, v13, 2350, 8, 8),
	raw14RequestForward:        t("OFPT14_REQUESTFORWARD", v14, all, 32, 8, 8),
	raw14BundleControl:         t("OFPT14_BUNDLE_CONTROL", v14, all, 33, 8, 8),
	rawONF13BundleControl:      vt("ONFT13_BUNDLE_CONTROL", onf, v13, v13, 2300, 8, 8),
	raw14BundleAddMessage:      t("OFPT14_BUNDLE_ADD_MESSAGE", v14, all, 34, 8, 1),
	rawONF13BundleAddMessage:   vt("ONFT13_BUNDLE_ADD_MESSAGE", onf, v13, v13, 2301, 8, 1),
	rawDescRequest:             st("OFPST_DESC_REQUEST", v10, all, 0, req, 0, 0),
	rawDescReply:               st("OFPST_DESC_REPLY", v10, all, 0, rep, 1056, 0),
	raw10FlowStatsRequest:      st("OFPST10_FLOW_REQUEST", v10, v10, 1, req, 44, 0),
	raw11FlowStatsRequest:      st("OFPST11_FLOW_REQUEST", v11, all, 1, req, 32, 8),
	rawNXFlowStatsRequest:      vst("NXST_FLOW_REQUEST", nx, v10, v10, 0, req, 8, 8),
	raw10FlowStatsReply:        st("OFPST10_FLOW_REPLY", v10, v10, 1, rep, 0, 1),
	raw11FlowStatsReply:        st("OFPST11_FLOW_REPLY", v11, v12, 1, rep, 0, 1),
	raw13FlowStatsReply:        st("OFPST13_FLOW_REPLY", v13, v14, 1, rep, 0, 1),
	raw15FlowStatsReply:        st("OFPST15_FLOW_REPLY", v15, all, 1, rep, 0, 1),
	rawNXFlowStatsReply:        vst("NXST_FLOW_REPLY", nx, v10, v10, 0, rep, 0, 1),
	raw10AggregateRequest:      st("OFPST10_AGGREGATE_REQUEST", v10, v10, 2, req, 44, 0),
	raw11AggregateRequest:      st("OFPST11_AGGREGATE_REQUEST", v11, v14, 2, req, 32, 8),
	raw15AggregateRequest:      st("OFPST15_AGGREGATE_REQUEST", v15, all, 2, req, 32, 8),
	rawNXAggregateRequest:      vst("NXST_AGGREGATE_REQUEST", nx, v10, v10, 1, req, 8, 8),
	rawAggregateReply:          st("OFPST_AGGREGATE_REPLY", v10, v14, 2, rep, 24, 0),
	raw15AggregateReply:        st("OFPST15_AGGREGATE_REPLY", v15, all, 2, rep, 0, 1),
	rawNXAggregateReply:        vst("NXST_AGGREGATE_REPLY", nx, v10, v10, 1, rep, 24, 0),
	rawTableStatsRequest:       st("OFPST_TABLE_REQUEST", v10, all, 3, req, 0, 0),
	raw10TableStatsReply:       st("OFPST10_TABLE_REPLY", v10, v10, 3, rep, 0, 64),
	raw11TableStatsReply:       st("OFPST11_TABLE_REPLY", v11, v11, 3, rep, 0, 88),
	raw12TableStatsReply:       st("OFPST12_TABLE_REPLY", v12, v12, 3, rep, 0, 128),
	raw13TableStatsReply:       st("OFPST13_TABLE_REPLY", v13, all, 3, rep, 0, 24),
	raw10PortStatsRequest:      st("OFPST10_PORT_REQUEST", v10, v10, 4, req, 8, 0),
	raw11PortStatsRequest:      st("OFPST11_PORT_REQUEST", v11, all, 4, req, 8, 0),
	raw10PortStatsReply:        st("OFPST10_PORT_REPLY", v10, v10, 4, rep, 0, 104),
	raw11PortStatsReply:        st("OFPST11_PORT_REPLY", v11, v12, 4, rep, 0, 104),
	raw13PortStatsReply:        st("OFPST13_PORT_REPLY", v13, v13, 4, rep, 0, 112),
	raw14PortStatsReply:        st("OFPST14_PORT_REPLY", v14, all, 4, rep, 0, 8),
	raw10QueueStatsRequest:     st("OFPST10_QUEUE_REQUEST", v10, v10, 5, req, 8, 0),
	raw11QueueStatsRequest:     st("OFPST11_QUEUE_REQUEST", v11, all, 5, req, 8, 0),
	raw10QueueStatsReply:       st("OFPST10_QUEUE_REPLY", v10, v10, 5, rep, 0, 32),
	raw11QueueStatsReply:       st("OFPST11_QUEUE_REPLY", v11, v12, 5, rep, 0, 32),
	raw13QueueStatsReply:       st("OFPST13_QUEUE_REPLY", v13, v13, 5, rep, 0, 40),
	raw14QueueStatsReply:       st("OFPST14_QUEUE_REPLY", v14, all, 5, rep, 0, 8),
	rawNXGroupStatsRequest:     vst("NXST_GROUP_REQUEST", nx, v10, v10, 7, req, 8, 0),
	raw11GroupStatsRequest:     st("OFPST11_GROUP_REQUEST", v11, all, 6, req, 8, 0),
	rawNXGroupStatsReply:       vst("NXST_GROUP_REPLY", nx, v10, v10, 7, rep, 0, 8),
	raw11GroupStatsReply:       st("OFPST11_GROUP_REPLY", v11, v12, 6, rep, 0, 8),
	raw13GroupStatsReply:       st("OFPST13_GROUP_REPLY", v13, all, 6, rep, 0, 8),
	rawNXGroupDescRequest:      vst("NXST_GROUP_DESC_REQUEST", nx, v10, v10, 8, req, 8, 0),
	raw11GroupDescRequest:      st("OFPST11_GROUP_DESC_REQUEST", v11, v14, 7, req, 0, 0),
	raw15GroupDescRequest:      st("OFPST15_GROUP_DESC_REQUEST", v15, all, 7, req, 8, 0),
	rawNXGroupDescReply:        vst("NXST_GROUP_DESC_REPLY", nx, v10, v10, 8, rep, 0, 8),
	raw11GroupDescReply:        st("OFPST11_GROUP_DESC_REPLY", v11, all, 7, rep, 0, 8),
	rawNXGroupFeaturesRequest:  vst("NXST_GROUP_FEATURES_REQUEST", nx, v10, v11, 9, req, 0, 0),
	raw12GroupFeaturesRequest:  st("OFPST12_GROUP_FEATURES_REQUEST", v12, all, 8, req, 0, 0),
	rawNXGroupFeaturesReply:    vst("NXST_GROUP_FEATURES_REPLY", nx, v10, v11, 9, rep, 40, 0),
	raw12GroupFeaturesReply:    st("OFPST12_GROUP_FEATURES_REPLY", v12, all, 8, rep, 40, 0),
	raw13MeterStatsRequest:     st("OFPST13_METER_REQUEST", v13, all, 9, req, 8, 0),
	raw13MeterStatsReply:       st("OFPST13_METER_REPLY", v13, all, 9, rep, 0, 8),
	raw13MeterConfigRequest:    st("OFPST13_METER_CONFIG_REQUEST", v13, all, 10, req, 8, 0),
	raw13MeterConfigReply:      st("OFPST13_METER_CONFIG_REPLY", v13, all, 10, rep, 0, 8),
	raw13MeterFeaturesRequest:  st("OFPST13_METER_FEATURES_REQUEST", v13, all, 11, req, 0, 0),
	raw13MeterFeaturesReply:    st("OFPST13_METER_FEATURES_REPLY", v13, all, 11, rep, 16, 0),
	raw13TableFeaturesRequest:  st("OFPST13_TABLE_FEATURES_REQUEST", v13, all, 12, req, 0, 8),
	raw13TableFeaturesReply:    st("OFPST13_TABLE_FEATURES_REPLY", v13, all, 12, rep, 64, 8),
	raw14TableDescRequest:      st("OFPST14_TABLE_DESC_REQUEST", v14, all, 14, req, 0, 0),
	raw14TableDescReply:        st("OFPST14_TABLE_DESC_REPLY", v14, all, 14, rep, 8, 8),
	raw10PortDescRequest:       st("OFPST10_PORT_DESC_REQUEST", v10, v14, 13, req, 0, 0),
	raw15PortDescRequest:       st("OFPST15_PORT_DESC_REQUEST", v15, all, 13, req, 8, 0),
	raw10PortDescReply:         st("OFPST10_PORT_DESC_REPLY", v10, v10, 13, rep, 0, 48),
	raw11PortDescReply:         st("OFPST11_PORT_DESC_REPLY", v11, v13, 13, rep, 0, 64),
	raw14PortDescReply:         st("OFPST14_PORT_DESC_REPLY", v14, all, 13, rep, 0, 8),
	raw14QueueDescRequest:      st("OFPST14_QUEUE_DESC_REQUEST", v14, all, 15, req, 8, 0),
	raw14QueueDescReply:        st("OFPST14_QUEUE_DESC_REPLY", v14, all, 15, rep, 0, 8),
	raw14FlowMonitorRequest:    st("OFPST14_FLOW_MONITOR_REQUEST", v14, all, 16, req, 0, 8),
	rawONF13FlowMonitorRequest: vst("ONFST13_FLOW_MONITOR_REQUEST", onf, v13, v13, 1870, req, 0, 8),
	rawNXFlowMonitorRequest:    vst("NXST_FLOW_MONITOR_REQUEST", nx, v10, v12, 2, req, 0, 8),
	raw14FlowMonitorReply:      st("OFPST14_FLOW_MONITOR_REPLY", v14, all, 16, rep, 0, 8),
	rawONF13FlowMonitorReply:   vst("ONFST13_FLOW_MONITOR_REPLY", onf, v13, v13, 1870, rep, 0, 8),
	rawNXFlowMonitorReply:      vst("NXST_FLOW_MONITOR_REPLY", nx, v10, v12, 2, rep, 0, 8),
	rawONF13FlowMonitorCancel:  vt("ONFT13_FLOW_MONITOR_CANCEL", onf, v13, v13, 1870, 4, 0),
	rawNXFlowMonitorCancel:     vt("NXT_FLOW_MONITOR_CANCEL", nx, v10, v12, 21, 4, 0),
	rawONF13FlowMonitorPaused:  vt("ONFT13_FLOW_MONITOR_PAUSED", onf, v13, v13, 1871, 0, 0),
	rawNXFlowMonitorPaused:     vt("NXT_FLOW_MONITOR_PAUSED", nx, v10, v12, 22, 0, 0),
	rawONF13FlowMonitorResumed: vt("ONFT13_FLOW_MONITOR_RESUMED", onf, v13, v13, 1872, 0, 0),
	rawNXFlowMonitorResumed:    vt("NXT_FLOW_MONITOR_RESUMED", nx, v10, v12, 23, 0, 0),
	rawNXSetFlowFormat:         vt("NXT_SET_FLOW_FORMAT", nx, v10, v10, 12, 4, 0),
	rawNXFlowModTableID:        vt("NXT_FLOW_MOD_TABLE_ID", nx, v10, all, 15, 8, 0),
	rawNXSetPacketInFormat:     vt("NXT_SET_PACKET_IN_FORMAT", nx, v10, all, 16, 4, 0),
	rawNXFlowAge:               vt("NXT_FLOW_AGE", nx, v10, all, 18, 0, 0),
	rawNXSetControllerID:       vt("NXT_SET_CONTROLLER_ID", nx, v10, all, 20, 8, 0),
	rawNXTLVTableMod:           vt("NXT_TLV_TABLE_MOD", nx, v10, all, 24, 8, 8),
	rawNXTLVTableRequest:       vt("NXT_TLV_TABLE_REQUEST", nx, v10, all, 25, 0, 0),
	rawNXTLVTableReply:         vt("NXT_TLV_TABLE_REPLY", nx, v10, all, 26, 16, 8),
	rawNXResume:                vt("NXT_RESUME", nx, v10, all, 28, 0, 8),
	rawNXCTFlushZone:           vt("NXT_CT_FLUSH_ZONE", nx, v10, all, 29, 8, 0),
	rawNXCTFlush:               vt("NXT_CT_FLUSH", nx, v10, all, 32, 8, 8),
	rawNXIPFIXBridgeRequest:    vst("NXST_IPFIX_BRIDGE_REQUEST", nx, v10, all, 3, req, 0, 0),
	rawNXIPFIXBridgeReply:      vst("NXST_IPFIX_BRIDGE_REPLY", nx, v10, all, 3, rep, 88, 0),
	rawNXIPFIXFlowRequest:      vst("NXST_IPFIX_FLOW_REQUEST", nx, v10, all, 4, req, 0, 0),
	rawNXIPFIXFlowReply:        vst("NXST_IPFIX_FLOW_REPLY", nx, v10, all, 4, rep, 0, 88),
}

func (r Raw) String() string {
	if r >= numRaws {
		return raws[rawInvalid].name
	}
	return raws[r].name
}

// rawKey is what the headers of a message say about its form.
type rawKey struct {
	version uint8
	typ     uint8
	stat    uint16
	vendor  uint32
	subtype uint32
}

// statsType is OFPT_STATS_REQUEST/REPLY (1.0) or OFPT_MULTIPART_* (1.1+).
func statsType(version uint8, reply bool) uint8 {
	t := uint8(type11StatsRequest)
	if version == Version10 {
		t = type10StatsRequest
	}
	if reply {
		t++
	}
	return t
}

func isStatsType(version, typ uint8) bool {
	if version == Version10 {
		return typ == type10StatsRequest || typ == type10StatsReply
	}
	return typ == type11StatsRequest || typ == type11StatsReply
}

func (info *rawInfo) key(version uint8) rawKey {
	k := rawKey{version: version, typ: info.typ}
	switch info.kind {
	case kindVT:
		k.vendor, k.subtype = info.vendor, info.subtype
	case kindST:
		k.typ = statsType(version, info.reply)
		k.stat = info.stat
	case kindVST:
		k.typ = statsType(version, info.reply)
		k.stat = statVendor
		k.vendor, k.subtype = info.vendor, info.subtype
	}
	return k
}

// hdrLen is the length of the headers of r in version.
func (info *rawInfo) hdrLen(version uint8) int {
	switch info.kind {
	case kindVT:
		return 16
	case kindST:
		if version == Version10 {
			return 12
		}
		return 16
	case kindVST:
		return 24
	}
	return 8
}

// rawByKey finds the raw for a message's headers (immutable after init).
var rawByKey = func() map[rawKey]Raw {
	m := make(map[rawKey]Raw)
	for r := rawHello; r < numRaws; r++ {
		info := &raws[r]
		for v := info.v1; v <= info.v2; v++ {
			k := info.key(v)
			if _, dup := m[k]; dup {
				panic(fmt.Sprintf("ofp: %s duplicates %s in version %d", info.name, m[k], v))
			}
			m[k] = r
		}
	}
	return m
}()

// Header is the fixed part of every OpenFlow message, and what its
// secondary headers say: the raw form, and for multipart messages the
// flags.
type Header struct {
	Version uint8
	Type    uint8
	Length  uint16
	Xid     uint32
	Raw     Raw
	// StatsFlags are a multipart request's or reply's flags
	// (StatsFlagReplyMore).
	StatsFlags uint16
}

const headerLen = 8

// PeekHeader reads the fixed header of the message at the start of b
// without checking the rest: a stream reader uses it to find how many
// bytes the message has.
func PeekHeader(b []byte) (version, typ uint8, length uint16, xid uint32, ok bool) {
	if len(b) < headerLen {
		return 0, 0, 0, 0, false
	}
	return b[0], b[1], binary.BigEndian.Uint16(b[2:]), binary.BigEndian.Uint32(b[4:]), true
}

// decodeHeader identifies the message in b (exactly one whole message)
// and returns its header and body (the bytes after all its headers), with
// Open vSwitch's errors: OFPBRC_BAD_VERSION, OFPBRC_BAD_LEN,
// OFPBRC_BAD_VENDOR, OFPBRC_BAD_SUBTYPE, OFPBRC_BAD_STAT, OFPBRC_BAD_TYPE.
func decodeHeader(b []byte) (Header, []byte, error) {
	var h Header
	if len(b) < headerLen {
		return h, nil, ofperr.OFPBRC_BAD_LEN
	}
	h.Version, h.Type = b[0], b[1]
	h.Length = binary.BigEndian.Uint16(b[2:])
	h.Xid = binary.BigEndian.Uint32(b[4:])
	if int(h.Length) != len(b) {
		return h, nil, ofperr.OFPBRC_BAD_LEN
	}
	if h.Type == 0 && h.Version > MaxVersion {
		// A HELLO from a newer peer still negotiates (its bitmap may
		// include a version both speak).
		h.Raw = rawHello
		return h, b[headerLen:], nil
	}
	if h.Version < MinVersion || h.Version > MaxVersion {
		return h, nil, ofperr.OFPBRC_BAD_VERSION
	}
	k := rawKey{version: h.Version, typ: h.Type}
	switch {
	case h.Type == typeVendor:
		if len(b) < 16 {
			return h, nil, ofperr.OFPBRC_BAD_LEN
		}
		k.vendor = binary.BigEndian.Uint32(b[8:])
		if k.vendor != VendorNX && k.vendor != VendorONF {
			return h, nil, ofperr.OFPBRC_BAD_VENDOR
		}
		k.subtype = binary.BigEndian.Uint32(b[12:])
	case isStatsType(h.Version, h.Type):
		n := 16
		if h.Version == Version10 {
			n = 12
		}
		if len(b) < n {
			return h, nil, ofperr.OFPBRC_BAD_LEN
		}
		k.stat = binary.BigEndian.Uint16(b[8:])
		h.StatsFlags = binary.BigEndian.Uint16(b[10:])
		if k.stat == statVendor {
			if len(b) < n+4 {
				return h, nil, ofperr.OFPBRC_BAD_LEN
			}
			k.vendor = binary.BigEndian.Uint32(b[n:])
			if k.vendor != VendorNX && (k.vendor != VendorONF || h.Version == Version10) {
				return h, nil, ofperr.OFPBRC_BAD_VENDOR
			}
			if len(b) < 24 {
				return h, nil, ofperr.OFPBRC_BAD_LEN
			}
			k.subtype = binary.BigEndian.Uint32(b[n+4:])
		}
	}
	r, ok := rawByKey[k]
	if !ok {
		switch {
		case k.vendor != 0:
			return h, nil, ofperr.OFPBRC_BAD_SUBTYPE
		case isStatsType(h.Version, h.Type):
			return h, nil, ofperr.OFPBRC_BAD_STAT
		}
		return h, nil, ofperr.OFPBRC_BAD_TYPE
	}
	h.Raw = r
	info := &raws[r]
	body := b[info.hdrLen(h.Version):]
	switch n := len(body) - info.minBody; {
	case n < 0:
		return h, nil, ofperr.OFPBRC_BAD_LEN
	case info.multiple == 0 && n != 0:
		return h, nil, ofperr.OFPBRC_BAD_LEN
	case info.multiple > 1 && n%info.multiple != 0:
		return h, nil, ofperr.OFPBRC_BAD_LEN
	}
	return h, body, nil
}

// appendHeader appends the headers of raw r in version, with the length
// left zero (finish sets it).
func appendHeader(b []byte, r Raw, version uint8, xid uint32, statsFlags uint16) []byte {
	info := &raws[r]
	k := info.key(version)
	b = append(b, version, k.typ, 0, 0)
	b = put32(b, xid)
	switch info.kind {
	case kindVT:
		b = put32(b, info.vendor)
		b = put32(b, info.subtype)
	case kindST, kindVST:
		b = put16(b, k.stat)
		b = put16(b, statsFlags)
		if version != Version10 {
			b = pad(b, 4)
		}
		if info.kind == kindVST {
			b = put32(b, info.vendor)
			b = put32(b, info.subtype)
			if version == Version10 {
				b = pad(b, 4)
			}
		}
	}
	return b
}

// supports reports whether r exists in version.
func (r Raw) supports(version uint8) bool {
	if r == rawHello {
		return version >= MinVersion
	}
	return r > rawInvalid && r < numRaws && version >= raws[r].v1 && version <= raws[r].v2
}
