package conntrack

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"gvs/internal/ovsref"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gvs/packet"
)

// ntRefOVS is Debian's ovs-vswitchd with dummy (userspace) datapaths and
// ports, in a temporary directory, talking over unix sockets only:
// nothing touches the network. Both daemons are killed by pid when the
// test ends.
type ntRefOVS struct {
	t   *testing.T
	dir string
	ctl string
	env []string
}

func ntStartOVS(t *testing.T) *ntRefOVS {
	t.Helper()
	if testing.Short() {
		t.Skip("starts ovs-vswitchd")
	}
	d := ovsref.Start(t, "gvsnat", "--enable-dummy=override")
	dir := d.Dir
	r := &ntRefOVS{t: t, dir: dir, env: d.Env, ctl: d.Ctl}
	r.vsctl("init")
	return r
}

func (r *ntRefOVS) run(name string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = r.env, r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(r.dir, "vswitchd.log"))
		r.t.Fatalf("%s %v: %v\n%s\nlog:\n%s", name, args, err, out, log)
	}
	return string(out)
}

func (r *ntRefOVS) appctl(args ...string) string {
	r.t.Helper()
	return r.run("ovs-appctl", append([]string{"-t", r.ctl}, args...)...)
}

func (r *ntRefOVS) vsctl(args ...string) string {
	r.t.Helper()
	return r.run("ovs-vsctl", append([]string{"--db=unix:" + r.dir + "/db.sock", "--timeout=10"}, args...)...)
}

// TestNATStringMatchesOpenVSwitch: a ct action with each nat clause, added
// to Open vSwitch's userspace datapath in the form NAT.String prints, is
// printed back by its dpctl/dump-flows exactly so.
func TestNATStringMatchesOpenVSwitch(t *testing.T) {
	r := ntStartOVS(t)
	appctl := r.appctl
	appctl("dpctl/add-dp", "dummy@ref")
	const key = "in_port(1),eth_type(0x0800),ipv4(src=198.18.0.1,frag=no)"
	for _, n := range []NAT{
		{Kind: NATApply},
		{Kind: NATSrc},
		// Not {Kind: NATDst, Random: true}: OVS's action parser drops
		// flags without an address (its printer, which String follows,
		// prints them: TestNATString has it).
		{Kind: NATSrc, AddrMin: ntAddr("198.18.0.10")},
		{Kind: NATSrc, AddrMin: ntAddr("198.18.0.10"), AddrMax: ntAddr("198.18.0.20"), PortMin: 1024, PortMax: 65535, Random: true},
		{Kind: NATDst, AddrMin: ntAddr("198.18.5.1"), PortMin: 8080},
		{Kind: NATDst, AddrMin: ntAddr("198.18.5.1"), AddrMax: ntAddr("198.18.5.3"), Persistent: true, Hash: true},
		{Kind: NATSrc, AddrMin: ntAddr("2001:2::10"), AddrMax: ntAddr("2001:2::20")},
		{Kind: NATDst, AddrMin: ntAddr("2001:2::10"), AddrMax: ntAddr("2001:2::20"), PortMin: 80, PortMax: 81, Persistent: true, Random: true},
		{Kind: NATDst, AddrMin: ntAddr("2001:2::10"), PortMin: 80},
	} {
		action := "ct(commit,zone=3," + n.String() + ")"
		appctl("dpctl/del-flows", "dummy@ref")
		appctl("dpctl/add-flow", "dummy@ref", key, action)
		dump := appctl("dpctl/dump-flows", "dummy@ref")
		_, got, ok := strings.Cut(strings.TrimSpace(dump), "actions:")
		if !ok {
			t.Fatalf("%s: dump %q", action, dump)
		}
		if got != action {
			t.Errorf("Open vSwitch: %s\ngvs:          %s", got, action)
		}
	}
}

// ntPcapRecords returns the packets of a pcap file (none if it is not
// there yet).
func ntPcapRecords(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || len(data) < 24 {
		return nil
	}
	var le bool
	switch binary.LittleEndian.Uint32(data) {
	case 0xa1b2c3d4:
		le = true
	case 0xd4c3b2a1:
	default:
		t.Fatalf("%s: not a pcap file", path)
	}
	u32 := func(b []byte) uint32 {
		if le {
			return binary.LittleEndian.Uint32(b)
		}
		return binary.BigEndian.Uint32(b)
	}
	var recs [][]byte
	for p := data[24:]; len(p) >= 16; {
		n := int(u32(p[8:]))
		if len(p) < 16+n {
			break
		}
		recs = append(recs, p[16:16+n])
		p = p[16+n:]
	}
	return recs
}

