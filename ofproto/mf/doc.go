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
// (TunMetadataBytes wide): the tunnel TLV table maps one option there.
//
// # Ownership and goroutines
//
// Flow, Wildcards and Match are plain values without pointers: copy them
// freely. The field registry is immutable after package initialisation and
// safe for concurrent use.
package mf
