package setups

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// socketBufferSysctls are the global (not per-namespace) defaults and caps
// of socket buffer sizes.
var socketBufferSysctls = []string{
	"/proc/sys/net/core/rmem_default", "/proc/sys/net/core/wmem_default",
	"/proc/sys/net/core/rmem_max", "/proc/sys/net/core/wmem_max",
}

// socketBufferMaxSysctls are only the caps: what SO_RCVBUF/SO_SNDBUF may
// ask for. Sockets that ask for nothing keep the defaults.
var socketBufferMaxSysctls = []string{"/proc/sys/net/core/rmem_max", "/proc/sys/net/core/wmem_max"}

// raiseSocketBuffers sets every socket buffer sysctl to bytes and returns
// a function restoring the old values (safe to call more than once).
func raiseSocketBuffers(bytes string) (restore func() error, err error) {
	return setSysctls(socketBufferSysctls, func(string) string { return bytes })
}

// RaiseSocketBufferMax raises net.core.rmem_max and wmem_max to at least
// bytes (a larger value stays), leaving the defaults alone, and returns a
// function restoring the old values (safe to call more than once). The
// benchmark keeps them raised for the whole session so that the receiving
// iperf3's -w is granted in full.
func RaiseSocketBufferMax(bytes int) (restore func() error, err error) {
	return setSysctls(socketBufferMaxSysctls, func(old string) string {
		if v, err := strconv.Atoi(old); err == nil && v >= bytes {
			return old
		}
		return strconv.Itoa(bytes)
	})
}

// setSysctls writes value(old) to each path and returns the restore
// function; on error what was changed is restored already.
func setSysctls(paths []string, value func(old string) string) (restore func() error, err error) {
	old := map[string]string{}
	restore = func() error {
		var errs []error
		for path, v := range old {
			if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
				errs = append(errs, err)
			} else {
				delete(old, path)
			}
		}
		return errors.Join(errs...)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return restore, errors.Join(err, restore())
		}
		was := strings.TrimSpace(string(data))
		v := value(was)
		if v == was {
			continue
		}
		old[path] = was
		if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
			return restore, errors.Join(err, restore())
		}
	}
	return restore, nil
}
