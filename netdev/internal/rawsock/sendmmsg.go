package rawsock

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsghdr is struct mmsghdr: a msghdr and the byte count the kernel sent.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
	_   [4]byte
}

// MsgBatch is a preallocated array of messages of two iovecs each (a
// virtio_net_hdr and a frame, or a frame alone), reused for every
// sendmmsg call of one transmit queue so the hot path never allocates.
type MsgBatch struct {
	msgs []mmsghdr
	iovs []unix.Iovec
	n    int
}

// NewMsgBatch allocates room for size messages.
func NewMsgBatch(size int) *MsgBatch {
	b := &MsgBatch{msgs: make([]mmsghdr, size), iovs: make([]unix.Iovec, 2*size)}
	for i := range b.msgs {
		b.msgs[i].hdr.Iov = &b.iovs[2*i]
	}
	return b
}

// Reset empties the batch and drops its references to frame memory.
func (b *MsgBatch) Reset() {
	for i := range b.n {
		b.iovs[2*i] = unix.Iovec{}
		b.iovs[2*i+1] = unix.Iovec{}
	}
	b.n = 0
}

// Len is the number of messages added since Reset.
func (b *MsgBatch) Len() int { return b.n }

// Add appends a message made of head (may be empty) followed by body. It
// reports false when the batch is full. The slices must stay valid and
// unmoved until the batch is sent and Reset.
func (b *MsgBatch) Add(head, body []byte) bool {
	if b.n == len(b.msgs) {
		return false
	}
	iov := b.iovs[2*b.n : 2*b.n+2]
	cnt := 0
	for _, p := range [2][]byte{head, body} {
		if len(p) == 0 {
			continue
		}
		iov[cnt].Base = &p[0]
		iov[cnt].SetLen(len(p))
		cnt++
	}
	m := &b.msgs[b.n]
	m.hdr.Iov = &iov[0]
	m.hdr.Iovlen = uint64(cnt)
	b.n++
	return true
}

// Send calls sendmmsg(2) for the messages from index first on, with flags
// (usually MSG_DONTWAIT), and returns how many the kernel took. Like the
// system call, it reports an error only when it sent none: the caller
// retries from first+sent, where the failing message will report its own
// error.
func (b *MsgBatch) Send(fd, first, flags int) (int, unix.Errno) {
	if first >= b.n {
		return 0, 0
	}
	r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd),
		uintptr(unsafe.Pointer(&b.msgs[first])), uintptr(b.n-first),
		uintptr(flags), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), 0
}

// Bytes returns the length of message i (all its iovecs).
func (b *MsgBatch) Bytes(i int) int {
	m := &b.msgs[i]
	n := 0
	for j := range int(m.hdr.Iovlen) {
		n += int(b.iovs[2*i+j].Len)
	}
	return n
}
