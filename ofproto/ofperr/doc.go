// Package ofperr is the OpenFlow error vocabulary: Error, one constant per
// error Open vSwitch defines in its enum ofperr (same names without the
// OFPERR_ prefix, e.g. OFPBRC_BAD_LEN, OFPBAC_BAD_OUT_PORT, NXBRC_*), with
// the (type, code) each is sent as in every OpenFlow version, Nicira and
// other experimenter errors included, and the reverse mapping.
//
// How an error travels depends on the version, as in Open vSwitch:
//   - standard errors: ofp_error_msg type and code;
//   - vendor errors in OpenFlow 1.0 and 1.1: type NXET_VENDOR (0xb0c2),
//     code NXVC_VENDOR_ERROR (0), then struct nx_vendor_error
//     (vendor, type, code);
//   - vendor errors in OpenFlow 1.2+: type OFPET12_EXPERIMENTER (0xffff),
//     code = the error's type, then the 32-bit experimenter id.
//
// AppendWire and ParseWire do that part of an OFPT_ERROR body; the
// message itself (header, echoed request) is ofproto/ofp's.
//
// table.go is generated (go generate) from Open vSwitch's
// include/openvswitch/ofp-errors.h, whose comments ("OF1.0+(1,6)",
// "NX1.0-1.1(1,514), OF1.2+(1,11)") define the encodings; the header is
// fetched, not part of gvs.
//
// # Ownership and goroutines
//
// Everything here is immutable; safe for concurrent use. ofperr imports
// nothing of gvs.
package ofperr

//go:generate sh -c "go run ./internal/gen $OVS_SRC/include/openvswitch/ofp-errors.h $OVS_SRC/include/openflow/openflow-common.h > table.go"
