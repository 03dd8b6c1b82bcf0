package ofproto

import (
	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
)

// ResumeWith continues the translation a continuation froze, on frame,
// with the pipeline metadata the controller handed back in NXT_RESUME
// (its NXPINT_METADATA): as Open vSwitch's xlate_resume, that metadata,
// not what was frozen, is what the resumed pipeline sees. Controllers
// report results there: ovn-controller's put_dhcp_opts, put_nd_ra_opts
// and friends set a result bit in a register (reg0[3]) that the next
// table matches. md nil resumes with the frozen metadata.
func (b *Bridge) ResumeWith(cont, frame []byte, md *mf.Match) error {
	fz, err := b.continuation(cont)
	if err != nil {
		return err
	}
	fn := b.resumeFn.Load()
	if fn == nil {
		return ofperr.NXR_NOT_SUPPORTED
	}
	if md == nil {
		return (*fn)(b, fz, frame)
	}
	// A copy: the kept state may be resumed again (a controller may
	// resume one continuation more than once).
	thawed := *fz
	applyResumeMetadata(&thawed.Flow, md)
	return (*fn)(b, &thawed, frame)
}

// applyResumeMetadata overwrites the pipeline metadata fields of f with
// md's (Open vSwitch's frozen_metadata_from_flow and
// pkt_metadata_from_flow: metadata, registers, tunnel id, packet mark;
// in_port when the controller sent one). A field the controller left out
// is zero, as in Open vSwitch; the conntrack state stays the frozen one.
func applyResumeMetadata(f *mf.Flow, md *mf.Match) {
	f.Metadata = md.Flow.Metadata
	f.Regs = md.Flow.Regs
	f.TunID = md.Flow.TunID
	f.PktMark = md.Flow.PktMark
	if md.Wildcards.Masks.InPort != 0 {
		f.InPort = md.Flow.InPort
	}
}
