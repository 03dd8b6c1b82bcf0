package connmgr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gvs/pstream"
)

// DefaultPort is OpenFlow's IANA port, Open vSwitch's OFP_PORT.
const DefaultPort = "6653"

// errNoSSL is what an ssl: or pssl: target fails with: gvs has no SSL
// configuration (the SSL table is not read), which Open vSwitch reports as
// ENOPROTOOPT ("Protocol not available") when no private key is set.
var errNoSSL = syscall.ENOPROTOOPT

// isActive reports whether target names a connection to make (tcp:, unix:,
// ssl:), as opposed to one to listen on (ptcp:, punix:, pssl:).
func isActive(target string) bool {
	return strings.HasPrefix(target, "tcp:") || strings.HasPrefix(target, "unix:") || strings.HasPrefix(target, "ssl:")
}

// isPassive reports whether target names a listener.
func isPassive(target string) bool {
	return strings.HasPrefix(target, "ptcp:") || strings.HasPrefix(target, "punix:") || strings.HasPrefix(target, "pssl:")
}

// sockPath resolves a unix socket path: relative paths are relative to
// the run directory, as Open vSwitch's unix streams.
func sockPath(p, rundir string) string {
	if filepath.IsAbs(p) || rundir == "" {
		return p
	}
	return filepath.Join(rundir, p)
}

// dialTarget connects to an active target.
func dialTarget(ctx context.Context, target, rundir string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	switch {
	case strings.HasPrefix(target, "tcp:"):
		addr, err := activeTCPAddr(strings.TrimPrefix(target, "tcp:"))
		if err != nil {
			return nil, err
		}
		return d.DialContext(ctx, "tcp", addr)
	case strings.HasPrefix(target, "unix:"):
		return d.DialContext(ctx, "unix", sockPath(strings.TrimPrefix(target, "unix:"), rundir))
	case strings.HasPrefix(target, "ssl:"):
		return nil, errNoSSL
	}
	return nil, syscall.EAFNOSUPPORT
}

// activeTCPAddr turns "IP[:PORT]" (IPv6 in brackets) into host:port.
func activeTCPAddr(s string) (string, error) {
	if s == "" {
		return "", syscall.EINVAL
	}
	if host, port, err := net.SplitHostPort(s); err == nil {
		return net.JoinHostPort(host, port), nil
	}
	h := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	return net.JoinHostPort(h, DefaultPort), nil
}

// listenTarget opens a passive target: "ptcp:[PORT][:IP]" (default port
// 6653 on 0.0.0.0) or "punix:PATH" (an old socket file there is
// removed first, as Open vSwitch does).
func listenTarget(target, rundir string, log *slog.Logger) (net.Listener, error) {
	switch {
	case strings.HasPrefix(target, "ptcp:"):
		// Bound exactly as given, with Open vSwitch's socket_util line.
		port, _ := strconv.Atoi(DefaultPort)
		return pstream.ListenTCP(strings.TrimPrefix(target, "ptcp:"), port, log)
	case strings.HasPrefix(target, "punix:"):
		p := sockPath(strings.TrimPrefix(target, "punix:"), rundir)
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		l, err := pstream.ListenUnix(p) // mode 0770 less the umask
		if err != nil {
			return nil, err
		}
		l.SetUnlinkOnClose(true)
		return l, nil
	case strings.HasPrefix(target, "pssl:"):
		return nil, errNoSSL
	}
	return nil, fmt.Errorf("%s: %w", target, syscall.EAFNOSUPPORT)
}

// errnoString is Open vSwitch's ovs_retval_to_string for an error from the
// stream layer: the errno's text ("Connection refused"), "End of file" for
// a closed connection, else the error's own text.
func errnoString(err error) string {
	var en syscall.Errno
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errEOF):
		return "End of file"
	case errors.As(err, &en):
		return capitalize(en.Error())
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return capitalize(syscall.ETIMEDOUT.Error())
	}
	return err.Error()
}

// capitalize turns Go's errno text ("connection refused") into the C
// library's ("Connection refused").
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
