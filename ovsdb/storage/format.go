package storage

// The record format: "OVSDB JSON <length> <sha1-hex>\n" and <length> bytes
// of JSON ending with a newline, the SHA-1 taken over those bytes.

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReadRecords reads records from r until the end or the first record that
// is incomplete or corrupt. It returns the good records, the offset just
// past the last of them, and the reason it stopped early (nil at a clean
// end of file).
func ReadRecords(r io.Reader) ([]Record, int64, error) {
	return readRecordsN(r, 0)
}

// readRecordsN is ReadRecords stopping after max records (0: no limit).
func readRecordsN(r io.Reader, max int) ([]Record, int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var records []Record
	var offset int64
	for max <= 0 || len(records) < max {
		header, err := readHeader(br)
		if err == io.EOF {
			return records, offset, nil
		}
		if err != nil {
			return records, offset, &RecordError{Offset: offset, Err: err}
		}
		length, sum, err := parseHeader(header)
		if err != nil {
			return records, offset, &RecordError{Offset: offset, Err: err}
		}
		// Grow the buffer as bytes arrive rather than trusting the
		// header's length: a corrupt length must not allocate gigabytes.
		var buf bytes.Buffer
		buf.Grow(int(min(length, 1<<20))) // more only as bytes arrive
		if n, _ := io.CopyN(&buf, br, length); n != length {
			return records, offset, fmt.Errorf("offset %d: record of %d bytes is incomplete (%d bytes present)", offset, length, n)
		}
		body := buf.Bytes()
		if got := sha1.Sum(body); got != sum {
			return records, offset, fmt.Errorf("offset %d: %d bytes have SHA-1 hash %x but should have hash %x",
				offset, length, got, sum)
		}
		trimmed := bytes.TrimSpace(body)
		if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
			return records, offset, fmt.Errorf("offset %d: %d bytes are not a JSON object", offset, length)
		}
		records = append(records, Record{Offset: offset, Body: json.RawMessage(trimmed)})
		offset += int64(len(header)) + int64(length)
	}
	return records, offset, nil
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
		return 0, sum, &headerLineError{line: strings.TrimSpace(line)}
	}
	if fields[1] != magic {
		return 0, sum, fmt.Errorf("%w (record type %q)", ErrNotStandalone, fields[1])
	}
	length, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil || length < 0 || length > 1<<34 {
		return 0, sum, fmt.Errorf("bad length in header line %q", strings.TrimSpace(line))
	}
	// Check the length first: hex.Decode panics when the text is longer
	// than the destination.
	if len(fields[3]) != 2*sha1.Size {
		return 0, sum, fmt.Errorf("bad SHA-1 in header line %q", strings.TrimSpace(line))
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
	return encodeCompact(data.Bytes()), nil
}

// encodeCompact is EncodeRecord for a body known to be compact JSON (what
// json.Marshal writes).
func encodeCompact(body []byte) []byte {
	sum := sha1.New()
	sum.Write(body)
	sum.Write([]byte{'\n'})
	header := fmt.Sprintf("OVSDB %s %d %x\n", magic, len(body)+1, sum.Sum(nil))
	rec := make([]byte, 0, len(header)+len(body)+1)
	rec = append(append(append(rec, header...), body...), '\n')
	return rec
}

// RecordError is a log record at Offset that cannot be read.
type RecordError struct {
	Offset int64
	Err    error
}

func (e *RecordError) Error() string { return fmt.Sprintf("offset %d: %v", e.Offset, e.Err) }
func (e *RecordError) Unwrap() error { return e.Err }

// headerLineError is a header line that is not "OVSDB JSON LENGTH SHA1".
type headerLineError struct{ line string }

func (e *headerLineError) Error() string {
	return fmt.Sprintf("parse error in header line %q", e.line)
}

// OVSText is how Open vSwitch words the error in its log (a syntax error
// about file name, as the caller named it): scripts and Open vSwitch's
// tests grep for `syntax error: db: parse error.* in header line "xxx"`.
func (e *RecordError) OVSText(name string) string {
	var h *headerLineError
	if errors.As(e.Err, &h) {
		return fmt.Sprintf(`syntax error: %s: parse error at offset %d in header line "%s"`, name, e.Offset, h.line)
	}
	return fmt.Sprintf("syntax error: %s: %v", name, e)
}
