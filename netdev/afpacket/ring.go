package afpacket

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

// Layout of the TPACKET_V3 structures in the ring (linux/if_packet.h).
const (
	// struct tpacket_block_desc: version, offset_to_priv, then
	// struct tpacket_hdr_v1.
	blockStatusOff = 8
	blockNumPkts   = 12
	blockFirstPkt  = 16

	// struct tpacket3_hdr.
	tpacket3HdrLen = 48
	hdrNextOffset  = 0
	hdrSnaplen     = 12
	hdrLen         = 16
	hdrStatus      = 20
	hdrMac         = 24
	hdrRxHash      = 28
	hdrVlanTCI     = 32
	hdrVlanTPID    = 36

	tpFeatureFillRxHash = 1 // TP_FT_REQ_FILL_RXHASH
)

// rxRing walks the TPACKET_V3 ring of one socket. Only the goroutine
// polling its queue touches it.
type rxRing struct {
	mem       []byte
	blockSize int
	blocks    int

	block int // index of the block being read or waited for
	left  int // packets still to read in the open block; 0: none open
	off   int // offset of the next packet inside the open block
}

func (r *rxRing) blockMem() []byte {
	return r.mem[r.block*r.blockSize : (r.block+1)*r.blockSize]
}

func (r *rxRing) status() *uint32 { return r.statusOf(r.block) }

func (r *rxRing) statusOf(block int) *uint32 {
	return (*uint32)(unsafe.Pointer(&r.mem[block*r.blockSize+blockStatusOff]))
}

// open takes the current block if the kernel has handed it to user space,
// and reports whether it did and whether the kernel lost packets while
// filling it (TP_STATUS_LOSING).
func (r *rxRing) open() (ok, losing bool) {
	st := atomic.LoadUint32(r.status())
	if st&unix.TP_STATUS_USER == 0 {
		return false, false
	}
	b := r.blockMem()
	r.left = int(binary.NativeEndian.Uint32(b[blockNumPkts:]))
	r.off = int(binary.NativeEndian.Uint32(b[blockFirstPkt:]))
	if r.left == 0 {
		r.release()
	}
	return true, st&unix.TP_STATUS_LOSING != 0
}

// release gives the open block back to the kernel and moves to the next.
func (r *rxRing) release() {
	atomic.StoreUint32(r.status(), unix.TP_STATUS_KERNEL)
	r.left = 0
	r.block = (r.block + 1) % r.blocks
}

// frame describes the packet at the read position.
type frame struct {
	data []byte // the frame as captured (snaplen bytes)
	vnet []byte // the virtio_net_hdr in front of it
	wire int    // its length on the wire (tp_len)
	// slotOff is where data starts in its TPACKET_V2 slot.
	slotOff int
	status  uint32
	rxHash  uint32 // 0: none
	// vlanTCI and vlanTPID are the tag the kernel stripped, valid
	// with TP_STATUS_VLAN_VALID (and TP_STATUS_VLAN_TPID_VALID).
	vlanTCI, vlanTPID uint16
}

// peek returns the packet at the read position; ok is false when the
// block's bookkeeping points outside it (a kernel/ABI mismatch: the block
// is released and skipped).
func (r *rxRing) peek() (f frame, ok bool) {
	b := r.blockMem()
	if r.off+tpacket3HdrLen > len(b) {
		return f, false
	}
	h := b[r.off : r.off+tpacket3HdrLen]
	mac := r.off + int(binary.NativeEndian.Uint16(h[hdrMac:]))
	snap := int(binary.NativeEndian.Uint32(h[hdrSnaplen:]))
	if mac-packet.VnetHdrLen < r.off+tpacket3HdrLen || mac+snap > len(b) {
		return f, false
	}
	return frame{
		data:     b[mac : mac+snap],
		vnet:     b[mac-packet.VnetHdrLen : mac],
		wire:     int(binary.NativeEndian.Uint32(h[hdrLen:])),
		status:   binary.NativeEndian.Uint32(h[hdrStatus:]),
		rxHash:   binary.NativeEndian.Uint32(h[hdrRxHash:]),
		vlanTCI:  uint16(binary.NativeEndian.Uint32(h[hdrVlanTCI:])),
		vlanTPID: binary.NativeEndian.Uint16(h[hdrVlanTPID:]),
	}, true
}

// next moves past the packet at the read position.
func (r *rxRing) next() {
	b := r.blockMem()
	r.off += int(binary.NativeEndian.Uint32(b[r.off+hdrNextOffset:]))
	r.left--
	if r.left == 0 {
		r.release()
	}
}

// fill copies f into buf (the one copy on receive) with its metadata:
// the virtio_net_hdr, the receive hash and the VLAN tag the kernel
// stripped, put back into the frame. It reports false if the frame does
// not fit buf or was truncated by the ring.
func fill(buf *packet.Buffer, f frame) bool {
	if len(f.data) < f.wire || len(f.data) > buf.Tailroom() {
		return false
	}
	copy(buf.Room(), f.data)
	buf.SetLen(len(f.data))
	buf.HasVnet = buf.Vnet.Decode(f.vnet)
	if f.rxHash != 0 {
		buf.RSSHash, buf.HasRSSHash = f.rxHash, true
	}
	return restoreVLAN(buf, f)
}

// fillLent completes a buffer lent its frame in place (rxRingV2.lendNext)
// with the metadata, as fill does after its copy. On false the caller
// puts buf back, which returns the slot.
func fillLent(buf *packet.Buffer, f frame) bool {
	buf.HasVnet = buf.Vnet.Decode(f.vnet)
	return restoreVLAN(buf, f)
}

// restoreVLAN puts back into buf the VLAN tag the kernel stripped from
// frame f (reported in its ring header).
func restoreVLAN(buf *packet.Buffer, f frame) bool {
	if f.status&unix.TP_STATUS_VLAN_VALID == 0 {
		return true
	}
	tpid := packet.EtherTypeVLAN
	if f.status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
		tpid = f.vlanTPID
	}
	buf.StrippedVLAN = packet.VLANTag{TPID: tpid, TCI: f.vlanTCI}
	return buf.RestoreVLAN()
}
