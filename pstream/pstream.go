package pstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
)

// LogModule is the vlog module of the lines this package writes, as in
// Open vSwitch (lib/socket-util.c).
const LogModule = "socket_util"

// TCPAddr is a parsed "PORT[:IP]" passive address.
type TCPAddr struct {
	Network string     // "tcp4" or "tcp6"
	IP      netip.Addr // may carry an IPv6 zone ("fe80::1%eth0")
	Port    int
}

// String is the address in Go's listen form.
func (a TCPAddr) String() string {
	return netip.AddrPortFrom(a.IP, uint16(a.Port)).String()
}

// AddrError is a target that does not parse; Open vSwitch logs it under
// socket_util and then never tries to bind.
type AddrError struct{ Text string }

func (e *AddrError) Error() string { return e.Text }

func addrError(format string, args ...any) error {
	return &AddrError{Text: fmt.Sprintf(format, args...)}
}

// ParseTCP reads the "PORT[:IP]" part of a ptcp: or pssl: target. An empty
// port means defaultPort; no IP means 0.0.0.0 (IPv4 only, as in Open
// vSwitch). Brackets around the address are optional for IPv4 and needed
// for IPv6 (whose colons would otherwise end the port). Errors read as
// Open vSwitch's, prefixed with the target text. Open vSwitch also takes a
// host name and resolves it; gvs does not (a "bad IP address" error).
func ParseTCP(arg string, defaultPort int) (TCPAddr, error) {
	portText, host, _ := strings.Cut(arg, ":")
	port := defaultPort
	if portText != "" {
		p, err := strconv.ParseUint(portText, 10, 16)
		if err != nil {
			return TCPAddr{}, addrError("%s: bad port number \"%s\"", arg, portText)
		}
		port = int(p)
	}
	if host == "" {
		return TCPAddr{Network: "tcp4", IP: netip.IPv4Unspecified(), Port: port}, nil
	}
	bracketed := strings.HasPrefix(host, "[")
	if bracketed {
		host = strings.TrimSuffix(host[1:], "]")
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case err != nil:
		return TCPAddr{}, addrError("%s: bad IP address \"%s\"", arg, host)
	case ip.Is4() || ip.Is4In6() && ip.Zone() == "":
		return TCPAddr{Network: "tcp4", IP: ip.Unmap(), Port: port}, nil
	case !bracketed:
		// "PORT:::1": Open vSwitch reads the first colon of an unbracketed
		// IPv6 address as the end of the port.
		return TCPAddr{}, addrError("%s: port must be specified", arg)
	}
	return TCPAddr{Network: "tcp6", IP: ip, Port: port}, nil
}

// ListenTCP binds "PORT[:IP]" (the text after "ptcp:" or "pssl:") and,
// when the port is 0 (the kernel chooses), logs "0[:IP]: listening on port
// N" at INFO under socket_util, as Open vSwitch's inet_open_passive does; failures are logged there at ERR in
// its words too ("ARG: bind: Cannot assign requested address") and
// returned as the bare system error text.
func ListenTCP(arg string, defaultPort int, logger *slog.Logger) (net.Listener, error) {
	logger = logger.With(slog.String("module", LogModule))
	addr, err := ParseTCP(arg, defaultPort)
	if err != nil {
		logger.Error(err.Error())
		return nil, err
	}
	ln, err := net.Listen(addr.Network, addr.String())
	if err != nil {
		text := ErrnoText(err)
		logger.Error(fmt.Sprintf("%s: bind: %s", arg, text))
		return nil, &sysError{text: text, err: err}
	}
	if addr.Port == 0 {
		// Only a port the kernel chose is logged, as in Open vSwitch.
		logger.Info(fmt.Sprintf("%s: listening on port %d", arg, ln.Addr().(*net.TCPAddr).Port))
	}
	return ln, nil
}

// UnixSocketMode is the mode Open vSwitch gives every unix socket it binds
// (user and group may connect); the kernel takes the umask off it.
const UnixSocketMode = 0o770

// ListenUnix binds a unix socket at path with mode 0770 less the umask,
// set on the socket before bind as Open vSwitch does, so the file never
// exists with a wider mode. Open vSwitch logs nothing for punix: either.
// Closing the listener does not remove the file.
func ListenUnix(path string) (*net.UnixListener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) { err = syscall.Fchmod(int(fd), UnixSocketMode) }); cerr != nil {
			return cerr
		}
		return err
	}}
	ln, err := lc.Listen(context.Background(), "unix", path)
	if err != nil {
		return nil, err
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	return ul, nil
}

// sysError reads as the C library's text of the system error it wraps.
type sysError struct {
	text string
	err  error
}

func (e *sysError) Error() string { return e.text }
func (e *sysError) Unwrap() error { return e.err }

// ErrnoText is the C library's text for the system error inside err
// ("Address already in use"), as Open vSwitch's ovs_strerror prints it, or
// err's own text when it holds none.
func ErrnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		text := errno.Error()
		return strings.ToUpper(text[:1]) + text[1:]
	}
	return err.Error()
}
