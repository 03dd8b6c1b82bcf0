package xlate_test

import (
	"strings"
	"testing"

	"gvs/ofproto/xlate"
)

// FuzzParseCTNext: --ct-next never panics; what it accepts formats back
// to names that parse to the same state.
func FuzzParseCTNext(f *testing.F) {
	for _, s := range []string{"trk,new", "trk,est,rpl", "trk est", "trk,inv", "new,est", "bogus", "", ",,", "trk,snat,dnat,rel"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := xlate.ParseCTNext(s)
		if err != nil {
			if st != 0 || err.Error() == "" {
				t.Fatalf("%q: state %#x with error %v", s, st, err)
			}
			return
		}
		if st == 0 {
			return
		}
		names := xlate.FormatCTStateFlags(st, ",")
		back, err := xlate.ParseCTNext(names)
		if err != nil || back != st {
			t.Fatalf("%q -> %#x -> %q -> %#x, %v", s, st, names, back, err)
		}
		if strings.Contains(names, "0x") {
			t.Fatalf("%q: unknown bits %q", s, names)
		}
	})
}
