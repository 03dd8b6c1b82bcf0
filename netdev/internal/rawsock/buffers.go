package rawsock

import (
	"errors"
	"log/slog"

	"golang.org/x/sys/unix"
)

// Buffers are the effective socket buffer sizes as the kernel reports them
// (Linux doubles what was asked, for its own bookkeeping).
type Buffers struct{ Receive, Send int }

// GetBuffers reads SO_RCVBUF and SO_SNDBUF back.
func GetBuffers(fd int) (Buffers, error) {
	r, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	if err != nil {
		return Buffers{}, err
	}
	s, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	if err != nil {
		return Buffers{}, err
	}
	return Buffers{Receive: r, Send: s}, nil
}

// SetBuffers asks for bytes of receive and send buffer on an open socket,
// first with SO_*BUFFORCE (root or CAP_NET_ADMIN, not capped by
// net.core.[rw]mem_max), then, on EPERM, with the capped SO_*BUF. Only
// EBADF and ENOTSOCK (the socket is gone or is not one) are returned;
// anything else is logged as a warning, as Open vSwitch does, and the
// sizes read back say what took effect.
func SetBuffers(fd, bytes int, log *slog.Logger, name string) (Buffers, error) {
	for _, o := range [2][2]int{{unix.SO_RCVBUFFORCE, unix.SO_RCVBUF}, {unix.SO_SNDBUFFORCE, unix.SO_SNDBUF}} {
		err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, o[0], bytes)
		if errors.Is(err, unix.EPERM) {
			err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, o[1], bytes)
		}
		if fatal(err) {
			return Buffers{}, err
		}
		if err != nil && log != nil {
			log.Warn("setting socket buffer size failed", "device", name, "bytes", bytes, "err", err)
		}
	}
	b, err := GetBuffers(fd)
	if fatal(err) {
		return Buffers{}, err
	}
	return b, nil
}

func fatal(err error) bool {
	return errors.Is(err, unix.EBADF) || errors.Is(err, unix.ENOTSOCK)
}
