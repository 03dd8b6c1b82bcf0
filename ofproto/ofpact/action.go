package ofpact

import (
	"net/netip"

	"gvs/ofproto/mf"
)

// Kind names an action kind, after Open vSwitch's enum ofpact_type.
type Kind uint8

// The action kinds. Instruction kinds (Meter, ClearActions, WriteActions,
// WriteMetadata, GotoTable) come last, as in OVS; an Apply-Actions
// instruction has no kind of its own: its actions are the list's plain
// actions. (The order instructions must appear in a list is OVS's
// instruction order, in which Meter comes first: see PullInstructions.)
const (
	KindInvalid Kind = iota

	// Output.
	KindOutput
	KindGroup
	KindController
	KindEnqueue
	KindOutputReg
	KindBundle

	// Header changes.
	KindSetField
	KindSetVLANVID
	KindSetVLANPCP
	KindStripVLAN
	KindPushVLAN
	KindSetEthSrc
	KindSetEthDst
	KindSetIPv4Src
	KindSetIPv4Dst
	KindSetIPDSCP
	KindSetIPECN
	KindSetIPTTL
	KindSetL4SrcPort
	KindSetL4DstPort
	KindRegMove
	KindStackPush
	KindStackPop
	KindDecTTL
	KindSetMPLSLabel
	KindSetMPLSTC
	KindSetMPLSTTL
	KindDecMPLSTTL
	KindPushMPLS
	KindPopMPLS
	KindDecNSHTTL
	KindDeleteField
	KindEncap
	KindDecap

	// Metadata.
	KindSetTunnel
	KindSetQueue
	KindPopQueue
	KindFinTimeout

	// Flow table interaction.
	KindResubmit
	KindLearn
	KindConjunction

	// Arithmetic.
	KindMultipath

	// Other.
	KindNote
	KindExit
	KindSample
	KindCT
	KindCTClear
	KindNAT
	KindOutputTrunc
	KindClone
	KindCheckPktLarger

	// Debugging.
	KindDebugRecirc
	KindDebugSlow

	// Instructions, in the order OpenFlow requires them.
	KindMeter
	KindClearActions
	KindWriteActions
	KindWriteMetadata
	KindGotoTable

	numKinds
)

// IsInstruction reports whether k is an OpenFlow 1.1+ instruction rather
// than an action (Apply-Actions excepted, see Kind).
func (k Kind) IsInstruction() bool { return k >= KindMeter && k < numKinds }

// Action is one OpenFlow action or instruction in gvs's internal form,
// independent of the OpenFlow version and wire encoding it came from. The
// concrete types are the structs of this package, always used by pointer
// (*Output, *SetField, ...); a switch on the type is the usual way to
// consume them.
type Action interface {
	Kind() Kind
}

// Raw records which of several wire encodings an action arrived in, where
// Open vSwitch keeps that choice so the action goes back out (and prints)
// the same way: load vs. set_field, controller vs. controller2, move vs.
// copy_field, set_tunnel vs. set_tunnel64, resubmit vs. resubmit(,T),
// learn vs. learn2, sample vs. sample2/3, output_reg vs. output_reg2,
// dec_ttl vs. dec_ttl(ids), strip_vlan vs. pop_vlan. RawDefault lets the
// encoder pick, as for an action built by gvs itself.
type Raw uint8

// The wire encodings that matter for re-encoding and formatting.
const (
	RawDefault Raw = iota
	RawOF10StripVLAN
	RawOF11PopVLAN
	RawNXController
	RawNXController2
	RawNXOutputReg
	RawNXOutputReg2
	RawNXRegMove
	RawONFCopyField
	RawOF15CopyField
	RawNXRegLoad
	RawNXRegLoad2
	RawOFSetField
	RawNXDecTTLCntIDs
	RawNXSetTunnel
	RawNXSetTunnel64
	RawNXResubmit
	RawNXResubmitTable
	RawNXResubmitTableCT
	RawNXLearn
	RawNXLearn2
	RawNXSample
	RawNXSample2
	RawNXSample3
)

// NoMeter is Controller.MeterID's "no meter" (OVS's NX_CTLR_NO_METER).
const NoMeter uint32 = 0

