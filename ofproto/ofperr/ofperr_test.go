package ofperr

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

var versionNames = [...]string{"", "1.0", "1.1", "1.2", "1.3", "1.4", "1.5"}

// TestWireMatchesOVS compares every error's encoding in every version with
// what Debian's ovs-ofctl print-error says.
func TestWireMatchesOVS(t *testing.T) {
	if _, err := exec.LookPath("ovs-ofctl"); err != nil {
		t.Skip("ovs-ofctl not installed")
	}
	for _, e := range All() {
		out, err := exec.Command("ovs-ofctl", "print-error", e.String()).CombinedOutput()
		if err != nil {
			t.Errorf("%s: ovs-ofctl print-error: %v: %s", e, err, out)
			continue
		}
		var want strings.Builder
		for v := uint8(1); v <= numVersions; v++ {
			vendor, typ, code, ok := e.Wire(v)
			if !ok {
				continue
			}
			if vendor == 0 {
				fmt.Fprintf(&want, "OpenFlow %s: vendor 0, type %d, code %d\n", versionNames[v], typ, code)
			} else {
				fmt.Fprintf(&want, "OpenFlow %s: vendor %#x, type %d, code %d\n", versionNames[v], vendor, typ, code)
			}
		}
		if got := string(out); got != want.String() {
			t.Errorf("%s:\novs-ofctl print-error:\n%sours:\n%s", e, got, want.String())
		}
	}
}

// TestAppendParseRoundTrip: every error that a version can express parses
// back to itself, unless Open vSwitch's table gives its encoding to an
// earlier error (the expected duplications), and the data follows.
func TestAppendParseRoundTrip(t *testing.T) {
	data := []byte("payload")
	for _, e := range All() {
		for v := uint8(1); v <= numVersions; v++ {
			b := e.AppendWire(nil, v)
			b = append(b, data...)
			got, rest, err := ParseWire(v, b)
			if err != nil {
				t.Fatalf("%s v%d: %v", e, v, err)
			}
			if !bytes.Equal(rest, data) {
				t.Errorf("%s v%d: data %q", e, v, rest)
			}
			vendor, typ, code, ok := e.Wire(v)
			if !ok {
				if got != NXBRC_UNENCODABLE_ERROR {
					t.Errorf("%s v%d: unencodable sent as %s", e, v, got)
				}
				continue
			}
			if got != e {
				gv, gt, gc, _ := got.Wire(v)
				if gv != vendor || gt != typ || gc != code || got > e {
					t.Errorf("%s v%d: parsed back as %s", e, v, got)
				}
			}
		}
	}
}

func TestKnownEncodings(t *testing.T) {
	cases := []struct {
		e       Error
		version uint8
		hex     string
	}{
		{OFPBRC_BAD_LEN, 1, "00010006"},
		{OFPBRC_BAD_TABLE_ID, 1, "b0c20000000023200001" + "0200"},
		{OFPBRC_BAD_TABLE_ID, 4, "00010009"},
		{NXBRC_NXM_INVALID, 4, "ffff000200002320"},
		{OFPBRC_MULTIPART_REQUEST_TIMEOUT, 4, "ffff0a504f4e4600"},
		{OFPBRC_MULTIPART_REQUEST_TIMEOUT, 1, "b0c2000000002320" + "0001" + "0209"}, // NXBRC_UNENCODABLE_ERROR (1,521)
		{OFPBIC_BAD_EXP_TYPE, 2, "00030005"},
		{OFPBIC_BAD_EXP_TYPE, 3, "00030006"},
	}
	for _, c := range cases {
		if got := fmt.Sprintf("%x", c.e.AppendWire(nil, c.version)); got != c.hex {
			t.Errorf("%s v%d: %s, want %s", c.e, c.version, got, c.hex)
		}
	}
	if e, ok := Decode(2, 3, 5); !ok || e != OFPBIC_BAD_EXPERIMENTER {
		t.Errorf("OF1.1 (3,5) = %v, want OFPBIC_BAD_EXPERIMENTER", e)
	}
	if e, ok := ByName("OFPFMFC_OVERLAP"); !ok || e != OFPFMFC_OVERLAP || e.Error() != "OFPFMFC_OVERLAP" {
		t.Errorf("ByName(OFPFMFC_OVERLAP) = %v", e)
	}
	if Error(0).Error() != "<invalid>" || Error(numErrors+1).Valid() {
		t.Error("invalid errors")
	}
}

func TestParseWireErrors(t *testing.T) {
	for _, h := range []string{"", "0001", "b0c20000000023", "ffff0002"} {
		b := make([]byte, len(h)/2)
		fmt.Sscanf(h, "%x", &b)
		if _, _, err := ParseWire(4, b); err != OFPBRC_BAD_LEN {
			t.Errorf("%q: %v, want OFPBRC_BAD_LEN", h, err)
		}
	}
	_, rest, err := ParseWire(1, []byte{0, 1, 0xee, 0xee, 1, 2})
	if we, ok := err.(*WireError); !ok || we.Type != 1 || we.Code != 0xeeee || !bytes.Equal(rest, []byte{1, 2}) {
		t.Errorf("unknown code: %v %x", err, rest)
	}
}

func FuzzParseWire(f *testing.F) {
	f.Add(uint8(1), []byte{0, 1, 0, 6, 1, 2, 3})
	f.Add(uint8(4), []byte{0xff, 0xff, 0, 2, 0, 0, 0x23, 0x20})
	f.Add(uint8(2), []byte{0xb0, 0xc2, 0, 0, 0, 0, 0x23, 0x20, 0, 1, 2, 0})
	f.Fuzz(func(t *testing.T, version uint8, body []byte) {
		e, rest, err := ParseWire(version, body)
		if err != nil {
			return
		}
		again := append(e.AppendWire(nil, version), rest...)
		e2, rest2, err := ParseWire(version, again)
		if err != nil || e2 != e || !bytes.Equal(rest2, rest) {
			t.Fatalf("%x: %s then %x: %v %v", body, e, again, e2, err)
		}
	})
}
