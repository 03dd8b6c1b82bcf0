package ofp

import (
	"strings"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
)

// TestPacketInForms: a packet-in with pipeline metadata in every form,
// as ovs-ofctl prints it, and back.
func TestPacketInForms(t *testing.T) {
	var f mf.Flow
	f.InPort = 3
	f.Metadata = 0x5
	f.Regs[0] = 0x10
	f.Regs[14] = 0x3
	md := mf.FlowMetadata(&f)
	pkt := unhex(t, "ffffffffffff00000000000108060001080006040001000000000001c0a80001000000000000c0a80002")
	base := PacketIn{Packet: pkt, TotalLen: uint32(len(pkt)), BufferID: BufferNone, TableID: 12,
		Cookie: 0xabc, Reason: ReasonAction, Metadata: md, Userdata: []byte{0, 0, 0, 0x1c}}
	cases := []struct {
		version uint8
		format  uint8
		first   string
	}{
		{Version15, PacketInNXT2, "NXT_PACKET_IN2 (OF1.5) (xid=0x0): table_id=12 cookie=0xabc total_len=42 reg0=0x10,reg14=0x3,metadata=0x5,in_port=3 (via action) data_len=42 (unbuffered)"},
		{Version13, PacketInNXT, "NXT_PACKET_IN (OF1.3) (xid=0x0): table_id=12 cookie=0xabc total_len=42 reg0=0x10,reg14=0x3,metadata=0x5,in_port=3 (via action) data_len=42 (unbuffered)"},
		{Version13, PacketInStandard, "OFPT_PACKET_IN (OF1.3) (xid=0x0): table_id=12 cookie=0xabc total_len=42 reg0=0x10,reg14=0x3,metadata=0x5,in_port=3 (via action) data_len=42 (unbuffered)"},
		{Version10, PacketInStandard, "OFPT_PACKET_IN (xid=0x0): total_len=42 in_port=3 (via action) data_len=42 (unbuffered)"},
	}
	for _, c := range cases {
		pin := base
		pin.Format = c.format
		if c.format != PacketInNXT2 {
			pin.Userdata = nil
		}
		if c.version == Version10 {
			pin.Metadata = Match{}
			setMatchInPort(&pin.Metadata, 3)
			pin.Cookie = CookieNone
		}
		b, err := Encode(c.version, 0, &pin)
		if err != nil {
			t.Fatal(err)
		}
		out := ofpPrint(t, b, 2)
		if first, _, _ := strings.Cut(out, "\n"); first != c.first {
			t.Errorf("ofp-print:\n%s\nwant first line\n%s", out, c.first)
		}
		if c.format == PacketInNXT2 && !strings.Contains(out, " userdata=00.00.00.1c") {
			t.Errorf("no userdata:\n%s", out)
		}
		m := roundTrip(t, c.first, b).(*PacketIn)
		if m.Metadata.Format(mf.DefaultPriority) != pin.Metadata.Format(mf.DefaultPriority) {
			t.Errorf("metadata %s, want %s", m.Metadata.Format(mf.DefaultPriority), pin.Metadata.Format(mf.DefaultPriority))
		}
	}
}

// TestResumeRoundTrip: an NXT_RESUME as a controller echoes a paused
// packet-in (OVN's pinctrl), with the continuation intact.
func TestResumeRoundTrip(t *testing.T) {
	var f mf.Flow
	f.InPort = 1
	c := &Continuation{Steps: []ContinuationStep{{TableID: 40, Cookie: 7, Actions: []Action{&ofpact.Resubmit{InPort: mf.PortInPort, TableID: 41}}}}}
	r := &Resume{PacketIn{Format: PacketInNXT2, Packet: make([]byte, 64), TotalLen: 64, BufferID: BufferNone, TableID: 40,
		Cookie: 7, Reason: ReasonAction, Metadata: mf.FlowMetadata(&f), Continuation: c.Append(nil, Version15)}}
	b, err := Encode(Version15, 9, r)
	if err != nil {
		t.Fatal(err)
	}
	out := ofpPrint(t, b, 2)
	if !strings.HasPrefix(out, "NXT_RESUME (OF1.5) (xid=0x9): table_id=40 cookie=0x7 total_len=64 in_port=1 (via action) data_len=64 (unbuffered)") ||
		!strings.Contains(out, "continuation.actions=unroll_xlate(table=40, cookie=7),resubmit(,41)") {
		t.Errorf("ofp-print:\n%s", out)
	}
	m := roundTrip(t, "resume", b).(*Resume)
	got, err := ParseContinuation(m.Continuation, Version15)
	if err != nil || len(got.Steps) != 1 || got.Steps[0].TableID != 40 || ofpact.Format(got.Steps[0].Actions) != "resubmit(,41)" {
		t.Errorf("continuation %+v %v", got, err)
	}
}

// TestPacketInReasonPerVersion: Open vSwitch's internal miss reasons and
// 1.4's action reasons go out as each version can say them.
func TestPacketInReasonPerVersion(t *testing.T) {
	cases := []struct {
		reason  uint8
		version uint8
		via     string
	}{
		{ReasonExplicitMiss, Version10, "(via no_match)"},
		{ReasonExplicitMiss, Version13, "(via action)"},
		{ReasonImplicitMiss, Version15, "(via no_match)"},
		{ReasonGroup, Version13, "(via action)"},
		{ReasonGroup, Version14, "(via group)"},
		{ReasonPacketOut, Version15, "(via packet_out)"},
	}
	for _, c := range cases {
		pin := &PacketIn{Packet: make([]byte, 14), TotalLen: 14, BufferID: BufferNone, Cookie: CookieNone, Reason: c.reason}
		setMatchInPort(&pin.Metadata, 1)
		b, err := Encode(c.version, 0, pin)
		if err != nil {
			t.Fatal(err)
		}
		if out := ofpPrint(t, b, 2); !strings.Contains(out, c.via) {
			t.Errorf("reason %d in version %d:\n%s\nwant %s", c.reason, c.version, out, c.via)
		}
	}
}
