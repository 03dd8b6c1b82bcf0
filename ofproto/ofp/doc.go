// Package ofp is the OpenFlow message layer: every message gvs sends or
// receives, as typed Go values, with the codecs for each OpenFlow version
// (1.0 to 1.5) and the Nicira/ONF extension forms Open vSwitch uses.
//
// Decode takes one whole message and returns its Header (version, type,
// length, xid, its Raw wire form and multipart flags) and a Msg, one of
// this package's pointer types (*Hello, *FlowMod, *PacketIn,
// *FlowStatsReply, ...); a connection type-switches on it. Encode/Append
// do the reverse for a version; a message with several wire forms picks
// the one of that version, or the extension form its fields select (NX
// for Nicira flow mods, flow removed, role and stats; PacketIn.Format).
// EncodeReplies splits a long multipart reply into messages of at most
// 64 kB with OFPSF_REPLY_MORE, as Open vSwitch does.
//
// The wire forms follow Open vSwitch's include/openvswitch/ofp-msgs.h
// (raw.go mirrors its table: type numbers, versions, body sizes), and the
// decoded forms its ofputil_* structures, so the switch core can follow
// ofproto.c: e.g. FlowMod has Cookie/CookieMask/NewCookie and
// version-independent flags. Decoding errors are Open vSwitch's
// ofperr.Error for the same bytes (OFPBRC_BAD_LEN, OFPBRC_BAD_TYPE,
// OFPBRC_BAD_STAT, OFPBRC_BAD_VENDOR, OFPBRC_BAD_SUBTYPE,
// OFPBRC_BAD_VERSION, and the message's own), never a panic.
//
// Helpers for the switch side: NewErrorReply (the error Open vSwitch
// sends for a failed request, echoing it), Continuation (what a paused
// translation resumes from, carried in NXT_PACKET_IN2 and NXT_RESUME),
// SetAsync.Apply (Open vSwitch's set-async semantics over a basis),
// DefaultTableFeatures (the TABLE_FEATURES reply Open vSwitch gives, for
// gvs's fields), BundleAdd.Inner.
//
// Port numbers are in Open vSwitch's 16-bit space (mf.PortLocal etc.):
// the codecs convert OpenFlow 1.1+'s 32-bit numbers (PortTo11,
// PortFrom11). Matches are mf.Match and actions/instructions
// ofpact.Action lists (instructions included, as in Open vSwitch); the
// match and action codecs are ofproto/mf's and ofproto/ofpact's
// (codecs.go names the forms each message uses).
//
// The tests hold the codecs to Open vSwitch: the messages of its
// ofp-print tests and the traffic between ovs-ofctl and a real
// ovs-vswitchd (testdata/) decode and re-encode to the same bytes or to
// bytes ovs-ofctl prints the same; ovs-ofctl itself runs against a fake
// switch built on this package; ofp-print checks what we build.
//
// # Ownership and goroutines
//
// Decoded messages may alias the input slice (packet data, properties):
// copy what must outlive it. The package has no mutable state; its tables
// are built at initialisation. Safe for concurrent use.
package ofp
