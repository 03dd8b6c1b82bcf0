package mf

import (
	"unsafe"

	"gvs/packet"
)

// Flow is a packet as OpenFlow sees it: the datapath key (packet fields
// and datapath metadata: in_port, recirc_id, dp_hash, pkt_mark,
// conntrack, tunnel) followed by the pipeline's own state, which exists
// only during translation and never reaches the datapath key.
//
// Flow.InPort holds the OpenFlow port number (Open vSwitch's ofp_port_t
// space: 1..0xfeff for ports, PortLocal etc. for reserved ones), not the
// datapath port number packet.Key.InPort has in the datapath: the upcall
// layer converts between them, and a megaflow always matches in_port
// exactly.
//
// Like packet.Key it holds no pointers and no implicit padding, so it is
// comparable and can be masked and hashed word by word (flow_test.go
// checks the layout).
type Flow struct {
	packet.Key

	Metadata     uint64          // OpenFlow metadata (write_metadata, set_field)
	Regs         [NumRegs]uint32 // reg0-15; xreg N is regs 2N,2N+1; xxreg N is regs 4N..4N+3
	ConjID       uint32          // conjunction id of the conjunctive match that hit
	ActsetOutput uint32          // output port of the action set (OpenFlow 1.5 actset_output)
}

// Reserved OpenFlow port numbers, in Open vSwitch's 16-bit ofp_port_t
// space (OpenFlow 1.1+ puts them at 0xffffff00 + the low byte; the codecs
// convert). PortMax is the highest number a real port can have.
const (
	PortMax        uint32 = 0xff00
	PortUnset      uint32 = 0xfff7 // OFPP_UNSET (actset_output not set)
	PortInPort     uint32 = 0xfff8
	PortTable      uint32 = 0xfff9
	PortNormal     uint32 = 0xfffa
	PortFlood      uint32 = 0xfffb
	PortAll        uint32 = 0xfffc
	PortController uint32 = 0xfffd
	PortLocal      uint32 = 0xfffe
	PortNone       uint32 = 0xffff // OFPP_NONE (OpenFlow 1.0) / OFPP_ANY
)

// NumRegs is the number of 32-bit registers (reg0..reg15).
const NumRegs = 16

// Wildcards says which bits of a Flow matter: a set bit in Masks means
// the bit was matched on (in a rule) or consulted (by translation). Named
// after Open vSwitch's struct flow_wildcards.
type Wildcards struct {
	Masks Flow
}

// Match is a flow with its wildcards: the bits of Flow that Wildcards
// leaves unset are zero (Match.Normalize makes them so).
type Match struct {
	Flow      Flow
	Wildcards Wildcards
}

// flowWords is the size of Flow in 64-bit words.
const flowWords = int(unsafe.Sizeof(Flow{})) / 8

// Compile-time checks: Flow is a whole number of words and 8-byte aligned.
var (
	_ [unsafe.Sizeof(Flow{}) % 8]struct{}  = [0]struct{}{}
	_ [unsafe.Alignof(Flow{}) - 8]struct{} = [0]struct{}{}
)

// Words views f as 64-bit words (the classifier's and translation's unit).
func (f *Flow) Words() *[flowWords]uint64 {
	return (*[flowWords]uint64)(unsafe.Pointer(f))
}

// FlowWords is the number of 64-bit words in a Flow.
const FlowWords = flowWords

// Normalize clears the bits of m.Flow that m.Wildcards does not match.
func (m *Match) Normalize() {
	fw, mw := m.Flow.Words(), m.Wildcards.Masks.Words()
	for i := range fw {
		fw[i] &= mw[i]
	}
}

// Matches reports whether flow f matches m (m normalised).
func (m *Match) Matches(f *Flow) bool {
	fw, mw, vw := f.Words(), m.Wildcards.Masks.Words(), m.Flow.Words()
	for i := range fw {
		if fw[i]&mw[i] != vw[i] {
			return false
		}
	}
	return true
}

// Or adds every bit set in o to w (translation accumulating what it
// consulted).
func (w *Wildcards) Or(o *Wildcards) {
	ww, ow := w.Masks.Words(), o.Masks.Words()
	for i := range ww {
		ww[i] |= ow[i]
	}
}

// DatapathMask returns the part of w the datapath can match on: the
// packet.Key's bits. The pipeline's own state (metadata, registers,
// conj_id, actset_output) always starts as zero in a translation, so a
// lookup that consulted it depends on earlier actions, not on the packet.
func (w *Wildcards) DatapathMask() packet.Mask {
	return packet.Mask(w.Masks.Key)
}
