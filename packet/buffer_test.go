package packet

import (
	"bytes"
	"testing"
)

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func TestBufferWindow(t *testing.T) {
	b := NewBuffer(16, 100)
	if b.Len() != 0 || b.Headroom() != 16 || b.Tailroom() != 100 || len(b.Room()) != 100 {
		t.Fatalf("fresh buffer: len %d headroom %d tailroom %d", b.Len(), b.Headroom(), b.Tailroom())
	}
	b.SetLen(copy(b.Room(), "payload"))
	if string(b.Data()) != "payload" || cap(b.Data()) != 7 {
		t.Fatalf("data %q cap %d", b.Data(), cap(b.Data()))
	}
	copy(b.Prepend(4), "hdr:")
	if string(b.Data()) != "hdr:payload" || b.Headroom() != 12 {
		t.Fatalf("after prepend %q headroom %d", b.Data(), b.Headroom())
	}
	if got := string(b.Pull(4)); got != "hdr:" || string(b.Data()) != "payload" {
		t.Fatalf("pull returned %q, data %q", got, b.Data())
	}
	mustPanic(t, "Prepend beyond headroom", func() { b.Prepend(17) })
	mustPanic(t, "Pull beyond frame", func() { b.Pull(8) })
	mustPanic(t, "SetLen beyond tailroom", func() { b.SetLen(101) })
	mustPanic(t, "SetLen negative", func() { b.SetLen(-1) })

	b.InPort, b.HasVnet, b.Key.DstPort = 1, true, 2
	b.Reset()
	if b.Len() != 0 || b.Headroom() != 16 || b.Meta != (Meta{}) || b.Key != (Key{}) {
		t.Fatal("Reset left state behind")
	}
}

func TestVnetHdrLayout(t *testing.T) {
	h := VnetHdr{Flags: VnetNeedsCsum, GSOType: VnetGSOTCPv4 | VnetGSOECN, HdrLen: 0x0102, GSOSize: 1448, CsumStart: 34, CsumOffset: 16}
	var raw [VnetHdrLen]byte
	h.Encode(raw[:])
	want := []byte{1, 0x81, 0x02, 0x01, 0xa8, 0x05, 34, 0, 16, 0}
	if !bytes.Equal(raw[:], want) {
		t.Fatalf("encoded % x, want % x", raw, want)
	}
	var back VnetHdr
	if !back.Decode(raw[:]) || back != h {
		t.Fatalf("decoded %+v, want %+v", back, h)
	}
	if !h.IsGSO() || (&VnetHdr{GSOType: VnetGSOECN}).IsGSO() {
		t.Error("IsGSO")
	}
	if back.Decode(raw[:9]) {
		t.Error("Decode accepted a short header")
	}
}

func TestBufferVnetHdrPushPull(t *testing.T) {
	b := NewBuffer(DefaultHeadroom, 256)
	frame := cat(ether(EtherTypeIPv4), ipv4(v4TCP, tcp(1, 2, 0, 0, nil)))
	// Receive as AF_PACKET delivers it: header, then frame.
	b.Prepend(VnetHdrLen)
	h := VnetHdr{Flags: VnetNeedsCsum, CsumStart: 34, CsumOffset: 16}
	h.Encode(b.Room())
	b.SetLen(VnetHdrLen + copy(b.Room()[VnetHdrLen:], frame))
	if !b.PullVnetHdr() || !b.HasVnet || b.Vnet != h || !bytes.Equal(b.Data(), frame) || b.Headroom() != DefaultHeadroom {
		t.Fatalf("pull: vnet %+v headroom %d", b.Vnet, b.Headroom())
	}
	if !b.PushVnetHdr() || b.Len() != len(frame)+VnetHdrLen {
		t.Fatal("push")
	}
	var again VnetHdr
	again.Decode(b.Data())
	if again != h {
		t.Fatalf("pushed %+v", again)
	}
	tiny := NewBuffer(4, 64)
	if tiny.PushVnetHdr() {
		t.Error("push without headroom succeeded")
	}
	tiny.SetLen(5)
	if tiny.PullVnetHdr() {
		t.Error("pull from a 5-byte frame succeeded")
	}
}

func TestBufferCopyFrom(t *testing.T) {
	src := NewBuffer(DefaultHeadroom, 256)
	src.SetLen(copy(src.Room(), "frame bytes"))
	src.InPort = 9
	src.Key.SrcPort = 5
	dst := NewBuffer(DefaultHeadroom, 256)
	if !dst.CopyFrom(src) || string(dst.Data()) != "frame bytes" || dst.InPort != 9 || dst.Key != src.Key || dst.Headroom() != src.Headroom() {
		t.Fatalf("copy: %q", dst.Data())
	}
	dst.Data()[0] = 'F'
	if src.Data()[0] != 'f' {
		t.Error("copy shares memory")
	}
	small := NewBuffer(0, 4)
	if small.CopyFrom(src) {
		t.Error("copy into a too small buffer succeeded")
	}
}