// ntWithFlags sets a TCP packet's flags and fixes its checksum.
func ntWithFlags(ip []byte, flags byte) []byte {
	l4, _, _ := ntL4(ip)
	l4[13] = flags
	ntFixL4(ip, false)
	return ip
}

// TestNATRewriteMatchesOpenVSwitch: packets sent through Debian's
// ovs-vswitchd (userspace datapath) with ct(commit,nat(...)) flows leave
// it byte for byte as natPacket rewrites them: SNAT and DNAT, both
// directions, TCP, UDP, ICMP echo and a related ICMP error, IPv4 and
// IPv6. (Each source keeps its port, which Open vSwitch does when free,
// so the reply tuples are known.)
func TestNATRewriteMatchesOpenVSwitch(t *testing.T) {
	r := ntStartOVS(t)
	pcap := func(p string) string { return filepath.Join(r.dir, p+".pcap") }
	r.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1", "options:tx_pcap="+pcap("p1"),
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2", "options:tx_pcap="+pcap("p2"))

	// send injects ip on port in and returns the IP packet that left on
	// the other port.
	send := func(in string, ip []byte) []byte {
		t.Helper()
		out := "p2"
		if in == "p2" {
			out = "p1"
		}
		before := len(ntPcapRecords(t, pcap(out)))
		r.appctl("netdev-dummy/receive", in, hex.EncodeToString(ntFrame(ip, false)))
		for range 100 {
			if recs := ntPcapRecords(t, pcap(out)); len(recs) > before {
				return recs[before][14:]
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("nothing left %s", out)
		return nil
	}
	// ours runs natPacket on ip.
	ours := func(ip []byte, orig, reply Tuple, kind NATKind, isReply, related bool) []byte {
		b := ntBuffer(ntFrame(ip, false))
		natPacket(b, &orig, &reply, kind, isReply, related)
		return ntIPOf(b.Data())
	}
	// Open vSwitch 3.1 (Debian's) mangles the packet an IPv6 ICMP error
	// quotes (a wrong L4 checksum under SNAT, a port written into the
	// address under DNAT), fixed in 3.2 by "conntrack: Properly unNAT
	// inner header of related traffic". There the test asks that its
	// packet be broken and ours valid, and accepts either fixed.
	ovsBroken := map[string]bool{"ipv6/snat/tcp/icmp-error": true, "ipv6/dnat/tcp/icmp-error": true}
	check := func(name string, got, want []byte) {
		t.Helper()
		if bytes.Equal(got, want) {
			return
		}
		if ovsBroken[name] {
			if errOVS, errOurs := ntCheckIP(got), ntCheckIP(want); errOVS != nil && errOurs == nil {
				t.Logf("%s: Open vSwitch's known bug (%v); ours valid", name, errOVS)
				return
			}
		}
		t.Errorf("%s:\nOpen vSwitch %x\ngvs          %x", name, got, want)
	}

	for _, f := range ntFamilies {
		match, icmp := "ip", ntProto{name: "icmp-echo", ports: true, icmp: true}
		if f.a.Is6() {
			match = "ipv6"
		}
		tcp, udp := ntProtos[0], ntProtos[1]
		for _, kind := range []NATKind{NATSrc, NATDst} {
			name := f.name + "/snat"
			clause := "nat(src=" + f.n.String() + ")"
			server, seen := f.b, f.b // where the client sends, where it arrives
			if kind == NATDst {
				name = f.name + "/dnat"
				addr := f.b.String()
				if f.b.Is6() {
					addr = "[" + addr + "]"
				}
				clause = "nat(dst=" + addr + ":8080)"
				seen, server = f.v, f.b
			}
			r.run("ovs-ofctl", "del-flows", "br0")
			r.run("ovs-ofctl", "add-flow", "br0", match+",in_port=1,actions=ct(commit,zone=3,"+clause+"),output:2")
			r.run("ovs-ofctl", "add-flow", "br0", match+",in_port=2,actions=ct(zone=3,nat),output:1")
			r.appctl("dpctl/flush-conntrack")

			// TCP: the handshake's first two segments, then an ICMP error
			// about the client's segment as it left.
			dport := uint16(80)
			if kind == NATDst {
				dport = 8080
			}
			orig := ntTuple(f, tcp, f.a, seen, 40000, 80, true)
			reply := ntTuple(f, tcp, server, f.n, dport, 40000, false)
			if kind == NATDst {
				reply = ntTuple(f, tcp, server, f.a, dport, 40000, false)
			}
			syn := ntWithFlags(ntIP(ntPacket(f, tcp, f.a, seen, 40000, 80, true)), 0x02)
			out := send("p1", syn)
			check(name+"/tcp/syn", out, ours(syn, orig, reply, kind, false, false))
			synack := ntWithFlags(ntIP(ntPacket(f, tcp, reply.Src, reply.Dst, reply.SrcPort, reply.DstPort, false)), 0x12)
			check(name+"/tcp/syn-ack", send("p2", synack), ours(synack, orig, reply, kind, true, false))
			errPkt := ntErrorPkt(f.r, reply.Dst, out, 0)
			check(name+"/tcp/icmp-error", send("p2", errPkt), ours(errPkt, orig, reply, kind, true, true))

			// UDP, both ways.
			orig = ntTuple(f, udp, f.a, seen, 5000, 80, true)
			reply = ntTuple(f, udp, server, f.n, dport, 5000, false)
			if kind == NATDst {
				reply = ntTuple(f, udp, server, f.a, dport, 5000, false)
			}
			u := ntIP(ntPacket(f, udp, f.a, seen, 5000, 80, true))
			check(name+"/udp", send("p1", u), ours(u, orig, reply, kind, false, false))
			u = ntIP(ntPacket(f, udp, reply.Src, reply.Dst, reply.SrcPort, reply.DstPort, false))
			check(name+"/udp/reply", send("p2", u), ours(u, orig, reply, kind, true, false))

			// ICMP echo, both ways (SNAT only: a port in a DNAT clause
			// means nothing to ICMP).
			if kind == NATSrc {
				orig = ntTuple(f, icmp, f.a, f.b, 7, 0, true)
				reply = ntTuple(f, icmp, f.b, f.n, 7, 0, false)
				e := ntIP(ntPacket(f, icmp, f.a, f.b, 7, 0, true))
				check(name+"/echo", send("p1", e), ours(e, orig, reply, kind, false, false))
				e = ntIP(ntPacket(f, icmp, f.b, f.n, 7, 0, false))
				check(name+"/echo-reply", send("p2", e), ours(e, orig, reply, kind, true, false))
			}
		}
	}
}

// TestALGFTPMatchesOpenVSwitch: an active FTP session through SNAT with
// alg=ftp in Debian's ovs-vswitchd leaves it byte for byte as natPacket
// and algFTP rewrite it, and the data connection the server opens is
// NATed back to the client as algExpectation says.
//
// A packet netdev-dummy/receive injects has no room to grow, and Open
// vSwitch then leaves the PORT command's text alone (its "unsupported
// effective MTU" case), as algFTP does a frame without tailroom: so ours
// run on buffers without tailroom too. The rewrite itself, and the
// sequence numbers after it, are TestALGFTPActiveSNAT's.
func TestALGFTPMatchesOpenVSwitch(t *testing.T) {
	r := ntStartOVS(t)
	pcap := func(p string) string { return filepath.Join(r.dir, p+".pcap") }
	r.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1", "options:tx_pcap="+pcap("p1"),
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2", "options:tx_pcap="+pcap("p2"))
	r.run("ovs-ofctl", "add-flow", "br0", "tcp,in_port=1,actions=ct(commit,zone=3,alg=ftp,nat(src=198.18.2.10)),output:2")
	r.run("ovs-ofctl", "add-flow", "br0", "tcp,in_port=2,actions=ct(commit,zone=3,nat),output:1")

	send := func(in string, ip []byte) []byte {
		t.Helper()
		out := "p2"
		if in == "p2" {
			out = "p1"
		}
		before := len(ntPcapRecords(t, pcap(out)))
		r.appctl("netdev-dummy/receive", in, hex.EncodeToString(ntFrame(ip, false)))
		for range 100 {
			if recs := ntPcapRecords(t, pcap(out)); len(recs) > before {
				return recs[before][14:]
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("nothing left %s", out)
		return nil
	}
	orig := Tuple{Src: ntAddr("198.18.0.1"), Dst: ntAddr("198.18.1.2"), SrcPort: 40000, DstPort: 21, Proto: packet.ProtoTCP, Zone: 3}
	reply := Tuple{Src: ntAddr("198.18.1.2"), Dst: ntAddr("198.18.2.10"), SrcPort: 21, DstPort: 40000, Proto: packet.ProtoTCP, Zone: 3}
	var st algFTPState
	var exp algExpectation
	ours := func(ip []byte, isReply bool) []byte {
		frame := ntFrame(ip, false)
		b := packet.NewBuffer(0, len(frame))
		b.SetLen(len(frame))
		copy(b.Data(), frame)
		b.Parse()
		natPacket(b, &orig, &reply, NATSrc, isReply, false)
		e, res := algFTP(b, &orig, &reply, NATSrc, true, isReply, &st)
		if res == algFTPExpected {
			exp = e
		}
		return append([]byte(nil), ntIPOf(b.Data())...)
	}
	step := func(name, in string, ip []byte) {
		t.Helper()
		want := ours(ip, in == "p2")
		if got := send(in, ip); !bytes.Equal(got, want) {
			t.Errorf("%s:\nOpen vSwitch %x\ngvs          %x", name, got, want)
		}
	}
	const (
		ack    = 0x10
		pshAck = 0x18
	)
	a, b, n := "198.18.0.1", "198.18.1.2", "198.18.2.10"
	step("syn", "p1", ntWithFlags(ntFTPPacket(a, b, 40000, 21, 1000, 0, ""), 0x02))
	step("syn-ack", "p2", ntWithFlags(ntFTPPacket(b, n, 21, 40000, 5000, 1001, ""), 0x12))
	step("ack", "p1", ntWithFlags(ntFTPPacket(a, b, 40000, 21, 1001, 5001, ""), ack))
	port := "PORT 198,18,0,1,156,64\r\n"
	step("port", "p1", ntWithFlags(ntFTPPacket(a, b, 40000, 21, 1001, 5001, port), pshAck))
	if st.Skew != 0 || exp.Key.DstPort != 40000 {
		t.Fatalf("after PORT: state %+v, expectation %+v", st, exp)
	}
	step("ack-of-port", "p2", ntWithFlags(ntFTPPacket(b, n, 21, 40000, 5001, 1001+uint32(len(port)), ""), ack))
	step("200", "p2", ntWithFlags(ntFTPPacket(b, n, 21, 40000, 5001, 1001+uint32(len(port)), "200 PORT command successful\r\n"), pshAck))
	step("list", "p1", ntWithFlags(ntFTPPacket(a, b, 40000, 21, 1001+uint32(len(port)), 5001+29, "LIST\r\n"), pshAck))

	// The server's data connection, from port 20 to the address and port
	// the rewritten PORT gave it.
	data := Tuple{Src: ntAddr(b), Dst: ntAddr(n), SrcPort: 20, DstPort: 40000, Proto: packet.ProtoTCP, Zone: 3}
	if algExpectKey(data) != exp.Key {
		t.Fatalf("data connection %+v does not match the expectation %+v", data, exp.Key)
	}
	dataReply, kind := exp.NATReply(Tuple{Src: data.Dst, Dst: data.Src, SrcPort: data.DstPort, DstPort: data.SrcPort, Proto: packet.ProtoTCP, Zone: 3})
	syn := ntWithFlags(ntFTPPacket(b, n, 20, 40000, 9000, 0, ""), 0x02)
	bb := ntBuffer(ntFrame(syn, false))
	natPacket(bb, &data, &dataReply, kind, false, false)
	if got, want := send("p2", syn), ntIPOf(bb.Data()); !bytes.Equal(got, want) {
		t.Errorf("data SYN:\nOpen vSwitch %x\ngvs          %x", got, want)
	}
	dump := r.appctl("dpctl/dump-conntrack")
	if !strings.Contains(dump, "tcp,orig=(src=198.18.1.2,dst=198.18.2.10,sport=20,dport=40000),reply=(src=198.18.0.1,dst=198.18.1.2,sport=40000,dport=20),zone=3") {
		t.Errorf("Open vSwitch's data connection is not the one expected:\n%s", dump)
	}
}
