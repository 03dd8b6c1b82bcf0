package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"gvs/cmd/internal/daemon"
)

// lockPathOf is where Open vSwitch puts the lock file of the database at
// path: beside the file a chain of symbolic links ends at (which need not
// exist yet), named ".NAME.~lock~".
func lockPathOf(path string) string {
	for range 40 {
		dest, err := os.Readlink(path)
		if err != nil {
			break
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".~lock~")
}

// createLockFailure is what Open vSwitch's ovsdb-tool create says when the
// directory of the database (or of its link's target) is missing: it takes
// the lock first, so the lock file is what fails, with two lockfile
// warnings on stderr before the error.
func createLockFailure(path string, errno error) error {
	logger := slog.New(daemon.NewLogHandler(os.Stderr, "lockfile"))
	lock := lockPathOf(path)
	text := strerror(errno)
	logger.Warn(fmt.Sprintf("%s: failed to open lock file: %s", lock, text))
	logger.Warn(fmt.Sprintf("%s: failed to lock file: %s", lock, text))
	return fmt.Errorf("I/O error: %s: failed to lock lockfile (%s)", path, text)
}

// strerror is the C library's text for a system error.
func strerror(err error) string {
	var errno syscall.Errno
	text := err.Error()
	if errors.As(err, &errno) {
		text = errno.Error()
	}
	if text == "" {
		return text
	}
	return strings.ToUpper(text[:1]) + text[1:]
}
