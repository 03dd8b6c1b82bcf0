package rawsock

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// auxMsg builds a control buffer: an unrelated message, then PACKET_AUXDATA.
func auxMsg(status uint32, tci, tpid uint16) []byte {
	var c []byte
	put := func(level, typ int32, data []byte) {
		h := make([]byte, unix.CmsgSpace(len(data)))
		binary.NativeEndian.PutUint64(h[0:], uint64(unix.CmsgLen(len(data))))
		binary.NativeEndian.PutUint32(h[8:], uint32(level))
		binary.NativeEndian.PutUint32(h[12:], uint32(typ))
		copy(h[unix.SizeofCmsghdr:], data)
		c = append(c, h...)
	}
	put(unix.SOL_SOCKET, unix.SCM_TIMESTAMP, make([]byte, 16))
	a := unix.TpacketAuxdata{Status: status, Vlan_tci: tci, Vlan_tpid: tpid}
	put(unix.SOL_PACKET, unix.PACKET_AUXDATA, unsafe.Slice((*byte)(unsafe.Pointer(&a)), sizeofAuxdata))
	return c
}

func TestAux(t *testing.T) {
	st, tci, tpid, ok := Aux(auxMsg(unix.TP_STATUS_VLAN_VALID, 100, 0x88a8))
	if !ok || st != unix.TP_STATUS_VLAN_VALID || tci != 100 || tpid != 0x88a8 {
		t.Errorf("Aux = %x %d %x %v", st, tci, tpid, ok)
	}
	if _, _, _, ok := Aux(nil); ok {
		t.Error("Aux(nil) found something")
	}
	if _, _, _, ok := Aux(auxMsg(0, 0, 0)[:30]); ok {
		t.Error("Aux found a message in a truncated buffer")
	}
}

func FuzzAux(f *testing.F) {
	f.Add(auxMsg(unix.TP_STATUS_VLAN_VALID, 5, 0x8100))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, c []byte) {
		Aux(c) // must not panic on any control data
	})
}

func TestMsgBatch(t *testing.T) {
	b := NewMsgBatch(2)
	if !b.Add([]byte{1, 2}, []byte{3, 4, 5}) || !b.Add(nil, []byte{6}) || b.Add(nil, []byte{7}) {
		t.Fatal("Add results wrong for a batch of 2")
	}
	if b.Bytes(0) != 5 || b.Bytes(1) != 1 || b.Len() != 2 {
		t.Errorf("Bytes %d %d Len %d", b.Bytes(0), b.Bytes(1), b.Len())
	}
	// Send over a socket pair: two datagrams arrive intact.
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	if n, e := b.Send(fds[0], 0, unix.MSG_DONTWAIT); n != 2 || e != 0 {
		t.Fatalf("Send = %d, %v", n, e)
	}
	r := NewRecvBatch(4)
	bufs := [4][8]byte{}
	for i := range bufs {
		r.Set(i, bufs[i][:])
	}
	n, e := r.Recv(fds[1], 4, unix.MSG_DONTWAIT)
	if n != 2 || e != 0 || r.Len(0) != 5 || r.Len(1) != 1 || bufs[0][4] != 5 || bufs[1][0] != 6 || r.Truncated(0) {
		t.Errorf("Recv = %d %v lens %d %d bufs %v", n, e, r.Len(0), r.Len(1), bufs[:2])
	}
	b.Reset()
	if b.Len() != 0 {
		t.Error("Reset left messages")
	}
}
