package packet

// Default sizes. A 64 KiB GSO frame is an IP packet of up to 65535 bytes
// behind an Ethernet header and up to two VLAN tags; DefaultFrameSize adds
// room for all of that. DefaultHeadroom leaves space for a virtio_net_hdr
// and several VLAN pushes without moving the payload.
const (
	DefaultHeadroom  = 128
	DefaultFrameSize = 64*1024 + 128
)

// Meta is a buffer's metadata: what the receiving device told us, and what
// the packet path has learnt. Buffer.Reset zeroes it.
type Meta struct {
	// InPort is the datapath port number the frame arrived on.
	InPort uint32

	// RSSHash is the receive hash from the device, valid if HasRSSHash.
	RSSHash    uint32
	HasRSSHash bool

	// HasVnet says Vnet came with the frame (the port runs with a
	// virtio_net_hdr) and must be honoured or resolved before the frame
	// leaves on a port without one.
	HasVnet bool
	Vnet    VnetHdr

	// StrippedVLAN is a tag the receiving device removed (AF_PACKET's
	// tp_vlan_tci/tp_vlan_tpid); Present() means it is not yet put back.
	// RestoreVLAN reinserts it. A device that reports no TPID should
	// record EtherTypeVLAN.
	StrippedVLAN VLANTag

	// Offsets are where the last Parse found the L3 and L4 headers,
	// relative to Data(). VLAN push/pop keep them current.
	Offsets Offsets
}

// Buffer holds one frame with headroom in front of it, so headers can be
// pushed (Prepend) and popped (Pull) without copying the payload.
//
// Layout of the backing array:
//
//	[ headroom | data (Data()) | tailroom ]
//	0          off             end        len(buf)
//
// A Buffer belongs to one goroutine at a time; see the package
// documentation for who owns it when.
type Buffer struct {
	buf      []byte
	off, end int
	headroom int // headroom restored by Reset

	pool   *Pool // origin, nil for NewBuffer
	inPool bool  // catches double Put
	loan   loan  // borrowed backing (Lend), given back by Put

	Meta
	// Key is the flow key slot, filled by Parse.
	Key Key
}

// NewBuffer allocates a buffer outside any pool (tests, slow paths):
// headroom bytes in front, frameSize bytes for the frame.
func NewBuffer(headroom, frameSize int) *Buffer {
	b := &Buffer{}
	b.init(make([]byte, headroom+frameSize), headroom, nil)
	return b
}

func (b *Buffer) init(buf []byte, headroom int, p *Pool) {
	b.buf = buf
	b.headroom = headroom
	b.pool = p
	b.Reset()
}

// Reset empties the buffer, restores the configured headroom and zeroes
// the metadata and key.
func (b *Buffer) Reset() {
	b.off = b.headroom
	b.end = b.headroom
	b.Meta = Meta{}
	b.Key = Key{}
}

// Data returns the frame. Its capacity is its length, so an append cannot
// silently write into the tailroom; use SetLen to grow.
func (b *Buffer) Data() []byte { return b.buf[b.off:b.end:b.end] }

// Len returns the frame length.
func (b *Buffer) Len() int { return b.end - b.off }

// Headroom returns how many bytes Prepend can still add.
func (b *Buffer) Headroom() int { return b.off }

// Tailroom returns how many bytes SetLen can still add.
func (b *Buffer) Tailroom() int { return len(b.buf) - b.end }

// Room returns the data window stretched to the end of the buffer: receive
// into it, then SetLen to the number of bytes received.
func (b *Buffer) Room() []byte { return b.buf[b.off:] }

// SetLen sets the frame length, keeping its start. It panics if n is
// negative or beyond the tailroom (a caller bug, like a slice overrun).
func (b *Buffer) SetLen(n int) {
	if n < 0 || b.off+n > len(b.buf) {
		panic("packet: SetLen out of range")
	}
	b.end = b.off + n
}

// Prepend grows the frame by n bytes at the front and returns them (their
// contents are whatever was there). It panics if n exceeds Headroom.
func (b *Buffer) Prepend(n int) []byte {
	if n < 0 || n > b.off {
		panic("packet: Prepend beyond headroom")
	}
	b.off -= n
	return b.buf[b.off : b.off+n : b.off+n]
}

// Pull removes n bytes from the front of the frame and returns them; they
// stay readable until the next Prepend. It panics if n exceeds Len.
func (b *Buffer) Pull(n int) []byte {
	if n < 0 || n > b.Len() {
		panic("packet: Pull beyond frame")
	}
	b.off += n
	return b.buf[b.off-n : b.off : b.off]
}

// Parse fills b.Key (with b.InPort) and b.Offsets from the frame. See Parse
// for the contract; callers count the returned Status. A tag the device
// stripped (StrippedVLAN) is not in the frame: call RestoreVLAN first.
func (b *Buffer) Parse() Status {
	b.Key.InPort = b.InPort
	return ParseOffsets(b.Data(), &b.Key, &b.Offsets)
}

// PullVnetHdr decodes a virtio_net_hdr at the front of the frame into
// b.Vnet, sets HasVnet and removes it. It reports false if the frame is
// shorter than the header.
func (b *Buffer) PullVnetHdr() bool {
	if !b.Vnet.Decode(b.Data()) {
		return false
	}
	b.HasVnet = true
	b.Pull(VnetHdrLen)
	return true
}

// PushVnetHdr encodes b.Vnet in front of the frame, for a device that
// expects a virtio_net_hdr before each frame. It reports false if there
// is not enough headroom.
func (b *Buffer) PushVnetHdr() bool {
	if b.Headroom() < VnetHdrLen {
		return false
	}
	b.Vnet.Encode(b.Prepend(VnetHdrLen))
	return true
}

// CopyFrom makes b a copy of src: frame bytes at the same headroom (or
// as much as b has), metadata and key. It reports false, leaving b
// unchanged, if the frame does not fit. Use it to send one packet to
// several ports.
func (b *Buffer) CopyFrom(src *Buffer) bool {
	n := src.Len()
	off := min(src.Headroom(), len(b.buf)-n)
	if off < 0 {
		return false
	}
	b.off, b.end = off, off+n
	copy(b.buf[off:b.end], src.Data())
	b.Meta = src.Meta
	b.Key = src.Key
	return true
}
