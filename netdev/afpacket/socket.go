package afpacket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// htons turns a host-order 16-bit value into network order, as sockaddr_ll
// and socket(2) want the protocol.
func htons(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

// openSocket creates one AF_PACKET socket with its mmap'd receive ring
// (of the given shape, in the ring modes), bound to ifindex.
func openSocket(ifindex int, cfg Config, shape ringShape) (fd int, ring []byte, err error) {
	if fd, ring, err = newSocket(ifindex, cfg, shape); err != nil {
		return -1, nil, err
	}
	if err = bindSocket(fd, ifindex); err != nil {
		closeSocket(fd, ring)
		return -1, nil, err
	}
	return fd, ring, nil
}

// closeSocket unmaps a socket's ring (nil: none) and closes it. The
// mapping holds a reference to the socket: the kernel releases it (and
// waits for an RCU grace period) once both are gone.
func closeSocket(fd int, ring []byte) {
	if ring != nil {
		unix.Munmap(ring)
	}
	unix.Close(fd)
}

// openQueueSocket is openSocket for a queue Open opens: from a spare
// when cfg.Spares has one of the shape (only the membership and the bind
// are left to do: no grace period to wait for), else made here. spare
// reports the former: the ring is reserved in cfg.Budget already (Adopt,
// not Join). A spare that fails to bind is closed and its reservation
// released.
func openQueueSocket(ifindex int, cfg Config, shape ringShape) (fd int, ring []byte, spare bool, err error) {
	fd, ring, ok := cfg.Spares.take(cfg, shape)
	if !ok {
		fd, ring, err = openSocket(ifindex, cfg, shape)
		return fd, ring, false, err
	}
	if err = addMembership(fd, ifindex); err == nil {
		err = bindSocket(fd, ifindex)
	}
	if err != nil {
		closeSocket(fd, ring)
		cfg.Budget.Release(int64(shape.bytes()))
		return -1, nil, false, err
	}
	return fd, ring, true, nil
}

// bindSocket binds fd to ifindex: from then on it receives.
func bindSocket(fd, ifindex int) error {
	sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}
	if err := unix.Bind(fd, sa); err != nil {
		return os.NewSyscallError("bind", err)
	}
	return nil
}

// newSocket creates one AF_PACKET socket with its mmap'd receive ring
// (of the given shape, in the ring modes), a member of ifindex but not
// yet bound, in the order the kernel requires: PACKET_VNET_HDR fails with
// EBUSY once a ring exists, and binding last (bindSocket) keeps packets
// out until the ring is ready.
func newSocket(ifindex int, cfg Config, shape ringShape) (fd int, ring []byte, err error) {
	if fd, ring, err = newUnboundSocket(cfg, shape); err != nil {
		return -1, nil, err
	}
	if err = addMembership(fd, ifindex); err != nil {
		closeSocket(fd, ring)
		return -1, nil, err
	}
	return fd, ring, nil
}

// addMembership makes fd hear frames for every address on ifindex, as a
// switch port must; the kernel drops the membership (and promiscuity)
// when the socket closes.
func addMembership(fd, ifindex int) error {
	mreq := unix.PacketMreq{Ifindex: int32(ifindex), Type: unix.PACKET_MR_PROMISC}
	if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
		return fmt.Errorf("setsockopt PACKET_ADD_MEMBERSHIP: %w", err)
	}
	return nil
}

