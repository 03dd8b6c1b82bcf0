// Package dbfile reads and creates Open vSwitch's standalone database file
// just far enough for the daemons to start: the schema, which is the file's
// first record. Loading and appending the data records is the job of the
// storage layer that a later issue adds; until then the daemons serve the
// database from memory and say so when a file holds data.
//
// The format, as written by `ovsdb-tool create`: each record is a line
// "OVSDB JSON <length> <sha1-hex>" followed by <length> bytes, which are
// the record's JSON and a newline; <length> and the SHA-1 both cover that
// newline.
//
// Contract: stateless functions, safe from any goroutine.
package dbfile

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const magic = "OVSDB JSON "

// maxRecord bounds one record's declared length, so a corrupt header cannot
// make us allocate without limit.
const maxRecord = 1 << 30

// ReadSchema returns the schema record of the database file at path, and
// whether more records (data) follow it.
func ReadSchema(path string) (schema []byte, hasData bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	schema, err = readRecord(r)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	for {
		b, err := r.ReadByte()
		if errors.Is(err, io.EOF) {
			return schema, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		if !strings.ContainsRune(" \t\r\n", rune(b)) {
			return schema, true, nil
		}
	}
}

// readRecord reads one record and checks its length and SHA-1.
func readRecord(r *bufio.Reader) ([]byte, error) {
	header, err := r.ReadString('\n')
	if err != nil && header == "" {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("unexpected end of file reading header (empty database file?)")
		}
		return nil, err
	}
	header = strings.TrimRight(header, "\n")
	if strings.HasPrefix(header, "CLUSTER ") {
		return nil, errors.New("clustered databases are not supported")
	}
	if !strings.HasPrefix(header, magic) {
		return nil, fmt.Errorf("not an OVSDB standalone database file (header %q)", truncate(header))
	}
	fields := strings.Fields(header[len(magic):])
	if len(fields) != 2 {
		return nil, fmt.Errorf("malformed header %q", truncate(header))
	}
	length, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil || length < 0 || length > maxRecord {
		return nil, fmt.Errorf("malformed record length in header %q", truncate(header))
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("record truncated: %w", err)
	}
	sum := sha1.Sum(body)
	if !strings.EqualFold(hex.EncodeToString(sum[:]), fields[1]) {
		return nil, errors.New("record checksum mismatch")
	}
	return bytes.TrimRight(body, " \t\r\n"), nil
}

func truncate(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// Create writes a new database file at path holding only schema, like
// `ovsdb-tool create`. It refuses to replace an existing file, and writes
// through a temporary file so a crash leaves no half-written database.
func Create(path string, schema []byte) error {
	var compact bytes.Buffer
	if err := json.Compact(&compact, schema); err != nil {
		return fmt.Errorf("schema is not JSON: %w", err)
	}
	compact.WriteByte('\n')
	sum := sha1.Sum(compact.Bytes())
	var rec bytes.Buffer
	fmt.Fprintf(&rec, "%s%d %s\n", magic, compact.Len(), hex.EncodeToString(sum[:]))
	rec.Write(compact.Bytes())

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(rec.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	// A hard link fails if path exists, unlike rename.
	if err := os.Link(tmp.Name(), path); err != nil {
		return err
	}
	return nil
}
