package rawsock

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// ControlSpace is the control buffer each received message gets: room for
// one PACKET_AUXDATA message (struct tpacket_auxdata is 20 bytes).
const ControlSpace = 64

// RecvBatch is a preallocated recvmmsg(2) array of one-iovec messages with
// a control buffer each, reused for every call of one receive queue.
type RecvBatch struct {
	msgs []mmsghdr
	iovs []unix.Iovec
	ctrl []byte
}

// NewRecvBatch allocates room for size messages.
func NewRecvBatch(size int) *RecvBatch {
	b := &RecvBatch{msgs: make([]mmsghdr, size), iovs: make([]unix.Iovec, size), ctrl: make([]byte, size*ControlSpace)}
	for i := range b.msgs {
		b.msgs[i].hdr.Iov = &b.iovs[i]
		b.msgs[i].hdr.Iovlen = 1
	}
	return b
}

// Set points message i at p, which must stay valid until Recv returns.
func (b *RecvBatch) Set(i int, p []byte) {
	b.iovs[i].Base = &p[0]
	b.iovs[i].SetLen(len(p))
	m := &b.msgs[i].hdr
	m.Control = &b.ctrl[i*ControlSpace]
	m.SetControllen(ControlSpace)
	m.Flags = 0
}

// Clear drops the references to frame memory set by Set.
func (b *RecvBatch) Clear(n int) {
	for i := range n {
		b.iovs[i] = unix.Iovec{}
	}
}

// Recv calls recvmmsg(2) for the first n messages and returns how many
// arrived.
func (b *RecvBatch) Recv(fd, n, flags int) (int, unix.Errno) {
	r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.msgs[0])),
		uintptr(n), uintptr(flags), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), 0
}

// Len is the byte count of received message i; Truncated says it did not
// fit.
func (b *RecvBatch) Len(i int) int { return int(b.msgs[i].n) }

// Truncated reports whether message i was cut to fit its buffer.
func (b *RecvBatch) Truncated(i int) bool { return b.msgs[i].hdr.Flags&unix.MSG_TRUNC != 0 }

// Control returns the control messages of received message i.
func (b *RecvBatch) Control(i int) []byte {
	return b.ctrl[i*ControlSpace : i*ControlSpace+int(b.msgs[i].hdr.Controllen)]
}

// Aux finds the PACKET_AUXDATA message in control data c and returns its
// status and VLAN fields, without allocating.
func Aux(c []byte) (status uint32, tci, tpid uint16, ok bool) {
	for len(c) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&c[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(c) {
			return 0, 0, 0, false
		}
		if h.Level == unix.SOL_PACKET && h.Type == unix.PACKET_AUXDATA && l >= unix.SizeofCmsghdr+sizeofAuxdata {
			a := (*unix.TpacketAuxdata)(unsafe.Pointer(&c[unix.SizeofCmsghdr]))
			return a.Status, a.Vlan_tci, a.Vlan_tpid, true
		}
		next := (l + unix.SizeofPtr - 1) &^ (unix.SizeofPtr - 1)
		if next >= len(c) {
			break
		}
		c = c[next:]
	}
	return 0, 0, 0, false
}

// sizeofAuxdata is sizeof(struct tpacket_auxdata).
const sizeofAuxdata = int(unsafe.Sizeof(unix.TpacketAuxdata{}))
