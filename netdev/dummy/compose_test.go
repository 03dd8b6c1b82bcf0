package dummy

import (
	"encoding/hex"
	"errors"
	"testing"

	"gvs/packet"
)

// Frames Debian's ovs-vswitchd 3.1 queued (rxq_pcap) for these
// netdev-dummy/receive arguments; tests/ofctl TestComposeMatchesDebian
// compares many more against the live daemon.
var composeGolden = []struct {
	args []string
	hex  string
}{
	{[]string{"in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.2,dst=198.18.0.1,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"},
		"50540000000750540000000508004500005c000000004001ee79c6120002c6120001080013fc00000000000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"},
	{[]string{"in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x8100),vlan(vid=10,pcp=3),encap(eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=0,code=0))"},
		"5054000000075054000000058100600a08004500005c000000004001ee79c6120001c612000200001bfc00000000000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"},
	{[]string{"505400000007505400000005080045000054000000004001f5a4c6120001c61200020800f7ff0000000000"},
		"505400000007505400000005080045000054000000004001f5a4c6120001c61200020800f7ff0000000000"},
}

func TestComposeGolden(t *testing.T) {
	for _, c := range composeGolden {
		got, err := ReceiveArgs(c.args)
		if err != nil {
			t.Fatalf("%s: %v", c.args, err)
		}
		if len(got) != 1 || hex.EncodeToString(got[0]) != c.hex {
			t.Errorf("%s:\n got %x\nwant %s", c.args, got, c.hex)
		}
	}
}

// TestComposeParses: the composed frame parses back to the flow's fields.
func TestComposeParses(t *testing.T) {
	frame, err := ComposeFrame("in_port(3),eth(src=02:00:00:00:00:01,dst=02:00:00:00:00:02),eth_type(0x0800),ipv4(src=198.18.1.1,dst=198.18.1.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=4000,dst=443),tcp_flags(ack)", 0)
	if err != nil {
		t.Fatal(err)
	}
	var k packet.Key
	if st := packet.Parse(frame, &k); st != packet.StatusOK {
		t.Fatalf("parse: %v", st)
	}
	if k.IPProto != 6 || k.SrcPort != 4000 || k.DstPort != 443 || k.TCPFlags != 0x010 || k.SrcIPv4 != [4]byte{198, 18, 1, 1} {
		t.Errorf("parsed %+v", k)
	}
	if len(frame) != 14+20+20+64 {
		t.Errorf("length %d", len(frame))
	}
	if packet.Checksum(frame[14:34], 0) != 0xffff {
		t.Error("bad IPv4 header checksum")
	}
}

func TestComposeErrors(t *testing.T) {
	for _, s := range []string{"in_port=1", "eth(src=zz)", "in_port(1),foo(1)", "ipv4(src=1.2.3.4,bogus=1)", "eth(", "ipv4(frag=maybe)", "tcp_flags(bogus)"} {
		_, err := ComposeFrame(s, 0)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: %v, want a SyntaxError", s, err)
		}
	}
	if _, err := ComposeFrame("eth_type(0x0800),ipv4(proto=17),udp(src=1,dst=2)", 20); err == nil {
		t.Error("--len smaller than the frame accepted")
	}
	if f, err := ComposeFrame("eth_type(0x0800),ipv4(proto=17),udp(src=1,dst=2)", 200); err != nil || len(f) != 200 {
		t.Errorf("--len 200: %d bytes, %v", len(f), err)
	}
	if _, err := ReceiveArgs([]string{"eth_type(0x0800)", "--len", "10"}); err == nil || err.Error() != "too small packet len" {
		t.Errorf("--len 10: %v", err)
	}
}

func FuzzComposeFrame(f *testing.F) {
	for _, c := range composeGolden {
		f.Add(c.args[0], 0)
	}
	f.Add("eth_type(0x86dd),ipv6(proto=58),icmpv6(type=135,code=0),nd(target=::1,sll=01:02:03:04:05:06)", 128)
	f.Add("encap(encap(vlan(tci=0xffff)))", 60)
	f.Fuzz(func(t *testing.T, s string, size int) {
		if size < 0 || size > 9000 {
			return
		}
		frame, err := ComposeFrame(s, size)
		if err != nil {
			return
		}
		if size > 0 && len(frame) != size {
			t.Fatalf("--len %d gave %d bytes", size, len(frame))
		}
		if len(frame) < 14 {
			t.Fatalf("frame of %d bytes", len(frame))
		}
	})
}
