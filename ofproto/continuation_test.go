package ofproto

import (
	"errors"
	"testing"

	"gvs/ofproto/connmgr"
	"gvs/ofproto/ofp"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/xlate"
)

// A paused translation's continuation is Open vSwitch's NXCPT_* form
// (what ovs-ofctl prints), and what comes back in NXT_RESUME finds the
// kept state again, in any connection's re-encoding.
func TestContinuationEncoding(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	fz := &xlate.Frozen{Table: 3, Cookie: 0x77, Actions: []xlate.Action{&ofpact.Output{Port: 2}}}
	cont := b.encodeContinuation(fz)
	c, err := ofp.ParseContinuation(cont, connmgr.ContinuationVersion)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 1 || c.Steps[0].TableID != 3 || c.Steps[0].Cookie != 0x77 || len(c.Steps[0].Actions) != 1 {
		t.Fatalf("continuation %+v", c)
	}
	for _, v := range []uint8{ofp.Version10, ofp.Version13, ofp.Version15} {
		if got, err := b.continuation(c.Append(nil, v)); err != nil || got != fz {
			t.Fatalf("version %#x: resume found %p, %v", v, got, err)
		}
	}
	c.Bridge[15] ^= 1
	if _, err := b.continuation(c.Append(nil, ofp.Version10)); !errors.Is(err, ofperr.NXR_STALE) {
		t.Fatalf("unknown continuation: %v", err)
	}
}
