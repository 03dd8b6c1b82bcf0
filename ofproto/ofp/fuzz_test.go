package ofp

import (
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// FuzzDecode: Decode never panics; what it decodes re-encodes, and the
// re-encoding decodes and re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	if data, err := os.ReadFile("testdata/ovs-messages.txt"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if _, h, ok := strings.Cut(line, "\t"); ok {
				if b, err := hex.DecodeString(h); err == nil {
					f.Add(b)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, m, err := Decode(b)
		if err != nil {
			return
		}
		once, err := Encode(h.Version, h.Xid, m)
		if err != nil {
			t.Fatalf("%x decoded as %T but does not re-encode: %v", b, m, err)
		}
		h2, m2, err := Decode(once)
		if err != nil {
			t.Fatalf("%x re-encoded as %x, which does not decode: %v", b, once, err)
		}
		twice, err := Encode(h2.Version, h2.Xid, m2)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("%x: re-encodings differ:\n%x\n%x (%v)", b, once, twice, err)
		}
	})
}
