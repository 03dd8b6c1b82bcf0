package ofp

import (
	"gvs/ofproto/ofperr"
	"math/rand"
	"strings"
	"testing"
)

// TestMutatedOVSMessages flips a byte in the body of Open vSwitch's
// messages (seeded, repeatable) and compares our verdict with
// ovs-ofctl's: the same decode error, or both decode. Only the messages a
// switch receives are mutated (what a controller sends us).
func TestMutatedOVSMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ovs-ofctl hundreds of times")
	}
	rng := rand.New(rand.NewSource(1))
	vectors := append(loadVectors(t, "testdata/ovs-messages.txt"), loadVectors(t, "testdata/ovs-switch.txt")...)
	var agree, differ int
	for _, v := range vectors {
		h, m, err := Decode(v.msg)
		if err != nil || !switchReceives(m) || len(v.msg) <= headerLen {
			continue
		}
		_ = h
		for range 4 {
			b := append([]byte(nil), v.msg...)
			i := headerLen + rng.Intn(len(b)-headerLen)
			b[i] ^= byte(1 << rng.Intn(8))
			mh, mm, err := Decode(b)
			if ba, ok := mm.(*BundleAdd); ok {
				// ofp-print decodes the bundled message; a switch does
				// when it adds it to the bundle (BundleAdd.Inner).
				_, _, err = ba.Inner()
			}
			if (mh.Raw == rawNXSetFlowFormat || mh.Raw == rawNXSetPacketInFormat) && err == ofperr.OFPBRC_EPERM {
				// ofp-print prints any format; Decode refuses the ones
				// the switch refuses, with its handler's error.
				agree++
				continue
			}
			out := ofpPrint(t, b, 2)
			ovsErr := ""
			if mm := ovsDecodeError.FindStringSubmatch(out); mm != nil {
				ovsErr = mm[1]
			} else if strings.Contains(out, "***decode error: ") {
				ovsErr = "(system error)"
			}
			ours := ""
			if err != nil {
				ours = err.Error()
			}
			if ours == ovsErr || ovsErr == "(system error)" && ours != "" {
				agree++
				continue
			}
			if (ours == "OFPBPC_BAD_TYPE" || ours == "OFPBPC_BAD_EXP_TYPE") && strictInSwitch(b) {
				// ovs-ofctl decodes these loosely (unknown properties
				// skipped); the switch strictly, as we do.
				agree++
				continue
			}
			if ours == "OFPBAC_BAD_SET_TYPE" && ovsErr == "OFPBAC_BAD_SET_LEN" {
				t.Logf("%s: set_field error differs (ofproto/ofpact's decoding): ours %s, OVS %s", v.name, ours, ovsErr)
				agree++
				continue
			}
			differ++
			t.Errorf("%s, byte %d flipped: ours %q, ovs-ofctl %q\n%x\n%s", v.name, i, ours, ovsErr, b, out)
		}
	}
	t.Logf("%d agree, %d differ", agree, differ)
}

// switchReceives reports whether m is a message a controller sends.
func switchReceives(m Msg) bool {
	switch m.(type) {
	case *FlowMod, *GroupMod, *MeterMod, *PortMod, *TableMod, *PacketOut, *Resume, *BundleControl, *BundleAdd,
		*SetAsync, *SetConfig, *RoleRequest, *FlowStatsRequest, *AggregateRequest, *PortStatsRequest,
		*QueueStatsRequest, *GroupStatsRequest, *GroupDescRequest, *MeterStatsRequest, *MeterConfigRequest,
		*PortDescRequest, *TableFeaturesRequest, *FlowMonitorRequest, *TLVTableMod, *CTFlush, *CTFlushZone,
		*SetPacketInFormat, *SetFlowFormat, *FlowModTableID, *SetControllerID, *QueueGetConfigRequest:
		return true
	}
	return false
}

// strictInSwitch reports whether b is (or bundles) a message whose
// properties Open vSwitch's switch decodes strictly and ovs-ofctl loosely.
func strictInSwitch(b []byte) bool {
	h, m, _ := Decode(b)
	if ba, ok := m.(*BundleAdd); ok {
		h, _, _ = decodeHeader(ba.Message)
	}
	switch h.Raw {
	case rawNXResume, raw14PortMod:
		return true
	}
	return false
}
