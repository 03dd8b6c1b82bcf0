// Package mf is gvs's meta-flow, after Open vSwitch's lib/meta-flow: the
// Flow that OpenFlow matches on and rewrites (the datapath key plus the
// pipeline's own metadata and registers), Wildcards over it, Match
// (a flow and its wildcards), and the registry of every field an
// OpenFlow match or action can name: its OVS name, width, maskability,
// prerequisites, OXM and NXM headers, and where it lives in Flow.
//
// Everything above the datapath speaks these types: the OpenFlow codec
// (ofproto/ofp, ofproto/ofpact) decodes into them, the classifier
// (ofproto/classifier) matches them, translation reads and writes them and
// accumulates the bits it consulted into a Wildcards, whose datapath part
// (Wildcards.DatapathMask) becomes the megaflow's mask.
//
// # Fields
//
// Each field (Field, found by FieldByID, FieldByName with either of its
// names, FieldByHeader with its NXM/OXM class and number) reads and
// writes its bits of a Flow (Get/Set/SetMasked) and of a Wildcards
// (GetMask/SetMaskTo/Unwildcard) as a Value: the field's bytes in
// network byte order. SetMatch/SetMatchMasked change a Match as Open
// vSwitch's mf_set_value/mf_set do (the VLAN fields share vlan_tci).
// Subfield is a bit range of a field with its text form
// ("NXM_NX_REG0[0..15]"). None of these allocate.
//
// vlan_tci follows Open vSwitch: its CFI bit (0x1000) means "a tag is
// present". gvs keeps the frame's TCI and TPID in VLANs[0]; the CFI bit
// maps to the TPID's top bit (set in both 0x8100 and 0x88a8), so a
// megaflow mask can express "tagged" without a separate flag.
//
// The tun_metadataN fields all read the whole of packet.Key.TunMetadata
// (TunMetadataBytes wide, the option's value right-aligned): only one
// option fits, so the codecs accept tun_metadata0 alone (others are
// NXFMFC_INVALID_TLV_FIELD) and send it with the shortest multiple of 4
// bytes that holds its mask.
//
// Prerequisites (PrereqsOK, PrereqsOKWildcards for translation, which
// must record what it tested; PrereqsMatched and Match.CheckPrereqs for
// flow_mod checks) follow mf_are_prereqs_ok.
//
// # Wire and text forms
//
// Matches travel as Open vSwitch sends them, so bytes compare equal with
// its encodings (tests check every form against ovs-ofctl):
//   - NXM/OXM entries: PullEntry/PullMatchEntry/AppendEntry (set_field
//     and learn use them too), DecodeNXMatch/AppendNXMatch for a whole
//     nx_match body (NXT_FLOW_MOD, NXST_FLOW with NXM_NX_COOKIE, packet-in
//     metadata with pipelineOnly), PullNXMatch with the padding to 8.
//   - ofp_match: PullMatch/AppendMatch for a message's version:
//     ofp10_match (1.0), standard ofp11_match (1.1), OXM (1.2+; 1.1+
//     accept both types as Open vSwitch does). The fixed forms are
//     normalised as ofputil_normalize_match does and cannot carry every
//     field: AppendMatch leaves out what the version cannot express.
//   - Text: Match.Format is match_format ("priority=10,tcp,tp_dst=80"),
//     ParseMatch reads ovs-ofctl's flow syntax (not checking
//     prerequisites, as ovs-ofctl does not), Field.ParseValue/FormatValue
//     are mf_parse/mf_format, FormatNXMatch/ParseNXMatchText the
//     "NXM_OF_IN_PORT(0001)" form of ovs-ofctl parse-nx-match.
//   - Packets: Flow.Format is flow_format (ofproto/trace's "Flow:" line,
//     packet-ins) over WildcardsForPacket; ParseFlow reads trace's exact
//     flow syntax; FlowMetadata/Match.ApplyTo carry pipeline metadata in
//     packet-ins and continuations.
//
// Errors are ofperr values with Open vSwitch's meaning for the same
// input (OFPBMC_BAD_FIELD, BAD_PREREQ, DUP_FIELD, BAD_MASK, BAD_VALUE,
// BAD_WILDCARDS, BAD_LEN, BAD_TYPE; OFPBAC_BAD_SET_* in actions); text
// errors are worded as ovs-ofctl's.
//
// # Ownership and goroutines
//
// Flow, Wildcards and Match are plain values without pointers: copy them
// freely. The field registry is immutable after package initialisation and
// safe for concurrent use.
package mf
