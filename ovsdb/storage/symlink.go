package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// maxSymlinks bounds how many links followSymlinks follows, as Open
// vSwitch's follow_symlinks does.
const maxSymlinks = 10

// followSymlinks returns the file a chain of symbolic links at path ends
// at, whether or not that file exists: Debian installs
// /etc/openvswitch/conf.db as a link to /var/lib/openvswitch/conf.db before
// the database is created. Everything that creates or replaces a database
// file works on the result, so a link stays a link and its target is what
// gets written (`ovsdb-tool create` through a dangling link creates the
// target; compaction renames over the target). A relative target is taken
// relative to the link's directory.
func followSymlinks(path string) (string, error) {
	for range maxSymlinks {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return path, fmt.Errorf("%s: readlink failed: %w", path, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return path, errors.New(path + ": too many levels of symbolic links")
}
