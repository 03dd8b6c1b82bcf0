package daemon

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Pidfile is a pidfile in Open vSwitch's format: the pid and a newline, with
// a POSIX write lock held by the daemon for as long as it runs.
// ovs-appctl -t NAME trusts the file only while that lock is held by the
// pid written in it.
type Pidfile struct {
	path string
	file *os.File // kept open: closing any descriptor of it drops the lock
}

// CreatePidfile writes and locks the pidfile, failing if another live
// process holds it (unless overwrite, like --overwrite-pidfile). Like Open
// vSwitch it writes PATH.tmp, locks it and renames it into place, so
// readers never see a half-written file.
func CreatePidfile(path string, overwrite bool) (*Pidfile, error) {
	pid := os.Getpid()
	tmp := path + ".tmp"
	if overwrite {
		tmp = fmt.Sprintf("%s.tmp%d", path, pid)
	}
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE, 0o666) // less the umask, as Open vSwitch
	if err != nil {
		return nil, fmt.Errorf("%s: create failed (%w)", tmp, err)
	}
	if err := lockFile(f, syscall.F_SETLK); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: fcntl(F_SETLK) failed (%w)", tmp, err)
	}
	fail := func(err error) (*Pidfile, error) {
		os.Remove(tmp)
		f.Close()
		return nil, err
	}
	if !overwrite {
		other, err := readPidfile(path, true)
		if err != nil {
			return fail(fmt.Errorf("%s: pidfile check failed (%w), aborting", path, err))
		}
		if other > 0 {
			return fail(fmt.Errorf("%s: already running as pid %d, aborting", path, other))
		}
	}
	if err := f.Truncate(0); err != nil {
		return fail(fmt.Errorf("%s: truncate failed (%w)", tmp, err))
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(pid)+"\n"), 0); err != nil {
		return fail(fmt.Errorf("%s: write failed (%w)", tmp, err))
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(fmt.Errorf("failed to rename %q to %q (%w)", tmp, path, err))
	}
	return &Pidfile{path: path, file: f}, nil
}

// Remove deletes the pidfile and releases its lock.
func (p *Pidfile) Remove() error {
	err := os.Remove(p.path)
	p.file.Close()
	return err
}

// ReadPidfile returns the pid of the live process that holds the pidfile,
// the way ovs-appctl finds a daemon. A stale or missing pidfile is an error.
func ReadPidfile(path string) (int, error) {
	pid, err := readPidfile(path, false)
	if err == nil && pid == 0 {
		err = fmt.Errorf("%s: %w", path, os.ErrNotExist)
	}
	return pid, err
}

// readPidfile returns the locking process's pid, or 0 when there is no live
// daemon; with deleteIfStale it removes a pidfile nobody holds.
func readPidfile(path string, deleteIfStale bool) (int, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) && deleteIfStale {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lck := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lck); err != nil {
		return 0, err
	}
	if lck.Type == syscall.F_UNLCK {
		if !deleteIfStale {
			return 0, fmt.Errorf("%s: pid file is stale", path)
		}
		// Only the process that locks a stale pidfile may delete it, so
		// two starting daemons cannot delete each other's fresh file.
		if err := lockFile(f, syscall.F_SETLK); err != nil {
			return 0, fmt.Errorf("%s: lost race to lock pidfile", path)
		}
		var st1, st2 syscall.Stat_t
		if syscall.Stat(path, &st1) != nil || syscall.Fstat(int(f.Fd()), &st2) != nil || st1.Ino != st2.Ino || st1.Dev != st2.Dev {
			return 0, fmt.Errorf("%s: lost race to delete pidfile", path)
		}
		if err := os.Remove(path); err != nil {
			return 0, fmt.Errorf("%s: failed to delete stale pidfile (%w)", path, err)
		}
		return 0, nil
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return 0, fmt.Errorf("%s: read: unexpected end of file", path)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	if int32(pid) != lck.Pid {
		return 0, fmt.Errorf("%s: stale pidfile for pid %d being deleted by pid %d", path, pid, lck.Pid)
	}
	return pid, nil
}

func lockFile(f *os.File, cmd int) error {
	lck := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	return syscall.FcntlFlock(f.Fd(), cmd, &lck)
}
