package ofctl

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gvs/netdev/dummy"
)

// composeCases are netdev-dummy/receive arguments whose frames Open
// vSwitch composes from a datapath flow (flow_compose, packet_expand for
// --len), and a hex frame.
var composeCases = []string{
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=6,tos=0x10,ttl=63,frag=no),tcp(src=1234,dst=80)'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=1234,dst=80),tcp_flags(syn)'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=53,dst=5353)'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=53,dst=5353)' --len 128",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=1,dst=2)' --len 200",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=17,tos=0,ttl=64,frag=first),udp(src=53,dst=5353)'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=17,tos=0,ttl=64,frag=later)'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=198.18.0.1,tip=198.18.0.2,op=1,sha=50:54:00:00:00:05,tha=00:00:00:00:00:00)'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x8100),vlan(vid=10,pcp=3),encap(eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=0,code=0))'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x86dd),ipv6(src=2001:db8::1,dst=2001:db8::2,label=0x12345,proto=58,tclass=0,hlimit=64,frag=no),icmpv6(type=128,code=0)'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=33:33:ff:00:00:02),eth_type(0x86dd),ipv6(src=2001:db8::1,dst=ff02::1:ff00:2,label=0,proto=58,tclass=0,hlimit=255,frag=no),icmpv6(type=135,code=0),nd(target=2001:db8::2,sll=50:54:00:00:00:05,tll=00:00:00:00:00:00)'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x86dd),ipv6(src=2001:db8::1,dst=2001:db8::2,label=0,proto=6,tclass=0,hlimit=64,frag=no),tcp(src=5,dst=6)'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07)'",
	"'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x1234)'",
	"505400000007505400000005080045000054000000004001f5a4c6120001c61200020800f7ff0000000000",
}

// TestComposeMatchesDebian sends every case into a dummy port with
// rxq_pcap on Debian's ovs-vswitchd and compares the frames it recorded
// with what package dummy composes (and, once gvs runs the same, with
// what gvs recorded).
func TestComposeMatchesDebian(t *testing.T) {
	requireTools(t)
	setup := []string{"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1", "options:rxq_pcap=rx.pcap"}
	ref, _ := sides(t)
	sw := startSwitch(t, ref, setup...)
	for _, c := range composeCases {
		if r := sw.sh(t, "ovs-appctl netdev-dummy/receive p1 "+c); r.exit != 0 {
			t.Fatalf("%s: %s", c, r)
		}
	}
	frames := readPcap(t, filepath.Join(sw.dir, "rx.pcap"), len(composeCases))
	for i, c := range composeCases {
		args := shellWords(c)
		got, err := dummy.ReceiveArgs(args)
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		if len(got) != 1 || !bytes.Equal(got[0], frames[i]) {
			t.Errorf("%s:\n debian %s\n    gvs %x", c, hex.EncodeToString(frames[i]), got)
		}
	}
}

