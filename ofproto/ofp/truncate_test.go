package ofp

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestTruncatedOVSMessages cuts the tail off Open vSwitch's messages
// (fixing the header's length) and requires the same verdict as
// ovs-ofctl: the same decode error, or success when it decodes.
func TestTruncatedOVSMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ovs-ofctl hundreds of times")
	}
	var agree, differ int
	vectors := append(loadVectors(t, "testdata/ovs-messages.txt"), loadVectors(t, "testdata/ovs-switch.txt")...)
	for _, v := range vectors {
		if _, _, err := Decode(v.msg); err != nil {
			continue
		}
		for _, cut := range []int{1, 4, 8} {
			if len(v.msg)-cut < headerLen {
				continue
			}
			b := append([]byte(nil), v.msg[:len(v.msg)-cut]...)
			binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
			_, _, err := Decode(b)
			out := ofpPrint(t, b, 2)
			ovsErr := ""
			if m := ovsDecodeError.FindStringSubmatch(out); m != nil {
				ovsErr = m[1]
			} else if strings.Contains(out, "***decode error: ") && err != nil {
				agree++ // Open vSwitch fails with a system error (EINVAL), we with an OpenFlow one
				continue
			}
			ours := ""
			if err != nil {
				ours = err.Error()
			}
			if ours == ovsErr || strings.HasPrefix(out, "OFPT_ERROR") || strings.HasPrefix(out, "OFPT_HELLO") || strings.HasPrefix(out, "OFPT_ECHO") {
				agree++
				continue
			}
			differ++
			t.Errorf("%s cut by %d: ours %q, ovs-ofctl %q\n%s", v.name, cut, ours, ovsErr, out)
		}
	}
	t.Logf("%d agree, %d differ", agree, differ)
}
