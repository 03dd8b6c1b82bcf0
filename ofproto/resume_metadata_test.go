package ofproto

import (
	"testing"

	"gvs/ofproto/connmgr"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
	"gvs/ofproto/xlate"
)

// TestResumeMetadata: NXT_RESUME's metadata replaces the frozen registers
// and metadata (ovn-controller reports put_dhcp_opts's result in reg0[3]
// there), the kept continuation is not changed by it, and in_port stays
// the frozen one when the controller sends none.
func TestResumeMetadata(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	ev := &pinEvents{}
	c := b.Connect(ev)
	var got []xlate.Frozen
	b.SetResume(func(_ *Bridge, fz *xlate.Frozen, _ []byte) error { got = append(got, *fz); return nil })
	fz := &xlate.Frozen{Table: 7, Pause: true}
	fz.Flow.InPort = 2
	fz.Flow.Metadata = 1
	fz.Flow.Regs[0] = 0x1
	fz.Flow.Regs[14] = 0x2
	b.SendPacketIn(&xlate.PacketIn{Continuation: fz})
	if len(ev.conts) != 1 {
		t.Fatalf("packet-in continuations %v", ev.conts)
	}
	r := &ofp.Resume{}
	r.Continuation = ev.conts[0]
	r.Metadata.Flow.Metadata = 1
	r.Metadata.Wildcards.Masks.Metadata = ^uint64(0)
	r.Metadata.Flow.Regs[0] = 0x9 // the controller set reg0[3]
	r.Metadata.Wildcards.Masks.Regs[0] = ^uint32(0)
	r.Metadata.Flow.Regs[14] = 0x2
	r.Metadata.Wildcards.Masks.Regs[14] = ^uint32(0)
	if err := c.Resume(r, connmgr.Origin{}); err != nil || len(got) != 1 {
		t.Fatalf("resume: %v, %d resumed", err, len(got))
	}
	f := got[0].Flow
	if f.Regs[0] != 0x9 || f.Regs[14] != 0x2 || f.Metadata != 1 || f.InPort != 2 || got[0].Table != 7 {
		t.Errorf("resumed flow: reg0=%#x reg14=%#x metadata=%#x in_port=%d table=%d; want 0x9 0x2 0x1 2 7",
			f.Regs[0], f.Regs[14], f.Metadata, f.InPort, got[0].Table)
	}
	if fz.Flow.Regs[0] != 0x1 {
		t.Errorf("the kept continuation changed: reg0=%#x", fz.Flow.Regs[0])
	}
	// Fields the controller leaves out are zero (Open vSwitch's
	// frozen_metadata_from_flow); an in_port it sends wins.
	r.Metadata = mf.Match{}
	r.Metadata.Flow.InPort = 3
	r.Metadata.Wildcards.Masks.InPort = ^uint32(0)
	if err := c.Resume(r, connmgr.Origin{}); err != nil || len(got) != 2 {
		t.Fatalf("second resume: %v, %d resumed", err, len(got))
	}
	if f := got[1].Flow; f.Regs[0] != 0 || f.Metadata != 0 || f.InPort != 3 {
		t.Errorf("resumed with empty metadata: reg0=%#x metadata=%#x in_port=%d; want 0 0 3", f.Regs[0], f.Metadata, f.InPort)
	}
}
