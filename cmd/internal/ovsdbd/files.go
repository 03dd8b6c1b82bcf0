package ovsdbd

import (
	"sync"
	"syscall"

	"gvs/ovsdb/storage"
)

// fileSet is the open database files. ovsdb-server/add-db and remove-db
// change it from the control server's goroutine while "convert" and
// ovsdb-server/compact read it, so it is guarded.
type fileSet struct {
	mu    sync.Mutex
	files []*storage.Storage
}

func (fs *fileSet) list() []*storage.Storage {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]*storage.Storage(nil), fs.files...)
}

func (fs *fileSet) add(f *storage.Storage) {
	fs.mu.Lock()
	fs.files = append(fs.files, f)
	fs.mu.Unlock()
}

// byName returns the file that holds database name, or nil.
func (fs *fileSet) byName(name string) *storage.Storage {
	for _, f := range fs.list() {
		if f.Database().Schema().Name == name {
			return f
		}
	}
	return nil
}

// remove forgets f (the caller closes it).
func (fs *fileSet) remove(f *storage.Storage) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, g := range fs.files {
		if g == f {
			fs.files = append(fs.files[:i], fs.files[i+1:]...)
			return
		}
	}
}

// isOpen reports whether path names a file already open, by device and
// inode as ovsdb-server's is_already_open does, so another name of the
// same file (a link, a relative path) counts too.
func (fs *fileSet) isOpen(path string) bool {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return false
	}
	for _, f := range fs.list() {
		var st2 syscall.Stat_t
		if syscall.Stat(f.Path(), &st2) == nil && st.Dev == st2.Dev && st.Ino == st2.Ino {
			return true
		}
	}
	return false
}

// closeAll closes every file, logging failures through report.
func (fs *fileSet) closeAll(report func(path string, err error)) {
	for _, f := range fs.list() {
		if err := f.Close(); err != nil {
			report(f.Path(), err)
		}
	}
}
