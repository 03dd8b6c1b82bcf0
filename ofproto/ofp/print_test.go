package ofp

import (
	"encoding/hex"
	"os/exec"
	"strings"
	"testing"
)

// ofpPrint is Open vSwitch's own decoder: ovs-ofctl ofp-print of msg.
func ofpPrint(t *testing.T, msg []byte, verbosity int) string {
	t.Helper()
	if _, err := exec.LookPath("ovs-ofctl"); err != nil {
		t.Skip("ovs-ofctl not installed")
	}
	out, err := exec.Command("ovs-ofctl", "ofp-print", hex.EncodeToString(msg), itoa(verbosity)).CombinedOutput()
	if err != nil {
		t.Fatalf("ovs-ofctl ofp-print %x: %v: %s", msg, err, out)
	}
	return string(out)
}

func itoa(n int) string { return string(rune('0' + n)) }

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	s = strings.Join(strings.Fields(s), "")
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// printCase is a message we encode, and the text ovs-ofctl ofp-print must
// give for our bytes (taken from what it prints for the same message made
// by Open vSwitch, e.g. in tests/ofp-print.at).
type printCase struct {
	name    string
	version uint8
	xid     uint32
	msg     Msg
	want    string // ofp-print output, leading/trailing space trimmed
}

func checkPrint(t *testing.T, c printCase) []byte {
	t.Helper()
	b, err := Encode(c.version, c.xid, c.msg)
	if err != nil {
		t.Fatalf("%s: encode: %v", c.name, err)
	}
	got := strings.TrimSpace(ofpPrint(t, b, 2))
	if want := strings.TrimSpace(c.want); got != want {
		t.Errorf("%s: ovs-ofctl ofp-print %x:\n%s\nwant:\n%s", c.name, b, got, want)
	}
	return b
}

// roundTrip decodes b and re-encodes it, which must give b again.
func roundTrip(t *testing.T, name string, b []byte) Msg {
	t.Helper()
	h, m, err := Decode(b)
	if err != nil {
		t.Fatalf("%s: decode %x: %v", name, b, err)
	}
	again, err := Encode(h.Version, h.Xid, m)
	if err != nil {
		t.Fatalf("%s: re-encode: %v", name, err)
	}
	if string(again) != string(b) {
		t.Errorf("%s: re-encoded\n%x\nwant\n%x", name, again, b)
	}
	return m
}
