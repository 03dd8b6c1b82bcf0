package ofp

import (
	"slices"
	"strings"
	"testing"
)

// TestDefaultTableFeaturesAgainstOVS compares DefaultTableFeatures with
// what the real ovs-vswitchd 3.1 sent (testdata/ovs-switch.txt): the
// same instructions, goto targets and actions, and fields in Open
// vSwitch's order; gvs's registry has fewer fields than OVS (no MPLS,
// NSH..., 64 tun_metadata), so ours must be a subsequence of OVS's.
func TestDefaultTableFeaturesAgainstOVS(t *testing.T) {
	seen := map[uint8]bool{}
	for _, v := range loadVectors(t, "testdata/ovs-switch.txt") {
		if !strings.Contains(v.name, "dump-table-features") || !strings.Contains(v.name, "[S") {
			continue
		}
		h, m, err := Decode(v.msg)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := m.(*TableFeaturesReply)
		if !ok || seen[h.Version] {
			continue
		}
		seen[h.Version] = true
		for _, ovs := range r.Tables[:2] {
			ours := DefaultTableFeatures(h.Version, ovs.TableID, 254, 1000000)
			if ovs.MetadataMatch != ours.MetadataMatch || ovs.MetadataWrite != ours.MetadataWrite || ovs.MaxEntries != ours.MaxEntries ||
				ovs.Capabilities != ours.Capabilities {
				t.Errorf("v%d table %d: %+v, OVS %+v", h.Version, ovs.TableID, ours, ovs)
			}
			op, gp := ovs.Props, ours.Props
			for _, pair := range [][2]*TableInstructionFeatures{{&op.Nonmiss, &gp.Nonmiss}, {&op.Miss, &gp.Miss}} {
				o, g := pair[0], pair[1]
				if o.Instructions != g.Instructions || !slices.Equal(o.Next, g.Next) || o.Write.Actions != g.Write.Actions || o.Apply.Actions != g.Apply.Actions {
					t.Errorf("v%d table %d: instructions %#x next %d..., actions %#x/%#x; OVS %#x next %d..., %#x/%#x", h.Version, ovs.TableID,
						g.Instructions, len(g.Next), g.Write.Actions, g.Apply.Actions, o.Instructions, len(o.Next), o.Write.Actions, o.Apply.Actions)
				}
				if !isSubsequence(g.Apply.SetFields, o.Apply.SetFields) || !isSubsequence(g.Write.SetFields, o.Write.SetFields) {
					t.Errorf("v%d: set-field fields are not a subsequence of OVS's", h.Version)
				}
			}
			if !isSubsequence(gp.Match, op.Match) || !isSubsequence(gp.Wildcards, op.Wildcards) {
				t.Errorf("v%d: match fields are not a subsequence of OVS's", h.Version)
			}
			if ovs.TableID == 0 {
				t.Logf("v%d: %d/%d match fields, %d/%d settable", h.Version, len(gp.Match), len(op.Match), len(gp.Nonmiss.Apply.SetFields), len(op.Nonmiss.Apply.SetFields))
			}
		}
	}
	if len(seen) != 3 {
		t.Errorf("table features replies for %d versions in the capture", len(seen))
	}
}

// isSubsequence reports whether every element of a occurs in b in order;
// it also reports the first element of a that does not.
func isSubsequence(a, b []uint64) bool {
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] != x {
			j++
		}
		if j == len(b) {
			return false
		}
		j++
	}
	return true
}

// A table described in 1.3's form (meter instruction included) is sent
// to a 1.5 connection without the meter instruction, as Open vSwitch's
// ovsinst_bitmap_to_openflow does.
func TestTableFeaturesMeterInstructionPerVersion(t *testing.T) {
	tf := DefaultTableFeatures(Version13, 0, 254, 1000000)
	for v, want := range map[uint8]uint32{Version13: 0x7e, Version14: 0x7e, Version15: 0x3e} {
		parts, err := EncodeReplies(v, 1, &TableFeaturesReply{Tables: []TableFeatures{tf}})
		if err != nil {
			t.Fatal(err)
		}
		_, m, err := Decode(parts[0])
		if err != nil {
			t.Fatal(err)
		}
		got := m.(*TableFeaturesReply).Tables[0].Props
		if got.Nonmiss.Instructions != want || got.Miss.Instructions != want {
			t.Errorf("version %#x: instructions %#x/%#x, want %#x", v, got.Nonmiss.Instructions, got.Miss.Instructions, want)
		}
	}
}
