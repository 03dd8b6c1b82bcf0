package afxdp

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DefaultGroupChunks is the size of a UMEMGroup whose GroupConfig leaves
// Chunks zero: 16384 chunks of 2048 bytes (32 MiB, pinned), room for
// four queues at the default ring size (each reserves 2 × RingSize).
const DefaultGroupChunks = 16384

// GroupConfig sizes a UMEMGroup. The size is fixed: the kernel cannot grow
// a UMEM once registered, so a queue that finds the group full falls back
// to a private UMEM (see Open).
type GroupConfig struct {
	// Chunks is the number of chunks; 0 means DefaultGroupChunks.
	Chunks int
	// ChunkSize is 2048 or 4096; 0 means 2048. Devices whose MTU needs a
	// bigger chunk get a private UMEM.
	ChunkSize int
	Logger    *slog.Logger // nil: slog.Default()
}

// UMEMGroup is one UMEM shared by the AF_XDP sockets of every device
// opened with it (Config.UMEM): the first socket registers it
// (XDP_UMEM_REG), the others bind with XDP_SHARED_UMEM, each with its own
// fill and completion rings. A frame received on one member is lent to
// its packet.Buffer in place, and sent by another member as a descriptor
// of the same chunk: no copy in user space. See the package
// documentation.
//
// Free chunks live in a group-wide free list under mu; sockets take and
// give them in batches through per-queue caches (chunkCache), never per
// packet. Safe for concurrent use; the caller closes it after (or
// before) its devices: the memory stays mapped until the group is
// closed, no member is left and every loan has come back.
type UMEMGroup struct {
	chunks    int
	chunkSize uint64
	logger    *slog.Logger
	// private: made by Open for one device, closed with it.
	private bool

	// joinMu serialises joining and leaving (registration, the choice
	// of the socket new members share with); it is held across socket
	// setup, so it is not mu, which the packet path takes per batch.
	joinMu  sync.Mutex
	members []*xsk // bound sockets, in join order
	sg      bool   // the UMEM was registered by a socket bound with XDP_USE_SG

	mu       sync.Mutex
	mem      []byte   // mapped at the first join
	free     []uint64 // chunk addresses, cap == chunks
	reserved int      // chunks promised to member queues (2 × their ring size)
	orphans  int      // loans still out from members that closed
	live     int      // len(members), for what holds mu only
	closed   bool
	stats    groupStats
}

// groupStats are counted under mu.
type groupStats struct {
	takes, gives uint64 // batch transfers from and to the free list
	lost         uint64 // chunks a closing socket could not recover
}

// NewUMEMGroup returns an empty group; its memory is mapped when the first
// device joins.
func NewUMEMGroup(cfg GroupConfig) (*UMEMGroup, error) {
	if cfg.Chunks == 0 {
		cfg.Chunks = DefaultGroupChunks
	}
	if cfg.ChunkSize == 0 {
		cfg.ChunkSize = smallChunk
	}
	if cfg.ChunkSize != smallChunk && cfg.ChunkSize != largeChunk {
		return nil, fmt.Errorf("UMEM group: chunk size %d (want %d or %d)", cfg.ChunkSize, smallChunk, largeChunk)
	}
	if cfg.Chunks < 128 || cfg.Chunks*cfg.ChunkSize > 1<<30 {
		return nil, fmt.Errorf("UMEM group: %d chunks of %d bytes (want at least 128, at most 1 GiB)", cfg.Chunks, cfg.ChunkSize)
	}
	return newGroup(cfg.Chunks, cfg.ChunkSize, cfg.Logger), nil
}

func newGroup(chunks, chunkSize int, logger *slog.Logger) *UMEMGroup {
	if logger == nil {
		logger = slog.Default()
	}
	return &UMEMGroup{chunks: chunks, chunkSize: uint64(chunkSize), logger: logger}
}

// errGroupFull and errGroupClosed make Open fall back to a private UMEM.
var (
	errGroupFull   = errors.New("shared UMEM full")
	errGroupClosed = errors.New("shared UMEM group closed")
)

// reserve promises n chunks to a joining queue and maps the memory on
// the first join. It returns the memory.
func (g *UMEMGroup) reserve(n int) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errGroupClosed
	}
	if g.reserved+n > g.chunks {
		return nil, fmt.Errorf("%w: %d of %d chunks reserved, a queue needs %d", errGroupFull, g.reserved, g.chunks, n)
	}
	if g.mem == nil {
		size := g.chunks * int(g.chunkSize)
		mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
		if err != nil {
			return nil, fmt.Errorf("mmap %d-byte UMEM: %w", size, err)
		}
		g.mem = mem
		g.free = make([]uint64, g.chunks)
		g.resetFree()
	}
	g.reserved += n
	return g.mem, nil
}

// resetFree puts every chunk on the free list in ascending order
// (takeInto hands out the top of the list in list order): fill rings
// start with runs of consecutive chunks.
func (g *UMEMGroup) resetFree() {
	for i := range g.free {
		g.free[i] = uint64(i) * g.chunkSize
	}
}