// Packet-in reasons (OVS's enum ofp_packet_in_reason) for Controller.Reason.
const (
	ReasonNoMatch      uint8 = 0
	ReasonAction       uint8 = 1
	ReasonInvalidTTL   uint8 = 2
	ReasonActionSet    uint8 = 3
	ReasonGroup        uint8 = 4
	ReasonPacketOut    uint8 = 5
	ReasonExplicitMiss uint8 = 6
	ReasonImplicitMiss uint8 = 7
)

// Output sends the packet to Port (an OpenFlow port in OVS's 16-bit space:
// mf.PortController etc. for reserved ports). MaxLen matters only for
// mf.PortController.
type Output struct {
	Port   uint32
	MaxLen uint16
}

// Group sends the packet through group ID.
type Group struct{ ID uint32 }

// Controller sends the packet to the controller(s) with extra parameters
// (NXAST_CONTROLLER / NXAST_CONTROLLER2). A plain "controller:LEN" is an
// Output to mf.PortController instead, as in OVS.
type Controller struct {
	MaxLen       uint16 // 0xffff: the whole packet
	ControllerID uint16
	Reason       uint8 // Reason* constant
	Pause        bool  // freeze the pipeline; the packet-in carries a continuation
	Userdata     []byte
	MeterID      uint32 // NoMeter: none
	Raw          Raw
}

// Enqueue outputs to Port through queue Queue (OpenFlow 1.0 only).
type Enqueue struct {
	Port  uint32
	Queue uint32
}

// OutputReg outputs to the port number held in Src.
type OutputReg struct {
	Src    mf.Subfield
	MaxLen uint16
	Raw    Raw
}

// OutputTrunc outputs to Port, truncating the packet to MaxLen bytes.
type OutputTrunc struct {
	Port   uint32
	MaxLen uint32
}

// Bundle algorithms (Bundle.Algorithm).
const (
	BundleActiveBackup uint16 = 0
	BundleHRW          uint16 = 1
)

// Hash field sets (Bundle.Fields, Multipath.Fields): OVS's enum
// nx_hash_fields.
const (
	HashEthSrc           uint16 = 0
	HashSymmetricL4      uint16 = 1
	HashSymmetricL3L4    uint16 = 2
	HashSymmetricL3L4UDP uint16 = 3
	HashNWSrc            uint16 = 4
	HashNWDst            uint16 = 5
	HashSymmetricL3      uint16 = 6
)

// Bundle chooses one live member port (bundle / bundle_load). Decoded and
// formatted; translation may treat it as unsupported.
type Bundle struct {
	Algorithm uint16
	Fields    uint16
	Basis     uint16
	Dst       mf.Subfield // bundle_load only; Dst.Field nil for bundle
	Members   []uint32
}

// SetField sets Field to Value under Mask (all ones for a whole field):
// OpenFlow's set_field and Nicira's reg_load/reg_load2. Value and Mask are
// in network byte order, Field.Bytes of them significant.
type SetField struct {
	Field *mf.Field
	Value mf.Value
	Mask  mf.Value
	Raw   Raw // RawNXRegLoad prints as load:...

	FlowHasVLAN bool // set by Check: the match has a VLAN (OpenFlow 1.0/1.1 encoding of vlan_tci)
}

// SetVLANVID sets the VLAN ID (low 12 bits). PushIfNeeded is OpenFlow
// 1.0's semantics: push a VLAN header if the packet has none.
type SetVLANVID struct {
	VID          uint16
	PushIfNeeded bool
	FlowHasVLAN  bool // set by Check: the match has a VLAN (OpenFlow 1.1 encoding)
}

// SetVLANPCP sets the VLAN priority (low 3 bits); PushIfNeeded as in
// SetVLANVID.
type SetVLANPCP struct {
	PCP          uint8
	PushIfNeeded bool
	FlowHasVLAN  bool // set by Check, as in SetVLANVID
}

// StripVLAN pops the outermost VLAN header (strip_vlan or pop_vlan; Raw
// says which it came as).
type StripVLAN struct{ Raw Raw }

// PushVLAN pushes a VLAN header with TPID EtherType (0x8100 or 0x88a8).
type PushVLAN struct{ EtherType uint16 }

// SetEthSrc sets the Ethernet source (OpenFlow 1.0/1.1 set_dl_src).
type SetEthSrc struct{ MAC [6]byte }

