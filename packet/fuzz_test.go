package packet

import (
	"bytes"
	"testing"
)

func addSeeds(f *testing.F) {
	for _, c := range parseCases() {
		f.Add(c.frame)
	}
	for _, c := range l4Frames() {
		f.Add(c.withPartial())
	}
}

// FuzzParse: no input panics Parse, and any offsets it reports lie within
// the frame in order. The partial-checksum code must survive the same
// inputs with the parsed key and offsets.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		var k Key
		var o Offsets
		st := ParseOffsets(frame, &k, &o)
		if st >= NumStatus {
			t.Fatalf("status %d out of range", st)
		}
		if int(o.L3) > len(frame) || int(o.L4) > len(frame) {
			t.Fatalf("offsets %+v beyond frame of %d", o, len(frame))
		}
		if o.L4 != 0 && o.L4 < o.L3+IPv4MinLen {
			t.Fatalf("L4 offset %d too close to L3 offset %d", o.L4, o.L3)
		}
		if st == StatusOK && o.L3 == 0 {
			t.Fatalf("status ok without an L3 offset")
		}
		isND := k.EtherType == EtherTypeIPv6 && k.IPProto == ProtoICMPv6 && k.ICMPCode == 0 &&
			(k.ICMPType == ICMPv6NeighborSolicit || k.ICMPType == ICMPv6NeighborAdvert)
		if !isND && (k.NDTarget != [16]byte{} || k.NDReserved != 0 || k.NDOptionsType != 0 ||
			k.EtherType != EtherTypeARP && k.EtherType != EtherTypeRARP && (k.ARPSHA != [6]byte{} || k.ARPTHA != [6]byte{})) {
			t.Fatalf("ND fields outside neighbour discovery: %+v", k)
		}
		if k.NDOptionsType != 0 && k.NDOptionsType != NDOptSourceLinkAddr && k.NDOptionsType != NDOptTargetLinkAddr {
			t.Fatalf("nd_options_type %d", k.NDOptionsType)
		}
		var k2 Key
		if Parse(frame, &k2) != st || k2 != k {
			t.Fatal("Parse and ParseOffsets disagree")
		}
		cp := bytes.Clone(frame)
		if FixPartialChecksum(cp, &k, o) {
			if !checksumVerifies(cp, &k, o) {
				t.Fatal("fixed checksum does not verify")
			}
		}
	})
}

// checksumVerifies checks a completed L4 checksum the way a
// receiver would: pseudo-header plus segment sums to 0xffff.
func checksumVerifies(frame []byte, k *Key, o Offsets) bool {
	seg, _, ok := l4Checksum(frame, k, o)
	return ok && Checksum(seg, pseudoSum(k, len(seg))) == 0xffff
}

// FuzzVLAN: pushing a tag and popping it restores the frame, the offsets
// and the virtio_net_hdr exactly.
func FuzzVLAN(f *testing.F) {
	for _, c := range parseCases() {
		f.Add(c.frame, uint16(0x8100), uint16(100), uint16(34), uint16(54), uint8(1))
	}
	f.Fuzz(func(t *testing.T, frame []byte, tpid, tci, csumStart, hdrLen uint16, flags uint8) {
		b := NewBuffer(DefaultHeadroom, len(frame))
		b.SetLen(copy(b.Room(), frame))
		b.Parse()
		b.Vnet = VnetHdr{Flags: flags, HdrLen: hdrLen, CsumStart: csumStart, CsumOffset: 6}
		before := *b
		if tpid != EtherTypeQinQ {
			tpid = EtherTypeVLAN
		}
		if !b.PushVLANTag(VLANTag{TPID: tpid, TCI: tci}) {
			if len(frame) >= EthHeaderLen {
				t.Fatal("push refused on a full Ethernet frame")
			}
			return
		}
		if b.Len() != len(frame)+VLANHeaderLen {
			t.Fatalf("pushed length %d", b.Len())
		}
		tag, ok := b.PopVLAN()
		if !ok || tag.TPID != tpid || tag.TCI != tci {
			t.Fatalf("popped %+v %v", tag, ok)
		}
		if !bytes.Equal(b.Data(), frame) || b.Meta != before.Meta || b.Headroom() != before.Headroom() {
			t.Fatalf("push+pop changed the buffer: meta %+v, was %+v", b.Meta, before.Meta)
		}
	})
}
