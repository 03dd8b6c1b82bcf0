package tunnel

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	cfg, warn, err := ParseConfig("t0", "geneve", map[string]string{
		"remote_ip": "2001:2::2", "local_ip": "2001:2::1", "in_key": "0x10", "key": "flow", "ttl": "inherit",
		"tos": "0x20", "csum": "true", "df_default": "false", "egress_pkt_mark": "7", "seq": "true",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Kind: Geneve, Remote: netip.MustParseAddr("2001:2::2"), Local: netip.MustParseAddr("2001:2::1"),
		InKey: KeyConfig{Present: true, Value: 16}, OutKey: KeyConfig{Present: true, Flow: true}, DstPort: GenevePort,
		Csum: true, TTLInherit: true, TTL: 64, TOS: 0x20, SetEgressPktMark: true, EgressPktMark: 7}
	if cfg != want {
		t.Errorf("config\n got %+v\nwant %+v", cfg, want)
	}
	// seq is a gre option: geneve calls it unknown, and goes on.
	if len(warn) != 1 || warn[0] != "t0: unknown geneve argument 'seq'" {
		t.Errorf("warnings %q", warn)
	}
	// A fatal error carries the warnings before it.
	_, _, err = ParseConfig("t1", "vxlan", map[string]string{"bogus": "1"})
	if err == nil || err.Error() != "t1: unknown vxlan argument 'bogus'\nt1: vxlan type requires valid 'remote_ip' argument" {
		t.Errorf("error %v", err)
	}
	if cfg, _, _ := ParseConfig("t2", "gre", map[string]string{"remote_ip": "198.18.1.2", "ttl": "300", "dst_port": "9"}); cfg.TTL != 44 || cfg.DstPort != 0 {
		t.Errorf("ttl %d (atoi then uint8, as Open vSwitch), dst_port %d (not a UDP tunnel)", cfg.TTL, cfg.DstPort)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add("geneve", "remote_ip=198.18.1.2,key=0x10,tos=inherit")
	f.Add("vxlan", "remote_ip=flow,local_ip=flow,exts=gbp,,gpe,x,packet_type=legacy_l3")
	f.Add("gre", "remote_ip=2001:2::2,ttl=-5,in_key=99999999999999999999999,out_key=-1,seq=true")
	f.Fuzz(func(t *testing.T, typ, options string) {
		m := map[string]string{}
		for _, kv := range strings.Split(options, ",") {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		cfg, _, err := ParseConfig("f", typ, m)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if !cfg.RemoteFlow && !cfg.Remote.IsValid() {
			t.Fatal("accepted without remote_ip")
		}
		_ = cfg.DpifShow(typ)
	})
}

func BenchmarkPush(b *testing.B) {
	for _, kind := range []Kind{Geneve, VXLAN, GRE} {
		b.Run(kind.String(), func(b *testing.B) {
			p := params(kind, false)
			h, _ := Build(&p)
			in := innerFrame()
			buf := bufferWith(in)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buf.SetLen(len(in))
				Push(buf, &h, uint32(i), 0)
				buf.Pull(int(h.Len))
			}
		})
	}
}

func BenchmarkPop(b *testing.B) {
	for _, kind := range []Kind{Geneve, VXLAN, GRE} {
		b.Run(kind.String(), func(b *testing.B) {
			p := params(kind, false)
			if kind == Geneve {
				p.GeneveOptions = genevePing
			}
			h, _ := Build(&p)
			in := innerFrame()
			buf := bufferWith(in)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buf.SetLen(len(in))
				Push(buf, &h, 1, 0)
				Pop(buf, PopConfig{Kind: kind})
			}
		})
	}
}