// SetEthDst sets the Ethernet destination.
type SetEthDst struct{ MAC [6]byte }

// SetIPv4Src sets the IPv4 source.
type SetIPv4Src struct{ Addr [4]byte }

// SetIPv4Dst sets the IPv4 destination.
type SetIPv4Dst struct{ Addr [4]byte }

// SetIPDSCP sets the DSCP (DSCP holds it in its high 6 bits, as the TOS
// byte does).
type SetIPDSCP struct{ DSCP uint8 }

// SetIPECN sets the ECN bits (low 2 bits).
type SetIPECN struct{ ECN uint8 }

// SetIPTTL sets the IP TTL / hop limit.
type SetIPTTL struct{ TTL uint8 }

// SetL4SrcPort sets the TCP/UDP/SCTP source port. IPProto is the match's
// nw_proto, set by Check; with it, OpenFlow 1.2+ encodes the action as
// set_field of tcp_src/udp_src/sctp_src, as OVS does.
type SetL4SrcPort struct {
	Port    uint16
	IPProto uint8
}

// SetL4DstPort sets the TCP/UDP/SCTP destination port (IPProto as in
// SetL4SrcPort).
type SetL4DstPort struct {
	Port    uint16
	IPProto uint8
}

// RegMove copies Src to Dst (same width): move / copy_field.
type RegMove struct {
	Src, Dst mf.Subfield
	Raw      Raw
}

// StackPush pushes Field onto the translation's stack.
type StackPush struct{ Field mf.Subfield }

// StackPop pops the top of the stack into Field.
type StackPop struct{ Field mf.Subfield }

// DecTTL decrements the IP TTL; a packet whose TTL runs out goes to the
// controllers CntIDs (controller 0 when empty) with reason invalid_ttl.
type DecTTL struct {
	CntIDs []uint16
	Raw    Raw
}

// SetMPLSLabel sets the MPLS label (parsed and formatted only). Raw is
// RawOFSetField when it came as set_field of mpls_label (gvs's field
// registry has no MPLS fields).
type SetMPLSLabel struct {
	Label uint32
	Raw   Raw
}

// SetMPLSTC sets the MPLS traffic class (parsed and formatted only); Raw
// as in SetMPLSLabel.
type SetMPLSTC struct {
	TC  uint8
	Raw Raw
}

// SetMPLSTTL sets the MPLS TTL (parsed and formatted only).
type SetMPLSTTL struct{ TTL uint8 }

// DecMPLSTTL decrements the MPLS TTL (parsed and formatted only).
type DecMPLSTTL struct{}

// PushMPLS pushes an MPLS header (parsed and formatted only).
type PushMPLS struct{ EtherType uint16 }

// PopMPLS pops an MPLS header (parsed and formatted only).
type PopMPLS struct{ EtherType uint16 }

// DecNSHTTL decrements the NSH TTL (parsed and formatted only).
type DecNSHTTL struct{}

// DeleteField removes a Geneve option (a tun_metadataN field) from the
// packet (parsed and formatted; translation may reject it).
type DeleteField struct{ Field *mf.Field }

// Packet types (OpenFlow 1.5 packet_type: namespace << 16 | type) of
// Encap.PacketType and Decap.PacketType.
const (
	PacketTypeEthernet  uint32 = 0x00000000
	PacketTypeNextProto uint32 = 0x0000fffe // decap: from the removed header's next protocol
	PacketTypeMPLS      uint32 = 0x00018847
	PacketTypeMPLSMC    uint32 = 0x00018848
	PacketTypeNSH       uint32 = 0x0001894f
)

// Encap property class and types (OVS's ofp-ed-props).
const (
	EncapPropClassNSH uint16 = 4
	EncapPropMDType   uint8  = 1
	EncapPropTLV      uint8  = 2
)

// EncapProp is one encap property: for NSH, md_type (MDType) or a
// metadata TLV (TLVClass, TLVType and Data, whose first TLVLen bytes are
// the value; Data keeps the wire padding to 8 bytes).
type EncapProp struct {
	Class    uint16
	Type     uint8
	MDType   uint8
	TLVClass uint16
	TLVType  uint8
	TLVLen   uint8
	Data     []byte
}

