package storage

// Writing whole files: compaction's replacement of a log, and new logs.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Replace atomically rewrites the log to hold exactly these records: it
// writes a temporary file beside it, fsyncs it, renames it over the log and
// fsyncs the directory, then keeps appending to the new file.
func (l *Log) Replace(bodies []json.RawMessage) error {
	r, err := l.StartReplace(bodies)
	if err != nil {
		return err
	}
	return l.CommitReplace(r)
}

// Replacement is a new version of a log being written beside it
// ("NAME.tmp", as Open vSwitch names it) for compaction. StartReplace does
// the bulk of the writing; records appended to the log meanwhile are copied
// in with Append; CommitReplace swaps it in.
type Replacement struct {
	file *os.File
	tmp  string
	size int64
}

// StartReplace writes bodies to the temporary file and fsyncs it. It does
// not touch the log itself, so the log's owner may keep appending while it
// runs.
func (l *Log) StartReplace(bodies []json.RawMessage) (*Replacement, error) {
	tmp := l.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, FileMode)
	if err != nil {
		return nil, fmt.Errorf("%s: compaction: %w", l.path, err)
	}
	r := &Replacement{file: f, tmp: tmp}
	r.size, err = writeRecords(f, bodies)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		r.Abort()
		return nil, fmt.Errorf("%s: compaction: %w", l.path, err)
	}
	return r, nil
}

// Append adds one record to the replacement.
func (r *Replacement) Append(body []byte) error {
	rec, err := EncodeRecord(body)
	if err != nil {
		return err
	}
	return r.appendRecord(rec)
}

func (r *Replacement) appendRecord(rec []byte) error {
	n, err := r.file.Write(rec)
	r.size += int64(n)
	return err
}

// Abort removes the temporary file.
func (r *Replacement) Abort() {
	r.file.Close()
	os.Remove(r.tmp)
}

// CommitReplace fsyncs the replacement, renames it over the log and fsyncs
// the directory; from then on appends go to the new file. On error before
// the rename the log is unchanged and the replacement is removed.
func (l *Log) CommitReplace(r *Replacement) error {
	if err := r.file.Sync(); err != nil {
		r.Abort()
		return fmt.Errorf("%s: compaction: fsync failed: %w", l.path, err)
	}
	if err := os.Rename(r.tmp, l.path); err != nil {
		r.Abort()
		return fmt.Errorf("%s: compaction: %w", l.path, err)
	}
	// The new file is the log now, whatever happens next.
	l.file.Close()
	l.file = r.file
	l.size = r.size
	l.dirty = false
	if err := syncDir(filepath.Dir(l.path)); err != nil {
		l.logger.Warn("fsync of the database directory failed after compaction", "file", l.path, "error", err)
	}
	return nil
}

// CreateLog writes a new log holding these records (the schema first),
// fsyncs it and its directory. It fails if the file exists. The file
// appears complete or not at all: it is written under a temporary name and
// hard-linked into place. When path is a symbolic link whose target does
// not exist yet, the target is created and the link kept, as
// `ovsdb-tool create` does.
func CreateLog(path string, bodies []json.RawMessage) error {
	name := path
	path, err := followSymlinks(path)
	if err != nil {
		return err
	}
	f, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			// Named as the caller named it, not as the temporary file.
			return &os.PathError{Op: "create", Path: name, Err: pe.Err}
		}
		return err
	}
	defer os.Remove(f.Name())
	_, err = writeRecords(f, bodies)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(f.Name(), path) // unlike rename, fails if path exists
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	return err
}

func writeRecords(w io.Writer, bodies []json.RawMessage) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var size int64
	for _, b := range bodies {
		rec, err := EncodeRecord(b)
		if err != nil {
			return 0, err
		}
		if _, err := bw.Write(rec); err != nil {
			return 0, err
		}
		size += int64(len(rec))
	}
	return size, bw.Flush()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
