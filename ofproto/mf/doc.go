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
// # Ownership and goroutines
//
// Flow, Wildcards and Match are plain values without pointers: copy them
// freely. The field registry is immutable after package initialisation and
// safe for concurrent use.
package mf