// Encap adds a header of PacketType (Ethernet, NSH, MPLS) around the
// packet (parsed and formatted; the datapath has no NSH).
type Encap struct {
	HdrSize    uint16
	PacketType uint32
	Props      []EncapProp
}

// Decap removes the outer header; the packet becomes PacketType
// (PacketTypeNextProto: as the removed header says).
type Decap struct{ PacketType uint32 }

// SetTunnel sets tun_id (set_tunnel / set_tunnel64).
type SetTunnel struct {
	TunID uint64
	Raw   Raw
}

// SetQueue sets the output queue.
type SetQueue struct{ QueueID uint32 }

// PopQueue restores the queue the packet arrived with.
type PopQueue struct{}

// FinTimeout changes the matching rule's timeouts once a TCP FIN or RST is
// seen.
type FinTimeout struct {
	IdleTimeout uint16
	HardTimeout uint16
}

// TableInPort is Resubmit.TableID's "the current table" (OVS writes 255).
const TableInPort uint8 = 0xff

// Resubmit looks the packet up again with in_port InPort (mf.PortInPort:
// unchanged) in table TableID (TableInPort: the current one).
type Resubmit struct {
	InPort     uint32
	TableID    uint8
	WithCTOrig bool // resubmit(,,ct): conntrack's original tuple as the IP fields
	Raw        Raw
}

// Learn flags (Learn.Flags): OVS's enum nx_learn_flags.
const (
	LearnSendFlowRem   uint16 = 1 << 0
	LearnDeleteLearned uint16 = 1 << 1
	LearnWriteResult   uint16 = 1 << 2
)

// LearnSrc / LearnDst say where a learn spec's bits come from and go.
type (
	LearnSrc uint8
	LearnDst uint8
)

// Learn spec sources and destinations (NX_LEARN_SRC_*, NX_LEARN_DST_*).
const (
	LearnSrcField     LearnSrc = 0
	LearnSrcImmediate LearnSrc = 1

	LearnDstMatch  LearnDst = 0
	LearnDstLoad   LearnDst = 1
	LearnDstOutput LearnDst = 2
)

// LearnSpec is one nx_flow_mod_spec of a learn action: NBits bits from Src
// (a field of the packet) or from Imm (an immediate value, network byte
// order, the low NBits bits significant, right-aligned in the last
// (NBits+7)/8 bytes) into a match field, a load into Dst, or output to the
// port they name.
type LearnSpec struct {
	SrcType LearnSrc
	DstType LearnDst
	NBits   int
	Src     mf.Subfield
	Imm     []byte
	Dst     mf.Subfield
}

// Learn adds or modifies a flow in TableID built from Specs.
type Learn struct {
	IdleTimeout    uint16
	HardTimeout    uint16
	Priority       uint16
	TableID        uint8
	Flags          uint16
	Cookie         uint64
	FinIdleTimeout uint16
	FinHardTimeout uint16
	Limit          uint32      // learn2: 0 = no limit
	ResultDst      mf.Subfield // learn2 with LearnWriteResult
	Specs          []LearnSpec
	Raw            Raw
}

// Conjunction makes the rule clause Clause (0-based) of NClauses of
// conjunctive match ID.
type Conjunction struct {
	ID       uint32
	Clause   uint8
	NClauses uint8
}

// Multipath algorithms (Multipath.Algorithm): OVS's enum nx_mp_algorithm.
const (
	MultipathModuloN       uint16 = 0
	MultipathHashThreshold uint16 = 1
	MultipathHRW           uint16 = 2
	MultipathIterHash      uint16 = 3
)

// Multipath hashes Fields and stores a link number in Dst.
type Multipath struct {
	Fields    uint16
	Basis     uint16
	Algorithm uint16
	MaxLink   uint16
	Arg       uint32
	Dst       mf.Subfield
}

// Note carries opaque bytes; it does nothing.
type Note struct{ Data []byte }

// Exit stops translation of the current action list and of any caller.
type Exit struct{}

// Sample directions (Sample.Direction).
const (
	SampleDefault uint8 = 0
	SampleIngress uint8 = 1
	SampleEgress  uint8 = 2
)