// unreserve gives back what reserve promised.
func (g *UMEMGroup) unreserve(n int) {
	g.mu.Lock()
	g.reserved -= n
	g.mu.Unlock()
}

// register hands the memory to the group's first socket.
func (g *UMEMGroup) register(fd int) error {
	reg := unix.XDPUmemReg{
		Addr: uint64(uintptr(unsafe.Pointer(&g.mem[0]))),
		Len:  uint64(len(g.mem)),
		Size: uint32(g.chunkSize),
	}
	if err := setsockopt(fd, unix.XDP_UMEM_REG, unsafe.Pointer(&reg), unsafe.Sizeof(reg)); err != nil {
		return fmt.Errorf("XDP_UMEM_REG (%d bytes, chunk %d): %w", len(g.mem), g.chunkSize, err)
	}
	return nil
}

// shareWith picks the bound member a new socket for (ifindex, queue)
// shares the UMEM with: any socket on another device or queue (on the
// same one, the kernel would share its fill and completion rings too,
// which two owners cannot). Nil means none: register. Call with joinMu.
func (g *UMEMGroup) shareWith(ifindex, queue int) (*xsk, error) {
	for _, m := range g.members {
		if m.ifindex != ifindex || m.queue != queue {
			return m, nil
		}
	}
	if len(g.members) > 0 {
		return nil, fmt.Errorf("queue %d of ifindex %d is already a member", queue, ifindex)
	}
	return nil, nil
}

// takeInto fills dst with free chunks, as many as there are, and
// returns how many: one lock per batch. They come off the top of the
// free list (the batch given back last), in the order they were given.
func (g *UMEMGroup) takeInto(dst []uint64) int {
	g.mu.Lock()
	k := min(len(dst), len(g.free))
	copy(dst, g.free[len(g.free)-k:])
	g.free = g.free[:len(g.free)-k]
	g.stats.takes++
	g.mu.Unlock()
	return k
}

// give puts chunks back on the free list: one lock per batch.
func (g *UMEMGroup) give(addrs []uint64) {
	if len(addrs) == 0 {
		return
	}
	g.mu.Lock()
	g.free = append(g.free, addrs...)
	g.stats.gives++
	g.mu.Unlock()
}

// orphaned records loans a closing socket left out; returnOrphan takes
// one back, and the last one may unmap a closed group.
func (g *UMEMGroup) orphaned(n int) {
	g.mu.Lock()
	g.orphans += n
	g.mu.Unlock()
}

func (g *UMEMGroup) returnOrphan(addr uint64, toFree bool) {
	g.mu.Lock()
	g.orphans--
	if toFree {
		g.free = append(g.free, addr)
	}
	g.maybeUnmapLocked()
	g.mu.Unlock()
}

// lose counts chunks a closing socket could not get back from the kernel.
func (g *UMEMGroup) lose(n uint64) {
	g.mu.Lock()
	g.stats.lost += n
	g.mu.Unlock()
}

// joined records a bound member. Call with joinMu.
func (g *UMEMGroup) joined(s *xsk) {
	g.members = append(g.members, s)
	g.mu.Lock()
	g.live = len(g.members)
	g.mu.Unlock()
}

// left is called (with joinMu) once a member's socket is closed.
func (g *UMEMGroup) left(s *xsk) {
	for i, m := range g.members {
		if m == s {
			g.members = append(g.members[:i], g.members[i+1:]...)
			break
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.live = len(g.members)
	if g.live == 0 && g.orphans == 0 && g.mem != nil {
		// The kernel let go of the UMEM with the last socket: every chunk
		// is ours again, also any the kernel kept when sockets closed.
		g.free = g.free[:g.chunks]
		g.resetFree()
		g.stats.lost = 0
	}
	g.maybeUnmapLocked()
}

// Close marks the group closed: no new member joins (Open falls back to
// a private UMEM). The memory is unmapped once the last member has closed
// and the last loan has come back. Idempotent.
func (g *UMEMGroup) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.maybeUnmapLocked()
	return nil
}

// maybeUnmapLocked unmaps a closed group's memory when nothing can touch
// it any more. Call with mu.
func (g *UMEMGroup) maybeUnmapLocked() {
	if g.closed && g.mem != nil && g.live == 0 && g.orphans == 0 {
		_ = unix.Munmap(g.mem)
		g.mem, g.free = nil, nil
	}
}

// GroupStats is a snapshot of a group's state.
type GroupStats struct {
	Chunks, Free, Reserved int
	Members                int    // bound sockets
	Lost                   uint64 // chunks kept by the kernel when sockets closed, until the last member leaves
	Takes, Gives           uint64 // batch transfers from and to the free list
}

// Stats returns a snapshot; safe from any goroutine.
func (g *UMEMGroup) Stats() GroupStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return GroupStats{Chunks: g.chunks, Free: len(g.free), Reserved: g.reserved, Members: g.live,
		Lost: g.stats.lost, Takes: g.stats.takes, Gives: g.stats.gives}
}
