package tunnel

import (
	"strings"
	"testing"
)

func builtHeaders(t testing.TB) []Header {
	var hs []Header
	for _, kind := range []Kind{Geneve, VXLAN, GRE} {
		for _, v6 := range []bool{false, true} {
			for i := 0; i < 3; i++ {
				p := params(kind, v6)
				switch i {
				case 1:
					p.Csum, p.OAM, p.GRESeq, p.GeneveOptions = true, true, true, genevePing
					p.GBP, p.GBPID = true, 7
				case 2:
					p.GeneveOptions = append(append([]byte{}, genevePing...), 1, 2, 3, 0) // an option without data
					p.GREKey, p.DontFragment, p.TOS = false, false, 0
				}
				h, err := Build(&p)
				if err != nil {
					t.Fatal(err)
				}
				hs = append(hs, h)
			}
		}
	}
	return hs
}

func TestParseHeaderRoundTrip(t *testing.T) {
	for _, h := range builtHeaders(t) {
		text := h.String()
		got, err := ParseHeader(text)
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if got != h {
			t.Errorf("%s\n got % x\nwant % x", text, got.Data(), h.Data())
		}
		tp, op, got2, err := ParsePush(FormatPush(4, 2, &h))
		if err != nil || tp != 4 || op != 2 || got2 != h {
			t.Errorf("ParsePush(%s): %v %d %d", FormatPush(4, 2, &h), err, tp, op)
		}
	}
}

func TestParseHeaderErrors(t *testing.T) {
	good := "header(size=50,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=198.18.1.1,dst=198.18.1.2,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=6081,csum=0x0),geneve(vni=0x7b))"
	if _, err := ParseHeader(good); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		strings.Replace(good, "size=50", "size=51", 1),
		strings.Replace(good, "type=5", "type=7", 1),
		strings.Replace(good, "proto=17", "proto=47", 1),
		strings.Replace(good, "dl_type=0x0800", "dl_type=0x86dd", 1),
		strings.Replace(good, "vni=0x7b", "vni=0x1000000", 1),
		strings.Replace(good, "src=198.18.1.1", "src=2001:2::1", 1),
		strings.Replace(good, "f8:bc", "f8:bcc", 1),
		strings.Replace(good, "vni=0x7b", "vni=0x7b,options({class=0x1,type=0x2,len=3,0x1})", 1),
		good[:len(good)-1],
		good + "x",
		"",
	} {
		if _, err := ParseHeader(bad); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func FuzzParseHeader(f *testing.F) {
	for _, h := range builtHeaders(f) {
		f.Add(h.String())
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHeader(s)
		if err != nil {
			return
		}
		again, err := ParseHeader(h.String())
		if err != nil || again != h {
			t.Fatalf("%q parses, but its own text %q does not give it back: %v", s, h.String(), err)
		}
	})
}
