package storage

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	logger *slog.Logger
}

// ErrNotStandalone is returned for files that are not standalone databases.
var ErrNotStandalone = errors.New("not a standalone OVSDB database file")

// OpenLog opens and locks the log at path, reads every valid record, and
// truncates a torn or corrupt tail (logging what it dropped), so the file is
// ready for appending. It returns the records' JSON bodies.
func OpenLog(path string, logger *slog.Logger) (*Log, []json.RawMessage, error) {
	lock, err := lockFile(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		lock.release()
		return nil, nil, err
	}
	records, valid, readErr := ReadRecords(f)
	if readErr != nil {
		if len(records) == 0 {
			f.Close()
			lock.release()
			return nil, nil, fmt.Errorf("%s: %w", path, readErr)
		}
		st, _ := f.Stat()
		logger.Warn("truncating corrupt or incomplete tail of database log",
			"file", path, "offset", valid, "dropped_bytes", st.Size()-valid, "reason", readErr)
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

// ReadRecords reads records from r until the end or the first record that
// is incomplete or corrupt. It returns the good records, the offset just
// past the last of them, and the reason it stopped early (nil at a clean
// end of file).
func ReadRecords(r io.Reader) ([]json.RawMessage, int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var records []json.RawMessage
	var offset int64
	for {
		header, err := readHeader(br)
		if err == io.EOF {
			return records, offset, nil
		}
		if err != nil {
			return records, offset, fmt.Errorf("offset %d: %w", offset, err)
		}
		length, sum, err := parseHeader(header)
		if err != nil {
			return records, offset, fmt.Errorf("offset %d: %w", offset, err)
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(br, body); err != nil {
			return records, offset, fmt.Errorf("offset %d: record of %d bytes is incomplete", offset, length)
		}
		if got := sha1.Sum(body); got != sum {
			return records, offset, fmt.Errorf("offset %d: %d bytes have SHA-1 hash %x but should have hash %x",
				offset, length, got, sum)
		}
		trimmed := bytes.TrimSpace(body)
		if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
			return records, offset, fmt.Errorf("offset %d: %d bytes are not a JSON object", offset, length)
		}
		records = append(records, json.RawMessage(trimmed))
		offset += int64(len(header)) + int64(length)
	}
}

func readHeader(br *bufio.Reader) (string, error) {
	var line []byte
	for {
		b, err := br.ReadByte()
		if err != nil {
			if err == io.EOF && len(line) == 0 {
				return "", io.EOF
			}
			return "", errors.New("incomplete header line")
		}
		line = append(line, b)
		if b == '\n' {
			return string(line), nil
		}
		if len(line) >= maxHeaderLen {
			return "", errors.New("header line too long")
		}
	}
}

func parseHeader(line string) (int64, [sha1.Size]byte, error) {
	var sum [sha1.Size]byte
	fields := strings.Fields(line)
	if len(fields) != 4 || fields[0] != "OVSDB" {
		return 0, sum, fmt.Errorf("parse error in header line %q", strings.TrimSpace(line))
	}
	if fields[1] != magic {
		return 0, sum, fmt.Errorf("%w (record type %q)", ErrNotStandalone, fields[1])
	}
	length, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil || length < 0 || length > 1<<34 {
		return 0, sum, fmt.Errorf("bad length in header line %q", strings.TrimSpace(line))
	}
	if n, err := hex.Decode(sum[:], []byte(fields[3])); err != nil || n != sha1.Size {
		return 0, sum, fmt.Errorf("bad SHA-1 in header line %q", strings.TrimSpace(line))
	}
	return length, sum, nil
}

// EncodeRecord returns the bytes of one record holding body (which is
// compacted first, as Open vSwitch writes compact JSON).
func EncodeRecord(body []byte) ([]byte, error) {
	var data bytes.Buffer
	if err := json.Compact(&data, body); err != nil {
		return nil, err
	}
	data.WriteByte('\n')
	sum := sha1.Sum(data.Bytes())
	header := fmt.Sprintf("OVSDB %s %d %x\n", magic, data.Len(), sum)
	return append([]byte(header), data.Bytes()...), nil
}

// Append writes one record. With sync it returns only after fsync. On a
// failed or short write the file is truncated back to the last good record
// so a later append cannot follow garbage.
func (l *Log) Append(body []byte, sync bool) error {
	rec, err := EncodeRecord(body)
	if err != nil {
		return err
	}
	if _, err := l.file.Write(rec); err != nil {
		l.rewind()
		return fmt.Errorf("%s: write: %w", l.path, err)
	}
	if sync {
		if err := l.file.Sync(); err != nil {
			l.rewind()
			return fmt.Errorf("%s: fsync: %w", l.path, err)
		}
	}
	l.size += int64(len(rec))
	return nil
}

func (l *Log) rewind() {
	if err := l.file.Truncate(l.size); err == nil {
		_, _ = l.file.Seek(l.size, io.SeekStart)
	}
}

// Size is the number of bytes of records in the file.
func (l *Log) Size() int64 { return l.size }

// Path is the file's name.
func (l *Log) Path() string { return l.path }

// Replace atomically rewrites the log to hold exactly these records: it
// writes a temporary file beside it, fsyncs it, renames it over the log and
// fsyncs the directory, then keeps appending to the new file.
func (l *Log) Replace(bodies []json.RawMessage) error {
	tmp := l.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	size, err := writeRecords(f, bodies)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, l.path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(l.path))
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("%s: compaction: %w", l.path, err)
	}
	l.file.Close()
	l.file = f
	l.size = size
	return nil
}

// Close releases the file and its lock.
func (l *Log) Close() error {
	err := l.file.Close()
	l.lock.release()
	return err
}

// CreateLog writes a new log holding these records (the schema first), fsyncs
// it and its directory. It fails if the file exists.
func CreateLog(path string, bodies []json.RawMessage) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return err
	}
	_, err = writeRecords(f, bodies)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		os.Remove(path)
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
