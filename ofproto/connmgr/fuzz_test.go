package connmgr

import (
	"bytes"
	"testing"
)

// FuzzDecodeHello: any HELLO body decodes without panicking, and what we
// encode decodes back to the same versions.
func FuzzDecodeHello(f *testing.F) {
	f.Add(encodeHello(DefaultVersions, 1))
	f.Add(encodeHello(1<<OF10|1<<OF13, 2))
	f.Add([]byte{0x04, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8, 0, 0, 0, 0x12})
	f.Add([]byte{0x06, 0, 0, 12, 0, 0, 0, 1, 0, 1, 0, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < headerLen {
			return
		}
		vs, _ := decodeHello(b)
		if vs&1 != 0 {
			t.Fatalf("version 0 decoded from % x", b)
		}
		if vs != 0 {
			if got, ok := decodeHello(encodeHello(vs, 0)); !ok || got != vs {
				t.Fatalf("%v re-decodes as %v", vs, got)
			}
		}
	})
}

// FuzzReadMsg: the stream framing never panics, never returns a message
// shorter than a header or longer than the stream, and returns exactly the
// length the header says.
func FuzzReadMsg(f *testing.F) {
	f.Add(encodeHello(DefaultVersions, 1))
	f.Add([]byte{1, 0, 0, 4, 0, 0, 0, 0})
	f.Add([]byte{1, 0, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			m, err := readMsg(r)
			if err != nil {
				return
			}
			if len(m) < headerLen || int(parseHeader(m).Length) != len(m) {
				t.Fatalf("message of %d bytes, header says %d", len(m), parseHeader(m).Length)
			}
		}
	})
}