// Sample samples packets to IPFIX/sFlow collectors (parsed and formatted).
type Sample struct {
	Probability    uint16
	CollectorSetID uint32
	ObsDomainID    uint32
	ObsPointID     uint32
	SamplingPort   uint32 // mf.PortNone: none
	Direction      uint8
	Raw            Raw
}

// CT flags (CT.Flags).
const (
	CTCommit uint16 = 1 << 0
	CTForce  uint16 = 1 << 1
)

// CT application layer gateways (CT.Alg).
const (
	CTAlgFTP  uint16 = 21
	CTAlgTFTP uint16 = 69
)

// CTNoRecirc is CT.RecircTable's "do not recirculate" (OFPTT_ALL).
const CTNoRecirc uint8 = 0xff

// CT sends the packet through connection tracking in zone ZoneImm (or the
// zone held in ZoneSrc when ZoneSrc.Field is set), committing it when
// Flags has CTCommit, and recirculates to RecircTable. Actions are the
// nested actions (set_field of ct_mark / ct_label, NAT) applied on commit.
type CT struct {
	Flags       uint16
	ZoneImm     uint16
	ZoneSrc     mf.Subfield
	Alg         uint16
	RecircTable uint8
	Actions     []Action
}

// CTClear clears the packet's conntrack state.
type CTClear struct{}

// NAT flags (NAT.Flags): OVS's enum nx_nat_flags.
const (
	NATSrc         uint16 = 1 << 0
	NATDst         uint16 = 1 << 1
	NATPersistent  uint16 = 1 << 2
	NATProtoHash   uint16 = 1 << 3
	NATProtoRandom uint16 = 1 << 4
)

// NAT is ct()'s nat(...) clause. A zero AddrMin means no address range;
// a zero PortMin no port range.
type NAT struct {
	Flags            uint16
	AddrMin, AddrMax netip.Addr // both IPv4 or both IPv6; AddrMax may be invalid (single address)
	PortMin, PortMax uint16
}

// Clone runs Actions on a copy of the packet and its flow, then continues
// with the original.
type Clone struct{ Actions []Action }

// CheckPktLarger sets the 1-bit Dst to whether the packet is longer than
// Len bytes.
type CheckPktLarger struct {
	Len uint16
	Dst mf.Subfield
}

// DebugRecirc forces a recirculation (testing aid).
type DebugRecirc struct{}

// DebugSlow forces the flow into the slow path (testing aid).
type DebugSlow struct{}

// Meter passes the packet through meter ID: the OpenFlow 1.3/1.4 meter
// instruction, or the OpenFlow 1.5 meter action.
type Meter struct{ ID uint32 }

// ClearActions empties the action set (instruction).
type ClearActions struct{}

// WriteActions merges Actions into the action set (instruction).
type WriteActions struct{ Actions []Action }

// WriteMetadata writes Metadata under Mask into the metadata field
// (instruction; also NXAST_WRITE_METADATA in OpenFlow 1.0).
type WriteMetadata struct {
	Metadata uint64
	Mask     uint64
}

// GotoTable continues the pipeline in table TableID (instruction).
type GotoTable struct{ TableID uint8 }

