// Package ofpact is gvs's ofp-actions, after Open vSwitch's lib/ofp-actions:
// the internal form of OpenFlow actions and instructions (one Go struct per
// action kind, all implementing Action), their wire codecs for every
// OpenFlow version 1.0-1.5 including the Nicira and ONF extensions
// (PullActions, PullInstructions, AppendActions, AppendInstructions), their
// text form as ovs-ofctl prints and parses it (Format, Parse), validation
// against a rule's match (Check), and the helpers ofproto needs around
// them (Equal, OutputsToPort, OutputsToGroup, MeterID, ExecuteActionSet).
//
// Every action Open vSwitch 3.1 decodes is decoded, formatted, encoded
// and parsed (the debug actions only decode, as OVS without
// --enable-dummy, to OFPBAC_BAD_VENDOR_TYPE). The tests hold gvs to ovs-ofctl: the same text,
// the same error and the same re-encoding for hand-written, gvs-built and
// randomly mutated wire actions in every OpenFlow version, and the same
// canonical text for flows parsed from ovs-ofctl syntax. Known
// differences: tun_metadataN carries 16 bytes here (OVS 124), so longer
// values and bit offsets beyond them are rejected with
// OFPBAC_BAD_SET_LEN; a set_field naming a field gvs lacks gets
// OFPBAC_BAD_SET_TYPE where OVS, knowing more fields, may answer
// otherwise.
//
// Open vSwitch chooses between several encodings of the same action (load
// or set_field, move or copy_field, controller or controller2...) by
// version and by how the action arrived; each such action keeps that
// choice in a Raw field so it re-encodes byte for byte and prints as OVS
// prints it. Actions built by gvs itself leave Raw zero and get OVS's
// default encoding.
//
// Instructions are actions here too, as in OVS: an instruction list
// decodes into one []Action in OVS's instruction order: the meter
// instruction (Meter; in OpenFlow 1.5 meter is an ordinary action), the
// Apply-Actions instruction's actions, then ClearActions, WriteActions,
// WriteMetadata and GotoTable. AppendInstructions groups consecutive plain
// actions back into one Apply-Actions instruction.
//
// Check and CheckVersion (OVS's ofpacts_check_consistency) validate a
// list against the rule's match and table, as flow mods and packet-outs
// need; CheckVersion lets OpenFlow 1.0 keep actions inconsistent with the
// match, as OVS does. They also record, in the actions, the match facts
// OVS uses to choose OpenFlow 1.1+ encodings (SetL4SrcPort.IPProto,
// FlowHasVLAN), so they must run before the list is shared.
//
// # Ownership and goroutines
//
// Decoded actions are fresh values that share no memory with the input
// buffer. The package has no state; everything is safe for concurrent use
// on distinct values, and action lists are read-only once built (the
// classifier's rules share them between readers).
package ofpact