// TestDummyAgainstDebian compares what gvs already does without OpenFlow:
// the dummy ports' rows, the types the switch reports, the netdev-dummy/*
// commands and their errors, the frames recorded by rxq_pcap.
func TestDummyAgainstDebian(t *testing.T) {
	setup := append(addPortsArgs(2), "--", "set", "interface", "p1", "options:rxq_pcap=p1-rx.pcap")
	p := startPair(t, setup...)
	p.compare(t,
		"ovs-vsctl get open . datapath_types",
		// Debian lists its tunnel and other types, which gvs has not;
		// the dummy ones must be there.
		"ovs-vsctl get open . iface_types | grep -o 'dummy[a-z-]*'",
		"ovs-vsctl get interface p1 type ofport admin_state link_state error",
		"ovs-vsctl get interface p2 ofport options",
		"ovs-vsctl get interface p1 status mac_in_use mtu",
		"ovs-vsctl get interface br0 type status mac_in_use",
		"ovs-vsctl --columns=admin_state,link_state,link_speed,duplex,ifindex,mtu,ofport,error,lacp_current list interface p2",
		"ovs-appctl netdev-dummy/receive nosuch 00",
		"ovs-appctl netdev-dummy/receive p1 --qid 3 "+composeCases[0],
		"ovs-appctl netdev-dummy/receive p1 "+composeCases[0]+" --len 20",
		"ovs-appctl netdev-dummy/receive p1 "+composeCases[0]+" "+composeCases[3],
		"ovs-appctl netdev-dummy/receive p1 'in_port=1,dl_src=50:54:00:00:00:05'",
		"ovs-appctl netdev-dummy/receive p1 'in_port(1),eth(src=50:54:00:00:00:0g)'",
		"ovs-appctl netdev-dummy/receive p1 'in_port(1),foo(1),eth_type(0x0800)'",
		"ovs-appctl netdev-dummy/receive p1 'in_port(1),ipv4(src=198.18.0.1,bogus=1)'",
		"ovs-appctl netdev-dummy/receive p1 0011",
		"ovs-appctl netdev-dummy/ip4addr p1 bogus",
		"ovs-appctl netdev-dummy/ip4addr p1 198.18.0.9/24",
		"ovs-appctl netdev-dummy/ip6addr p1 2001:db8::1/64",
		"ovs-appctl netdev-dummy/ip6addr p1 2001:db8::1",
		"ovs-appctl netdev-dummy/set-admin-state p1 sideways",
		"ovs-appctl netdev-dummy/set-admin-state nosuch up",
		"ovs-appctl netdev-dummy/conn-state p1",
		"ovs-appctl netdev-dummy/conn-state",
		"ovs-appctl netdev-dummy/ip4addr nosuch 198.18.0.1/24",
		"!ovs-vsctl add-port br0 s1 -- set interface s1 type=dummy options:pstream=punix:s1.sock -- add-port br0 s2 -- set interface s2 type=dummy options:stream=unix:s1.sock",
		"!for i in $(seq 200); do ovs-appctl netdev-dummy/conn-state s2 | grep -q ' connected' && break; sleep 0.01; done",
		"ovs-appctl netdev-dummy/conn-state s2",
		"ovs-appctl netdev-dummy/conn-state s1",
		"ovs-appctl netdev-dummy/conn-state",
		// The datapath's port numbers follow Open vSwitch's dummy
		// datapath (p1: 1, br0: 100), stream ports show their options,
		// the bridge is under dummy@ovs-dummy.
		"ovs-appctl dpif/show",
		"ovs-appctl netdev-dummy/set-admin-state p2 down",
	)
	// The admin state reaches the database on the next pass.
	for _, s := range []*vswitch{p.ref, p.sut} {
		if !waitFor(5*time.Second, func() bool {
			return strings.TrimSpace(s.sh(t, "ovs-vsctl get interface p2 admin_state").stdout) == "down"
		}) {
			t.Errorf("%s: p2 admin_state never went down", s.kind.name)
		}
	}
	ref := readPcap(t, filepath.Join(p.ref.dir, "p1-rx.pcap"), 2)
	sut := readPcap(t, filepath.Join(p.sut.dir, "p1-rx.pcap"), 2)
	for i := range ref {
		if !bytes.Equal(ref[i], sut[i]) {
			t.Errorf("rxq_pcap frame %d: %s %x, %s %x", i, p.ref.kind.name, ref[i], p.sut.kind.name, sut[i])
		}
	}
}

func readPcap(t *testing.T, path string, want int) [][]byte {
	t.Helper()
	var frames [][]byte
	waitFor(2*time.Second, func() bool {
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer f.Close()
		frames, err = dummy.ReadPcap(f)
		return err == nil && len(frames) >= want
	})
	if len(frames) != want {
		t.Fatalf("%s: %d frames, want %d", path, len(frames), want)
	}
	return frames
}

// shellWords splits a line the way sh does for the simple quoting these
// cases use (single quotes, spaces).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inQuote, have := false, false
	for _, c := range s {
		switch {
		case c == '\'':
			inQuote, have = !inQuote, true
		case c == ' ' && !inQuote:
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(c)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words
}

func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var _ = fmt.Sprint
