package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"golang.org/x/sys/unix"
)

// magic is the record type of a standalone database; clustered databases
// use "CLUSTER", which gvs does not read.
const magic = "JSON"

// maxHeaderLen bounds a header line, as Open vSwitch does (128 bytes), so a
// corrupt file cannot make us read an unbounded line.
const maxHeaderLen = 128

// Log is an append-only file of records in Open vSwitch's format: a line
// "OVSDB JSON <length> <sha1-hex>" followed by <length> bytes of JSON that
// end with a newline, the SHA-1 taken over those bytes.
//
// A Log is not safe for concurrent use: the database's commit path owns it.
type Log struct {
	path   string
	file   *os.File
	lock   *fileLock
	size   int64 // bytes of valid records, where the next one is written
	dirty  bool  // a failed write may have left bytes past size
	logger *slog.Logger
}

// ErrNotStandalone is returned for files that are not standalone databases.
var ErrNotStandalone = errors.New("not a standalone OVSDB database file")

// Record is one record read back from a log: its JSON body and the offset
// of its header in the file.
type Record struct {
	Offset int64
	Body   json.RawMessage
}

// OpenLog opens and locks the log at path, reads every valid record, and
// truncates a torn or corrupt tail (logging what it dropped), so the file is
// ready for appending. A file with no valid record at all is an error.
func OpenLog(path string, logger *slog.Logger) (*Log, []Record, error) {
	// Write and replace the file a symbolic link points to, not the link.
	name := path
	path, err := followSymlinks(path)
	if err != nil {
		return nil, nil, err
	}
	lock, err := lockFile(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		lock.release()
		if pe, ok := err.(*os.PathError); ok {
			pe.Path = name // reported under the name the caller gave, as Open vSwitch does
		}
		return nil, nil, err
	}
	records, valid, readErr := ReadRecords(f)
	if len(records) == 0 {
		f.Close()
		lock.release()
		if readErr == nil {
			readErr = errors.New("unexpected end of file (empty database file?)")
		}
		return nil, nil, fmt.Errorf("%s: %w", path, readErr)
	}
	if readErr != nil {
		st, _ := f.Stat()
		var re *RecordError
		if errors.As(readErr, &re) {
			logger.Error(re.OVSText(name)) // Open vSwitch's line, alone
		}
		logger.Warn("truncating corrupt or incomplete tail of database log",
			"file", path, "offset", valid, "dropped_bytes", st.Size()-valid, "reason", readErr)
		saveDropped(f, path, valid, false, logger)
		if err := f.Truncate(valid); err != nil {
			f.Close()
			lock.release()
			return nil, nil, fmt.Errorf("%s: truncate: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			lock.release()
			return nil, nil, fmt.Errorf("%s: sync: %w", path, err)
		}
	}
	if _, err := f.Seek(valid, io.SeekStart); err != nil {
		f.Close()
		lock.release()
		return nil, nil, err
	}
	return &Log{path: path, file: f, lock: lock, size: valid, logger: logger}, records, nil
}

// saveDropped keeps a copy of what truncation at offset drops when more
// records follow the damaged one (damage in the middle of the log rather
// than a torn last write), so they can still be recovered by hand.
// With always, the copy is kept whatever follows (the caller drops
// records whose checksums are good).
func saveDropped(f *os.File, path string, offset int64, always bool, logger *slog.Logger) {
	dropped, err := io.ReadAll(io.NewSectionReader(f, offset, 1<<40))
	if err != nil || len(dropped) == 0 || !always && !bytes.Contains(dropped[1:], []byte("OVSDB "+magic+" ")) {
		return
	}
	name := fmt.Sprintf("%s.dropped-%d", path, offset)
	if err := os.WriteFile(name, dropped, FileMode); err != nil {
		logger.Error("could not save the dropped part of the database log", "file", name, "error", err)
		return
	}
	logger.Warn("the dropped part of the database log holds more records; saved a copy", "file", name)
}

// Append writes one record. With sync it returns only after fsync. On a
// failed or short write the file is truncated back to the last good record
// so a later append cannot follow garbage; if even that fails, every later
// append tries the truncation again first and fails while it cannot.
func (l *Log) Append(body []byte, sync bool) error {
	rec, err := EncodeRecord(body)
	if err != nil {
		return err
	}
	return l.appendRecord(rec, sync)
}

// appendRecord is Append of an encoded record.
func (l *Log) appendRecord(rec []byte, sync bool) error {
	if l.dirty {
		if err := l.rewind(); err != nil {
			return fmt.Errorf("%s: cannot truncate to length %d after a failed write: %w", l.path, l.size, err)
		}
	}
	if _, err := l.file.Write(rec); err != nil {
		l.rewind()
		return fmt.Errorf("%s: write failed: %w", l.path, err)
	}
	if sync {
		// fdatasync, as ovsdb-server: it covers the file's new size,
		// which is all the metadata an append needs.
		if err := unix.Fdatasync(int(l.file.Fd())); err != nil {
			l.rewind()
			return fmt.Errorf("%s: fsync failed: %w", l.path, err)
		}
	}
	l.size += int64(len(rec))
	return nil
}

// Sync flushes what was appended to disk.
func (l *Log) Sync() error { return l.file.Sync() }

func (l *Log) rewind() error {
	l.dirty = true
	if err := l.file.Truncate(l.size); err != nil {
		return err
	}
	if _, err := l.file.Seek(l.size, io.SeekStart); err != nil {
		return err
	}
	l.dirty = false
	return nil
}

// Truncate drops every record from offset on (which must be a record
// boundary at or before Size), so the next append overwrites them. A copy
// of the dropped records is saved as PATH.dropped-OFFSET.
func (l *Log) Truncate(offset int64) error {
	if offset > l.size {
		return fmt.Errorf("%s: truncate to %d beyond %d", l.path, offset, l.size)
	}
	saveDropped(l.file, l.path, offset, true, l.logger)
	old := l.size
	l.size = offset
	if err := l.rewind(); err != nil {
		l.size = old
		return err
	}
	return l.file.Sync()
}

// Size is the number of bytes of records in the file.
func (l *Log) Size() int64 { return l.size }

// Path is the file's name (symbolic links resolved).
func (l *Log) Path() string { return l.path }

// Close releases the file and its lock.
func (l *Log) Close() error {
	err := l.file.Close()
	l.lock.release()
	return err
}