// newUnboundSocket creates one AF_PACKET socket with the options of
// cfg's mode and its mmap'd receive ring, tied to no device yet: the
// slow part of opening a queue (PACKET_RX_RING waits for an RCU grace
// period, and mmap populates the ring), which a SparePool does ahead of
// time.
func newUnboundSocket(cfg Config, shape ringShape) (fd int, ring []byte, err error) {
	fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return -1, nil, os.NewSyscallError("socket", err)
	}
	defer func() {
		if err != nil {
			closeSocket(fd, ring)
			fd, ring = -1, nil
		}
	}()
	opts := []struct {
		name string
		opt  int
		val  int
	}{
		{"PACKET_VERSION", unix.PACKET_VERSION, tpacketVersion(cfg.RxMode)},
		{"PACKET_VNET_HDR", unix.PACKET_VNET_HDR, 1},
		// Straight to the driver: the datapath is the queueing
		// discipline, and a qdisc would only add a lock and a copy.
		{"PACKET_QDISC_BYPASS", unix.PACKET_QDISC_BYPASS, 1},
		// Our own transmissions must not come back to us.
		{"PACKET_IGNORE_OUTGOING", unix.PACKET_IGNORE_OUTGOING, 1},
		// Drop malformed transmit frames instead of failing the call.
		{"PACKET_LOSS", unix.PACKET_LOSS, 1},
	}
	for _, o := range opts {
		if err = unix.SetsockoptInt(fd, unix.SOL_PACKET, o.opt, o.val); err != nil {
			return fd, nil, fmt.Errorf("setsockopt %s: %w", o.name, err)
		}
	}
	if cfg.RxMode == RxRingV2 {
		// Frames larger than a slot (GSO frames) come whole through
		// the socket's receive queue instead of truncated: any
		// non-zero value turns the copy on.
		if err = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_COPY_THRESH, 1); err != nil {
			return fd, nil, fmt.Errorf("setsockopt PACKET_COPY_THRESH: %w", err)
		}
	}
	if cfg.RxMode == RxRecvmmsg {
		// VLAN tags the kernel stripped come as PACKET_AUXDATA.
		if err = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
			return fd, nil, fmt.Errorf("setsockopt PACKET_AUXDATA: %w", err)
		}
	}
	if ring, err = mapRing(fd, cfg, shape); err != nil {
		return fd, nil, err
	}
	return fd, ring, nil
}

// tpacketVersion is the PACKET_VERSION for a receive mode (recvmmsg
// uses no ring; V3 is as good as any there).
func tpacketVersion(mode string) int {
	if mode == RxRingV2 {
		return unix.TPACKET_V2
	}
	return unix.TPACKET_V3
}

// mapRing sets up and maps the receive ring of the given shape when the
// mode has one. (A PACKET_TX_RING would be mapped in the same mmap, after
// it; sendmmsg measured faster, see the package doc.)
func mapRing(fd int, cfg Config, shape ringShape) ([]byte, error) {
	var err error
	switch cfg.RxMode {
	case RxRing:
		req := unix.TpacketReq3{
			Block_size:       uint32(shape.blockSize),
			Block_nr:         uint32(shape.blocks),
			Frame_size:       frameSize,
			Frame_nr:         uint32(shape.blockSize / frameSize * shape.blocks),
			Retire_blk_tov:   uint32(max(cfg.RetireTimeout.Milliseconds(), 1)),
			Feature_req_word: tpFeatureFillRxHash,
		}
		err = unix.SetsockoptTpacketReq3(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req)
	case RxRingV2:
		req := unix.TpacketReq{
			Block_size: uint32(shape.blockSize),
			Block_nr:   uint32(shape.blocks),
			Frame_size: uint32(shape.frameSize),
			Frame_nr:   uint32(shape.blockSize / shape.frameSize * shape.blocks),
		}
		err = unix.SetsockoptTpacketReq(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("setsockopt PACKET_RX_RING (%d x %d bytes): %w", shape.blocks, shape.blockSize, err)
	}
	ring, err := unix.Mmap(fd, 0, shape.bytes(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	return ring, nil
}

// joinFanout puts fd into fanout group id, spreading flows by hash.
func joinFanout(fd int, id uint16) error {
	v := int(id) | (unix.PACKET_FANOUT_HASH|unix.PACKET_FANOUT_FLAG_DEFRAG)<<16
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_FANOUT, v); err != nil {
		return fmt.Errorf("setsockopt PACKET_FANOUT: %w", err)
	}
	return nil
}

// newFanout creates a fanout group for fd, trying ids from id on while
// they are taken by groups of other devices or types (EINVAL).
func newFanout(fd int, id uint16) (uint16, error) {
	var err error
	for range 64 {
		if err = joinFanout(fd, id); !errors.Is(err, unix.EINVAL) {
			return id, err
		}
		id++
	}
	return id, err
}
