package ofpact

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"gvs/ofproto/mf"
)

// TestSetFieldEveryFieldAgainstOVS encodes a set_field (whole and masked)
// and a load of every writable field in every version and requires OVS to
// decode the bytes to the text we print and to re-encode them unchanged.
func TestSetFieldEveryFieldAgainstOVS(t *testing.T) {
	needOVS(t)
	rng := rand.New(rand.NewSource(5))
	var lists [][]Action
	for i := range mf.Fields() {
		f := &mf.Fields()[i]
		switch {
		case !f.Writable, isVariableLength(f) && f.ID != mf.TunMetadata0:
			continue
		case f.ID == mf.CTMark, f.ID == mf.CTLabel:
			continue // only inside ct()
		case f.HeaderFor(0) == nil:
			continue // dl_vlan, dl_vlan_pcp: OVS cannot send these either
		case f.ID == mf.InPortOXM:
			continue // OpenFlow forbids set_field of it (OVS rejects it)
		}
		for try := 0; try < 3; try++ {
			var v, m mf.Value
			for j := 0; j < f.Bytes; j++ {
				v[j] = byte(rng.Intn(256))
				m[j] = 0xff
			}
			// Keep the value within the field's bits and valid.
			ones := f.AllOnes()
			for j := 0; j < f.Bytes; j++ {
				v[j] &= ones[j]
			}
			if !f.IsValueValid(v) {
				v = mf.Value{}
				if f.ID == mf.VLANVID {
					v[0] = 0x10
				}
			}
			if f.ID == mf.VLANVID {
				v[0] |= 0x10 // set_field of vlan_vid carries OFPVID_PRESENT
			}
			sf := &SetField{Field: f, Value: v, Mask: m}
			lists = append(lists, []Action{sf})
			// (Masked vlan_vid: OVS's field is 12 bits wide, mf's 13, so
			// a load of its low 12 bits prints differently: reported to mf.)
			if f.Maskable && f.Bytes > 1 && f.ID != mf.VLANVID {
				mm := m
				mm[0] = 0x0f
				vv := v
				vv[0] &= 0x0f
				if f.IsValueValid(vv) {
					lists = append(lists, []Action{&SetField{Field: f, Value: vv, Mask: mm}})
					lists = append(lists, []Action{&SetField{Field: f, Value: vv, Mask: mm, Raw: RawNXRegLoad}})
				}
			}
		}
	}
	for _, version := range []uint8{of10, of11, of12, of13, of14, of15} {
		var inputs [][]byte
		var sources [][]Action
		for _, acts := range lists {
			sf := acts[0].(*SetField)
			if version >= of15 && sf.Raw == RawNXRegLoad {
				continue // OpenFlow 1.5 has no reg_load
			}
			if version < of12 && sf.Raw == RawDefault && !isAllOnes(sf.Mask[:sf.Field.Bytes]) {
				continue // OVS too sends a masked set_field as reg_load there
			}
			b := AppendActions(nil, acts, version)
			if len(b) == 0 {
				continue
			}
			inputs = append(inputs, b)
			sources = append(sources, acts)
		}
		want := runOVS(t, false, version, inputs)
		for i, in := range inputs {
			name := fmt.Sprintf("%s %s", versionNames[version], Format(sources[i]))
			w := want[i]
			if w.err != "" {
				t.Errorf("%s: OVS rejects %x: %s", name, in, w.err)
				continue
			}
			if !bytes.Equal(w.reencoded, in) {
				t.Errorf("%s: OVS re-encodes %x as %x", name, in, w.reencoded)
			}
			acts, err := PullActions(in, version)
			if err != nil {
				t.Errorf("%s: %x does not decode: %v", name, in, err)
				continue
			}
			if got := "actions=" + Format(acts); got != w.text {
				t.Errorf("%s:\n got %s\nwant %s", name, got, w.text)
			}
		}
	}
}
