package setups

import (
	"errors"
	"os"
	"strings"
)

// socketBufferSysctls are the global (not per-namespace) defaults and caps
// of socket buffer sizes.
var socketBufferSysctls = []string{
	"/proc/sys/net/core/rmem_default", "/proc/sys/net/core/wmem_default",
	"/proc/sys/net/core/rmem_max", "/proc/sys/net/core/wmem_max",
}

// raiseSocketBuffers sets every socket buffer sysctl to bytes and returns
// a function restoring the old values (safe to call more than once).
func raiseSocketBuffers(bytes string) (restore func() error, err error) {
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
	for _, path := range socketBufferSysctls {
		data, err := os.ReadFile(path)
		if err != nil {
			return restore, errors.Join(err, restore())
		}
		old[path] = strings.TrimSpace(string(data))
		if err := os.WriteFile(path, []byte(bytes), 0o644); err != nil {
			return restore, errors.Join(err, restore())
		}
	}
	return restore, nil
}
