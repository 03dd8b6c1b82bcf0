package storage

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// fileLock is Open vSwitch's lock file beside a database: ".NAME.~lock~",
// held with an open-file-description lock (which also conflicts with the
// POSIX lock ovsdb-server takes, and with a second open in this process), so neither two gvs servers nor gvs and
// ovsdb-server write one database at once.
type fileLock struct{ f *os.File }

// lockName is the lock file of the database at path: beside the file a
// symbolic link at path leads to, as Open vSwitch names it.
func lockName(path string) string {
	if target, err := followSymlinks(path); err == nil {
		path = target
	}
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".~lock~")
}

func lockFile(path string) (*fileLock, error) {
	name := lockName(path)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: failed to open lock file: %w", name, err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		holder := unix.Flock_t{Type: unix.F_WRLCK}
		_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &holder)
		f.Close()
		return nil, fmt.Errorf("%s: failed to lock lockfile (database locked by pid %d): %w", path, holder.Pid, err)
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) release() {
	if l != nil && l.f != nil {
		l.f.Close() // closing drops the POSIX lock
		l.f = nil
	}
}
