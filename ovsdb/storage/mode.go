package storage

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// FileMode is the mode database files are created with, less the umask,
// as Open vSwitch creates them (0640 under umask 022 or 027, 0660 under
// umask 0).
const FileMode = 0o660

// createTemp is os.CreateTemp with FileMode instead of 0600, so that the
// file linked or renamed into place has Open vSwitch's mode under the
// process's umask.
func createTemp(dir, prefix string) (*os.File, error) {
	for range 10000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, &os.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"), Err: os.ErrExist}
}