func (*Output) Kind() Kind         { return KindOutput }
func (*Group) Kind() Kind          { return KindGroup }
func (*Controller) Kind() Kind     { return KindController }
func (*Enqueue) Kind() Kind        { return KindEnqueue }
func (*OutputReg) Kind() Kind      { return KindOutputReg }
func (*Bundle) Kind() Kind         { return KindBundle }
func (*SetField) Kind() Kind       { return KindSetField }
func (*SetVLANVID) Kind() Kind     { return KindSetVLANVID }
func (*SetVLANPCP) Kind() Kind     { return KindSetVLANPCP }
func (*StripVLAN) Kind() Kind      { return KindStripVLAN }
func (*PushVLAN) Kind() Kind       { return KindPushVLAN }
func (*SetEthSrc) Kind() Kind      { return KindSetEthSrc }
func (*SetEthDst) Kind() Kind      { return KindSetEthDst }
func (*SetIPv4Src) Kind() Kind     { return KindSetIPv4Src }
func (*SetIPv4Dst) Kind() Kind     { return KindSetIPv4Dst }
func (*SetIPDSCP) Kind() Kind      { return KindSetIPDSCP }
func (*SetIPECN) Kind() Kind       { return KindSetIPECN }
func (*SetIPTTL) Kind() Kind       { return KindSetIPTTL }
func (*SetL4SrcPort) Kind() Kind   { return KindSetL4SrcPort }
func (*SetL4DstPort) Kind() Kind   { return KindSetL4DstPort }
func (*RegMove) Kind() Kind        { return KindRegMove }
func (*StackPush) Kind() Kind      { return KindStackPush }
func (*StackPop) Kind() Kind       { return KindStackPop }
func (*DecTTL) Kind() Kind         { return KindDecTTL }
func (*SetMPLSLabel) Kind() Kind   { return KindSetMPLSLabel }
func (*SetMPLSTC) Kind() Kind      { return KindSetMPLSTC }
func (*SetMPLSTTL) Kind() Kind     { return KindSetMPLSTTL }
func (*DecMPLSTTL) Kind() Kind     { return KindDecMPLSTTL }
func (*PushMPLS) Kind() Kind       { return KindPushMPLS }
func (*PopMPLS) Kind() Kind        { return KindPopMPLS }
func (*DecNSHTTL) Kind() Kind      { return KindDecNSHTTL }
func (*DeleteField) Kind() Kind    { return KindDeleteField }
func (*Encap) Kind() Kind          { return KindEncap }
func (*Decap) Kind() Kind          { return KindDecap }
func (*SetTunnel) Kind() Kind      { return KindSetTunnel }
func (*SetQueue) Kind() Kind       { return KindSetQueue }
func (*PopQueue) Kind() Kind       { return KindPopQueue }
func (*FinTimeout) Kind() Kind     { return KindFinTimeout }
func (*Resubmit) Kind() Kind       { return KindResubmit }
func (*Learn) Kind() Kind          { return KindLearn }
func (*Conjunction) Kind() Kind    { return KindConjunction }
func (*Multipath) Kind() Kind      { return KindMultipath }
func (*Note) Kind() Kind           { return KindNote }
func (*Exit) Kind() Kind           { return KindExit }
func (*Sample) Kind() Kind         { return KindSample }
func (*CT) Kind() Kind             { return KindCT }
func (*CTClear) Kind() Kind        { return KindCTClear }
func (*NAT) Kind() Kind            { return KindNAT }
func (*OutputTrunc) Kind() Kind    { return KindOutputTrunc }
func (*Clone) Kind() Kind          { return KindClone }
func (*CheckPktLarger) Kind() Kind { return KindCheckPktLarger }
func (*DebugRecirc) Kind() Kind    { return KindDebugRecirc }
func (*DebugSlow) Kind() Kind      { return KindDebugSlow }
func (*Meter) Kind() Kind          { return KindMeter }
func (*ClearActions) Kind() Kind   { return KindClearActions }
func (*WriteActions) Kind() Kind   { return KindWriteActions }
func (*WriteMetadata) Kind() Kind  { return KindWriteMetadata }
func (*GotoTable) Kind() Kind      { return KindGotoTable }

// kindNames are OVS's ofpact names (ofpact_name), used in error messages.
var kindNames = [numKinds]string{
	KindOutput: "output", KindGroup: "group", KindController: "controller",
	KindEnqueue: "enqueue", KindOutputReg: "output_reg", KindBundle: "bundle",
	KindSetField: "set_field", KindSetVLANVID: "set_vlan_vid",
	KindSetVLANPCP: "set_vlan_pcp", KindStripVLAN: "strip_vlan",
	KindPushVLAN: "push_vlan", KindSetEthSrc: "mod_dl_src",
	KindSetEthDst: "mod_dl_dst", KindSetIPv4Src: "mod_nw_src",
	KindSetIPv4Dst: "mod_nw_dst", KindSetIPDSCP: "mod_nw_tos",
	KindSetIPECN: "mod_nw_ecn", KindSetIPTTL: "mod_nw_ttl",
	KindSetL4SrcPort: "mod_tp_src", KindSetL4DstPort: "mod_tp_dst",
	KindRegMove: "move", KindStackPush: "push", KindStackPop: "pop",
	KindDecTTL: "dec_ttl", KindSetMPLSLabel: "set_mpls_label",
	KindSetMPLSTC: "set_mpls_tc", KindSetMPLSTTL: "set_mpls_ttl",
	KindDecMPLSTTL: "dec_mpls_ttl", KindPushMPLS: "push_mpls",
	KindPopMPLS: "pop_mpls", KindDecNSHTTL: "dec_nsh_ttl",
	KindDeleteField: "delete_field", KindEncap: "encap", KindDecap: "decap",
	KindSetTunnel: "set_tunnel", KindSetQueue: "set_queue",
	KindPopQueue: "pop_queue", KindFinTimeout: "fin_timeout",
	KindResubmit: "resubmit", KindLearn: "learn",
	KindConjunction: "conjunction", KindMultipath: "multipath",
	KindNote: "note", KindExit: "exit", KindSample: "sample", KindCT: "ct",
	KindCTClear: "ct_clear", KindNAT: "nat", KindOutputTrunc: "output_trunc",
	KindClone: "clone", KindCheckPktLarger: "check_pkt_larger",
	KindDebugRecirc: "debug_recirc", KindDebugSlow: "debug_slow",
	KindMeter: "meter", KindClearActions: "clear_actions",
	KindWriteActions: "write_actions", KindWriteMetadata: "write_metadata",
	KindGotoTable: "goto_table",
}

