package packet

import (
	"bytes"
	"testing"
)

func loadBuffer(t testing.TB, frame []byte) *Buffer {
	t.Helper()
	b := NewBuffer(DefaultHeadroom, 4096)
	b.SetLen(copy(b.Room(), frame))
	return b
}

func TestPushPopVLAN(t *testing.T) {
	payload := []byte("payload stays put")
	untagged := cat(ether(EtherTypeIPv4), ipv4(v4TCP, tcp(1, 2, 0, 0, payload)))
	b := loadBuffer(t, untagged)
	b.Parse()
	b.HasVnet = true
	b.Vnet = VnetHdr{Flags: VnetNeedsCsum, GSOType: VnetGSOTCPv4, HdrLen: 54, GSOSize: 1448, CsumStart: 34, CsumOffset: 16}
	payloadAddr := &b.Data()[len(untagged)-1]

	if !b.PushVLAN(tagQ.TCI) {
		t.Fatal("push failed")
	}
	want := cat(ether(EtherTypeIPv4, tagQ), ipv4(v4TCP, tcp(1, 2, 0, 0, payload)))
	if !bytes.Equal(b.Data(), want) {
		t.Fatalf("pushed frame\n got % x\nwant % x", b.Data(), want)
	}
	if &b.Data()[len(want)-1] != payloadAddr {
		t.Error("payload moved")
	}
	if b.Offsets != (Offsets{18, 38}) || b.Vnet.CsumStart != 38 || b.Vnet.HdrLen != 58 || b.Vnet.CsumOffset != 16 {
		t.Errorf("after push: offsets %+v vnet %+v", b.Offsets, b.Vnet)
	}
	// The offsets agree with a fresh parse.
	var k Key
	var o Offsets
	ParseOffsets(b.Data(), &k, &o)
	if o != b.Offsets || k.VLANs[0] != tagQ {
		t.Errorf("reparse offsets %+v vlan %+v", o, k.VLANs[0])
	}

	if !b.PushVLANTag(tagAD) {
		t.Fatal("second push failed")
	}
	if got := cat(ether(EtherTypeIPv4, tagAD, tagQ), ipv4(v4TCP, tcp(1, 2, 0, 0, payload))); !bytes.Equal(b.Data(), got) {
		t.Fatal("qinq frame wrong")
	}
	if tag, ok := b.PopVLAN(); !ok || tag != tagAD {
		t.Fatalf("pop outer = %+v, %v", tag, ok)
	}
	if tag, ok := b.PopVLAN(); !ok || tag != tagQ {
		t.Fatalf("pop inner = %+v, %v", tag, ok)
	}
	if !bytes.Equal(b.Data(), untagged) || b.Offsets != (Offsets{14, 34}) || b.Vnet.CsumStart != 34 || b.Vnet.HdrLen != 54 {
		t.Errorf("after pops: offsets %+v vnet %+v", b.Offsets, b.Vnet)
	}
	if _, ok := b.PopVLAN(); ok {
		t.Error("pop from an untagged frame succeeded")
	}
}

func TestVLANWithoutChecksumOffload(t *testing.T) {
	// CsumStart is meaningless without NEEDS_CSUM and must not move.
	b := loadBuffer(t, cat(ether(EtherTypeIPv4), ipv4(v4UDP, udp(1, 2, nil))))
	b.Vnet = VnetHdr{CsumStart: 7}
	b.PushVLAN(1)
	if b.Vnet.CsumStart != 7 || b.Vnet.HdrLen != 0 || b.Offsets != (Offsets{}) {
		t.Errorf("vnet %+v offsets %+v", b.Vnet, b.Offsets)
	}
}

func TestPushVLANRefused(t *testing.T) {
	short := loadBuffer(t, macA[:])
	if short.PushVLAN(1) || short.Len() != 6 {
		t.Error("push onto a 6-byte frame")
	}
	noRoom := NewBuffer(3, 100)
	noRoom.SetLen(copy(noRoom.Room(), ether(EtherTypeARP)))
	if noRoom.PushVLAN(1) || noRoom.Len() != EthHeaderLen {
		t.Error("push without headroom")
	}
	cut := loadBuffer(t, ether(EtherTypeIPv4, tagQ)[:16])
	if _, ok := cut.PopVLAN(); ok {
		t.Error("pop from a frame cut inside the tag")
	}
}

func TestRestoreVLAN(t *testing.T) {
	frame := cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoUDP, hop: 1}, udp(1, 2, nil)))
	b := loadBuffer(t, frame)
	if !b.RestoreVLAN() || !bytes.Equal(b.Data(), frame) {
		t.Fatal("restore without a stripped tag changed the frame")
	}
	b.StrippedVLAN = tagQ
	if !b.RestoreVLAN() || b.StrippedVLAN.Present() {
		t.Fatal("restore failed")
	}
	b.Parse()
	if b.Key.VLANs[0] != tagQ || b.Key.EtherType != EtherTypeIPv6 || b.Key.DstPort != 2 {
		t.Errorf("restored key %+v", b.Key)
	}
}
