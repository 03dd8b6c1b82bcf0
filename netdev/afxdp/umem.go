package afxdp

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Chunk geometry. In copy mode the kernel writes a received frame
// XDP_PACKET_HEADROOM (256) bytes into the chunk it took from the fill
// ring, so the largest frame is the chunk size minus that headroom.
const (
	smallChunk   = 2048
	largeChunk   = 4096
	rxHeadroom   = unix.XDP_PACKET_HEADROOM
	maxSmallData = smallChunk - rxHeadroom // 1792
)

// chunkSizeFor picks the smallest chunk whose data room holds a frame of
// the given MTU with an Ethernet header and one VLAN tag.
func chunkSizeFor(mtu int) int {
	if mtu+ethVLANOverhead <= maxSmallData {
		return smallChunk
	}
	return largeChunk
}

// ethVLANOverhead is what the kernel lets a frame carry beyond the MTU
// (is_skb_forwardable: Ethernet header plus one VLAN tag).
const ethVLANOverhead = 14 + 4

// umem is one socket's packet memory: rxChunks chunks for the fill ring
// followed by txChunks chunks for transmission, in one anonymous mapping
// registered with the socket (XDP_UMEM_REG). Addresses the rings carry
// are byte offsets into it.
type umem struct {
	mem       []byte
	chunkSize uint64
	rxChunks  int
	txChunks  int
}

func newUMEM(rxChunks, txChunks, chunkSize int) (umem, error) {
	size := (rxChunks + txChunks) * chunkSize
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return umem{}, fmt.Errorf("mmap %d-byte UMEM: %w", size, err)
	}
	return umem{mem: mem, chunkSize: uint64(chunkSize), rxChunks: rxChunks, txChunks: txChunks}, nil
}

// register hands the memory to the socket. It needs CAP_IPC_LOCK beyond
// RLIMIT_MEMLOCK (8 MiB by default): the kernel pins the pages.
func (u *umem) register(fd int) error {
	reg := unix.XDPUmemReg{
		Addr: uint64(uintptr(unsafe.Pointer(&u.mem[0]))),
		Len:  uint64(len(u.mem)),
		Size: uint32(u.chunkSize),
	}
	if err := setsockopt(fd, unix.XDP_UMEM_REG, unsafe.Pointer(&reg), unsafe.Sizeof(reg)); err != nil {
		return fmt.Errorf("XDP_UMEM_REG (%d bytes, chunk %d): %w", len(u.mem), u.chunkSize, err)
	}
	return nil
}

func (u *umem) unmap() {
	if u.mem != nil {
		_ = unix.Munmap(u.mem)
		u.mem = nil
	}
}

// rxChunk and txChunk return the address of the i-th chunk of each kind.
func (u *umem) rxChunk(i int) uint64 { return uint64(i) * u.chunkSize }
func (u *umem) txChunk(i int) uint64 { return uint64(u.rxChunks+i) * u.chunkSize }

// chunkOf returns the start of the chunk holding addr: received frames
// start part-way into their chunk, and the fill ring wants chunk starts.
func (u *umem) chunkOf(addr uint64) uint64 { return addr &^ (u.chunkSize - 1) }

// frame returns n bytes at addr, or nil if they cross the chunk's end
// (which only a kernel bug or a corrupted ring would produce).
func (u *umem) frame(addr uint64, n uint32) []byte {
	end := addr + uint64(n)
	if end > uint64(len(u.mem)) || u.chunkOf(addr) != u.chunkOf(end-1) && n > 0 {
		return nil
	}
	return u.mem[addr:end:end]
}