// String returns OVS's name for the kind.
func (k Kind) String() string {
	if k < numKinds && kindNames[k] != "" {
		return kindNames[k]
	}
	return "invalid"
}

// Compile-time checks: every action type implements Action.
var (
	_ Action = (*Output)(nil)
	_ Action = (*Group)(nil)
	_ Action = (*Controller)(nil)
	_ Action = (*Enqueue)(nil)
	_ Action = (*OutputReg)(nil)
	_ Action = (*Bundle)(nil)
	_ Action = (*SetField)(nil)
	_ Action = (*SetVLANVID)(nil)
	_ Action = (*SetVLANPCP)(nil)
	_ Action = (*StripVLAN)(nil)
	_ Action = (*PushVLAN)(nil)
	_ Action = (*SetEthSrc)(nil)
	_ Action = (*SetEthDst)(nil)
	_ Action = (*SetIPv4Src)(nil)
	_ Action = (*SetIPv4Dst)(nil)
	_ Action = (*SetIPDSCP)(nil)
	_ Action = (*SetIPECN)(nil)
	_ Action = (*SetIPTTL)(nil)
	_ Action = (*SetL4SrcPort)(nil)
	_ Action = (*SetL4DstPort)(nil)
	_ Action = (*RegMove)(nil)
	_ Action = (*StackPush)(nil)
	_ Action = (*StackPop)(nil)
	_ Action = (*DecTTL)(nil)
	_ Action = (*SetMPLSLabel)(nil)
	_ Action = (*SetMPLSTC)(nil)
	_ Action = (*SetMPLSTTL)(nil)
	_ Action = (*DecMPLSTTL)(nil)
	_ Action = (*PushMPLS)(nil)
	_ Action = (*PopMPLS)(nil)
	_ Action = (*DecNSHTTL)(nil)
	_ Action = (*DeleteField)(nil)
	_ Action = (*Encap)(nil)
	_ Action = (*Decap)(nil)
	_ Action = (*SetTunnel)(nil)
	_ Action = (*SetQueue)(nil)
	_ Action = (*PopQueue)(nil)
	_ Action = (*FinTimeout)(nil)
	_ Action = (*Resubmit)(nil)
	_ Action = (*Learn)(nil)
	_ Action = (*Conjunction)(nil)
	_ Action = (*Multipath)(nil)
	_ Action = (*Note)(nil)
	_ Action = (*Exit)(nil)
	_ Action = (*Sample)(nil)
	_ Action = (*CT)(nil)
	_ Action = (*CTClear)(nil)
	_ Action = (*NAT)(nil)
	_ Action = (*OutputTrunc)(nil)
	_ Action = (*Clone)(nil)
	_ Action = (*CheckPktLarger)(nil)
	_ Action = (*DebugRecirc)(nil)
	_ Action = (*DebugSlow)(nil)
	_ Action = (*Meter)(nil)
	_ Action = (*ClearActions)(nil)
	_ Action = (*WriteActions)(nil)
	_ Action = (*WriteMetadata)(nil)
	_ Action = (*GotoTable)(nil)
)
