package ofp

import (
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
)

// An OVN-style flow mod: registers, metadata, set_field and resubmit.
func benchFlowMod(b *testing.B) []byte {
	m, _, err := mf.ParseMatch("priority=100,reg14=0x2,metadata=0x1,ip,nw_dst=10.0.0.0/24")
	if err != nil {
		b.Fatal(err)
	}
	acts, err := ofpact.Parse("set_field:0x4->reg13,set_field:0x1->metadata,resubmit(,8)")
	if err != nil {
		b.Fatal(err)
	}
	msg, err := Encode(Version15, 1, &FlowMod{Match: m, Priority: 100, TableID: 8, NewCookie: 0x994e9262, BufferID: BufferNone,
		OutPort: mf.PortNone, OutGroup: GroupAny, Actions: acts})
	if err != nil {
		b.Fatal(err)
	}
	return msg
}

func BenchmarkDecodeFlowMod(b *testing.B) {
	msg := benchFlowMod(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Decode(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeFlowMod(b *testing.B) {
	_, m, err := Decode(benchFlowMod(b))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = Append(buf[:0], Version15, 1, m); err != nil {
			b.Fatal(err)
		}
	}
}

// A packet-in to a controller (NXT_PACKET_IN2 with metadata), appended to
// a reused buffer.
func BenchmarkAppendPacketIn2(b *testing.B) {
	var f mf.Flow
	f.InPort, f.Metadata, f.Regs[14] = 1, 1, 2
	pin := &PacketIn{Format: PacketInNXT2, Packet: make([]byte, 128), TotalLen: 128, BufferID: BufferNone, TableID: 30,
		Cookie: 0x1234, Reason: ReasonAction, Metadata: mf.FlowMetadata(&f), Userdata: []byte{0, 0, 0, 0x1c, 0, 0, 0, 0}}
	buf := make([]byte, 0, 512)
	var err error
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = Append(buf[:0], Version15, 0, pin); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendPacketInAllocs: a packet-in appended to a buffer with room
// allocates nothing (one is built per packet sent to a controller).
func TestAppendPacketInAllocs(t *testing.T) {
	var f mf.Flow
	f.InPort, f.Metadata, f.Regs[14] = 1, 1, 2
	pin := &PacketIn{Format: PacketInNXT2, Packet: make([]byte, 128), TotalLen: 1500, BufferID: BufferNone, TableID: 30,
		Cookie: 0x1234, Reason: ReasonAction, Metadata: mf.FlowMetadata(&f), Userdata: []byte{0, 0, 0, 0x1c, 0, 0, 0, 0}}
	buf := make([]byte, 0, 1024)
	for _, v := range []uint8{Version10, Version13, Version15} {
		for _, format := range []uint8{PacketInStandard, PacketInNXT, PacketInNXT2} {
			pin.Format = format
			if n := testing.AllocsPerRun(100, func() { buf, _ = Append(buf[:0], v, 0, pin) }); n != 0 {
				t.Errorf("version %d format %d: %v allocations", v, format, n)
			}
		}
	}
}
