package packet

import (
	"reflect"
	"testing"
	"unsafe"
)

// Hash and ApplyMask read Key as words; implicit padding would make equal
// keys (== ignores padding) hash differently. Every byte must belong to a
// named field.
func TestKeyHasNoPadding(t *testing.T) {
	typ := reflect.TypeFor[Key]()
	next := uintptr(0)
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Offset != next {
			t.Errorf("gap before field %s: offset %d, previous field ended at %d", f.Name, f.Offset, next)
		}
		if f.Name == "_" && f.Type.Size() != 0 {
			t.Errorf("blank field of size %d: == ignores it but Hash does not", f.Type.Size())
		}
		next = f.Offset + f.Type.Size()
	}
	if next != typ.Size() {
		t.Errorf("trailing padding: fields end at %d, size %d", next, typ.Size())
	}
	if typ.Align() != 8 {
		t.Errorf("Key alignment %d, want 8", typ.Align())
	}
	if reflect.TypeFor[Mask]().Size() != typ.Size() {
		t.Error("Mask and Key sizes differ")
	}
}

func keyBytes(k *Key) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(k)), unsafe.Sizeof(*k)) }

func sampleKey() Key {
	var k Key
	Parse(cat(ether(EtherTypeIPv6, tagQ), ipv6(ipv6Spec{next: ProtoTCP, hop: 9, flowLabel: 5}, tcp(1000, 2000, TCPFlagSYN, 0, nil))), &k)
	k.InPort = 4
	return k
}

// Every bit of the key must reach the hash.
func TestHashCoversEveryBit(t *testing.T) {
	base := sampleKey()
	h0 := base.Hash()
	seen := map[uint64]bool{h0: true}
	for i := range int(unsafe.Sizeof(base)) {
		for bit := range 8 {
			k := base
			keyBytes(&k)[i] ^= 1 << bit
			h := k.Hash()
			if seen[h] {
				t.Fatalf("flipping byte %d bit %d gives a hash already seen", i, bit)
			}
			seen[h] = true
		}
	}
}

func TestHashOrderMatters(t *testing.T) {
	k := sampleKey()
	swapped := k
	swapped.SrcIPv6, swapped.DstIPv6 = k.DstIPv6, k.SrcIPv6
	swapped.SrcPort, swapped.DstPort = k.DstPort, k.SrcPort
	if k.Hash() == swapped.Hash() {
		t.Error("swapping source and destination does not change the hash")
	}
	if k.HashSeed(1) == k.HashSeed(2) {
		t.Error("seed does not change the hash")
	}
	k2 := sampleKey()
	if k.Hash() != k2.Hash() || k != k2 {
		t.Error("equal keys differ")
	}
}

// A mask with one byte set keeps exactly that byte, for every byte, so
// ApplyMask covers the whole key.
func TestApplyMaskEveryByte(t *testing.T) {
	full := FullMask()
	var k Key
	for i := range keyBytes(&k) {
		keyBytes(&k)[i] = byte(i*7 + 1)
	}
	for i := range int(unsafe.Sizeof(k)) {
		var m Mask
		(*[unsafe.Sizeof(m)]byte)(unsafe.Pointer(&m))[i] = 0xf0
		var out Key
		k.ApplyMask(&m, &out)
		for j, got := range keyBytes(&out) {
			want := byte(0)
			if j == i {
				want = keyBytes(&k)[i] & 0xf0
			}
			if got != want {
				t.Fatalf("mask byte %d: out byte %d = %#x, want %#x", i, j, got, want)
			}
		}
	}
	var out Key
	k.ApplyMask(&full, &out)
	if out != k {
		t.Error("full mask changes the key")
	}
	// In place.
	m := Mask{DstPort: 0xffff, EtherType: 0xffff}
	k.ApplyMask(&m, &k)
	if k != (Key{DstPort: k.DstPort, EtherType: k.EtherType}) || k.DstPort == 0 {
		t.Errorf("in-place mask: %+v", k)
	}
}

func TestMaskedKeysMatch(t *testing.T) {
	// Two packets of the same TCP destination from different sources
	// fall into one megaflow when only the destination matters.
	var a, b Key
	Parse(cat(ether(EtherTypeIPv4), ipv4(v4TCP, tcp(1111, 80, TCPFlagSYN, 0, nil))), &a)
	Parse(cat(ether(EtherTypeIPv4), ipv4(v4TCP, tcp(2222, 80, TCPFlagACK, 0, nil))), &b)
	m := Mask{EtherType: 0xffff, IPProto: 0xff, DstPort: 0xffff}
	var ma, mb Key
	a.ApplyMask(&m, &ma)
	b.ApplyMask(&m, &mb)
	if ma != mb || ma.Hash() != mb.Hash() {
		t.Error("masked keys differ")
	}
	if a == b {
		t.Error("unmasked keys should differ")
	}
}

func TestKeyHelpers(t *testing.T) {
	k := Key{IPFrag: FragAny}
	if !k.IsFragment() || !k.IsFirstFragment() || k.IsLaterFragment() {
		t.Error("first fragment")
	}
	k.IPFrag |= FragLater
	if !k.IsFragment() || k.IsFirstFragment() || !k.IsLaterFragment() {
		t.Error("later fragment")
	}
	k.VLANs[0] = tagQ
	if k.NumVLANs() != 1 || tagQ.VID() != 100 || tagQ.PCP() != 1 {
		t.Errorf("vlans %d vid %d pcp %d", k.NumVLANs(), tagQ.VID(), tagQ.PCP())
	}
}
