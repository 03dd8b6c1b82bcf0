package tunnel

import (
	"net/netip"
	"strings"
	"testing"

	"gvs/packet"
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

func TestSendFields(t *testing.T) {
	cfg, _, err := ParseConfig("v", "vxlan", map[string]string{"remote_ip": "198.18.1.2", "key": "flow", "csum": "true",
		"ttl": "inherit", "tos": "inherit", "egress_pkt_mark": "9"})
	if err != nil {
		t.Fatal(err)
	}
	var k packet.Key
	packet.Parse(innerFrame(), &k)
	k.IPTOS, k.IPTTL, k.TunID, k.TunFlags = 0x47, 33, 0x99, FlagOAM|FlagKey|FlagDontFragment
	cfg.SetSendFields(&k)
	if k.TunDst != [4]byte{198, 18, 1, 2} || k.TunTOS != 0x46 || k.TunTTL != 33 || k.TunID != 0x99 || k.PktMark != 9 ||
		k.TunFlags != FlagOAM|FlagCsum|FlagDontFragment|FlagKey {
		t.Errorf("send fields %+v", k)
	}
	p, ok := cfg.Params(&k, netip.MustParseAddr("198.18.1.1"), [6]byte{1}, [6]byte{2}, nil)
	if !ok || p.Dst != netip.MustParseAddr("198.18.1.2") || !p.Csum || !p.OAM || !p.DontFragment || p.TOS != 0x46 || p.DstPort != VXLANPort {
		t.Errorf("params %+v", p)
	}
	if _, err := Build(&p); err != nil {
		t.Error(err)
	}
	// No IP: the configured values; a fixed key replaces the flow's.
	cfg, _, _ = ParseConfig("g", "gre", map[string]string{"remote_ip": "2001:2::2", "out_key": "5", "tos": "0x20"})
	k = packet.Key{EtherType: packet.EtherTypeARP, IPTOS: 3, TunID: 1}
	cfg.SetSendFields(&k)
	if k.TunIPv6Dst != netip.MustParseAddr("2001:2::2").As16() || k.TunTOS != 0x20 || k.TunTTL != 64 || k.TunID != 5 ||
		k.TunFlags != FlagDontFragment|FlagKey {
		t.Errorf("send fields %+v", k)
	}
}
