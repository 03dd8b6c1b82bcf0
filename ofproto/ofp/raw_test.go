package ofp

import (
	"testing"

	"gvs/ofproto/ofperr"
)

// TestEveryRawDecodes: every wire form of Open vSwitch's table has a
// decoder, except the ones listed.
func TestEveryRawDecodes(t *testing.T) {
	without := map[Raw]bool{}
	for r := rawHello; r < numRaws; r++ {
		if decoders[r] == nil && !without[r] {
			t.Errorf("%s has no decoder", r)
		}
	}
}

func TestHeaderErrors(t *testing.T) {
	cases := []struct {
		hex  string
		want ofperr.Error
	}{
		{"0100", ofperr.OFPBRC_BAD_LEN},                                     // short
		{"01000009000000000000", ofperr.OFPBRC_BAD_LEN},                     // length beyond the message
		{"0700000800000000", 0},                                             // hello of a later version still decodes
		{"0705000800000000", ofperr.OFPBRC_BAD_VERSION},                     // anything else of a later version
		{"04ff000800000000", ofperr.OFPBRC_BAD_TYPE},                        // unknown type
		{"0412001000000000ee00000000000000", ofperr.OFPBRC_BAD_STAT},        // unknown multipart type
		{"0404001000000000000000aa00000000", ofperr.OFPBRC_BAD_VENDOR},      // unknown experimenter
		{"04040010000000000000232000000999", ofperr.OFPBRC_BAD_SUBTYPE},     // unknown Nicira subtype
		{"04050009000000000000000000", ofperr.OFPBRC_BAD_LEN},               // features request with a body
		{"0114000c00000000000000", ofperr.OFPBRC_BAD_LEN},                   // 1.0 has no type 20 of that size
		{"04120018000000000000000000000000ffff0000", ofperr.OFPBRC_BAD_LEN}, // vendor stats cut short
	}
	for _, c := range cases {
		_, _, err := Decode(unhex(t, c.hex))
		if c.want == 0 {
			if err != nil {
				t.Errorf("%s: %v, want success", c.hex, err)
			}
			continue
		}
		if err != c.want {
			t.Errorf("%s: %v, want %s", c.hex, err, c.want)
		}
	}
}

// TestEncodeRepliesSplits: a reply too long for one message is split at
// entry boundaries, every part but the last marked REPLY_MORE, and the
// parts decode back to all the entries.
func TestEncodeRepliesSplits(t *testing.T) {
	ports := make([]Port, 2000)
	for i := range ports {
		ports[i] = Port{PortNo: uint32(i + 1), Name: "p"}
	}
	msgs, err := EncodeReplies(Version15, 9, &PortDescReply{Ports: ports})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) < 2 {
		t.Fatalf("%d messages for %d ports", len(msgs), len(ports))
	}
	var got []Port
	for i, b := range msgs {
		if len(b) > 0xffff {
			t.Fatalf("message %d has %d bytes", i, len(b))
		}
		h, m, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		more := h.StatsFlags&StatsFlagReplyMore != 0
		if more != (i < len(msgs)-1) || h.Xid != 9 {
			t.Errorf("message %d: flags %#x xid %d", i, h.StatsFlags, h.Xid)
		}
		got = append(got, m.(*PortDescReply).Ports...)
	}
	if len(got) != len(ports) || got[len(got)-1].PortNo != 2000 {
		t.Errorf("got %d ports back", len(got))
	}
}
