package tunnel

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"gvs/internal/ovsref"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gvs/packet"
)

// refSwitch is Debian's ovs-vswitchd with dummy datapath ports and its
// native tunnelling: bridge br0 owns the underlay addresses and port p0
// (its transmissions go to p0.pcap); bridge int-br has port vm (OpenFlow
// port 1) and the tunnel ports. Everything lives in a temporary
// directory; nothing touches the network.
type refSwitch struct {
	t   *testing.T
	dir string
	ctl string
	env []string
}

func startRefSwitch(t *testing.T) *refSwitch {
	t.Helper()
	// --enable-dummy without "override": tunnel ports stay Open
	// vSwitch's own vports, only the "system" ports are dummies.
	d := ovsref.Start(t, "gvstnl", "--enable-dummy")
	dir := d.Dir
	r := &refSwitch{t: t, dir: dir, env: d.Env, ctl: d.Ctl}
	r.vsctl("init")
	r.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "other-config:hwaddr=aa:55:aa:55:00:00",
		"--", "add-port", "br0", "p0", "--", "set", "Interface", "p0", "type=dummy", "ofport_request=1",
		"options:tx_pcap="+dir+"/p0.pcap")
	r.vsctl("add-br", "int-br", "--", "set", "bridge", "int-br", "datapath_type=dummy", "fail-mode=secure",
		"--", "add-port", "int-br", "vm", "--", "set", "Interface", "vm", "type=dummy", "ofport_request=1",
		"options:tx_pcap="+dir+"/vm.pcap")
	r.appctl("netdev-dummy/ip4addr", "br0", "198.18.1.1/24")
	r.appctl("netdev-dummy/ip6addr", "br0", "2001:2::1/64")
	r.appctl("ovs/route/add", "198.18.1.2/24", "br0")
	r.appctl("ovs/route/add", "2001:2::2/64", "br0")
	r.appctl("tnl/arp/set", "br0", "198.18.1.2", "f8:bc:12:44:34:b6")
	r.appctl("tnl/neigh/set", "br0", "2001:2::2", "f8:bc:12:44:34:b6")
	r.run("ovs-ofctl", "add-flow", "br0", "actions=normal")
	return r
}

func (r *refSwitch) run(name string, args ...string) string {
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

func (r *refSwitch) vsctl(args ...string) string {
	r.t.Helper()
	return r.run("ovs-vsctl", append([]string{"--db=unix:" + r.dir + "/db.sock", "--timeout=10"}, args...)...)
}

func (r *refSwitch) appctl(args ...string) string {
	r.t.Helper()
	return r.run("ovs-appctl", append([]string{"-t", r.ctl}, args...)...)
}

// pcapFrames returns the frames of a classic pcap file.
func pcapFrames(path string) [][]byte {
	d, err := os.ReadFile(path)
	if err != nil || len(d) < 24 {
		return nil
	}
	var frames [][]byte
	for off := 24; off+16 <= len(d); {
		n := int(binary.LittleEndian.Uint32(d[off+8:]))
		off += 16
		if off+n > len(d) {
			break
		}
		frames = append(frames, d[off:off+n])
		off += n
	}
	return frames
}

// pushHeaderText returns the header(...) part of the first tnl_push in
// a trace's datapath actions.
func pushHeaderText(trace string) string {
	i := strings.Index(trace, "tnl_push(")
	if i < 0 {
		return ""
	}
	s := trace[i:]
	j := strings.Index(s, "header(")
	k := strings.Index(s, ",out_port(")
	if j < 0 || k < j {
		return ""
	}
	return s[j:k]
}

// hashForPort returns a flow hash that SourcePort maps to port.
func hashForPort(port uint16) uint32 {
	span := uint64(DefaultSrcPortMax - DefaultSrcPortMin)
	h := ((uint64(port-DefaultSrcPortMin) << 32) + span - 1) / span
	return uint32(h)
}

// TestPushMatchesOpenVSwitch: for the same port options and flow, the
// header Build makes prints as the tnl_push header Open vSwitch's
// translation makes (ofproto/trace), and Push of the inner frame gives
// the bytes Open vSwitch's userspace datapath sends (netdev-dummy/receive,
// read back from the underlay port's pcap), the UDP source port from
// OVSFlowHash of the inner packet included. Pop of Open vSwitch's frame
// gives back the inner frame and the tunnel metadata.
func TestPushMatchesOpenVSwitch(t *testing.T) {
	r := startRefSwitch(t)
	base := func(kind Kind, v6 bool) BuildParams {
		p := params(kind, v6)
		p.TOS = 0
		return p
	}
	cases := []struct {
		name    string
		typ     string
		options []string
		actions string // before output to the tunnel port
		inTOS   uint8
		want    BuildParams
		pop     PopConfig
		flow    func(k *packet.Key) // the OpenFlow actions' effect on the flow
	}{
		{"geneve key", "geneve", []string{"remote_ip=198.18.1.2", "key=123"}, "", 0, base(Geneve, false), PopConfig{}, nil},
		{"geneve options oam", "geneve", []string{"remote_ip=198.18.1.2", "key=flow"},
			"set_field:0x7b->tun_id,set_field:0xa->tun_metadata0,set_field:+oam->tun_flags", 0,
			func() BuildParams { p := base(Geneve, false); p.GeneveOptions, p.OAM = genevePing, true; return p }(), PopConfig{},
			func(k *packet.Key) { k.TunID, k.TunFlags = 0x7b, k.TunFlags|FlagOAM }},
		{"geneve ipv6", "geneve", []string{"remote_ip=2001:2::2", "key=123", "ttl=9"}, "", 0,
			func() BuildParams { p := base(Geneve, true); p.TTL = 9; return p }(), PopConfig{}, nil},
		{"vxlan flow key csum ttl tos inherit", "vxlan", []string{"remote_ip=198.18.1.2", "key=flow", "csum=true", "ttl=7", "tos=inherit"},
			"set_field:0x99->tun_id", 0x44,
			func() BuildParams {
				p := base(VXLAN, false)
				p.TunID, p.Csum, p.TTL, p.TOS = 0x99, true, 7, 0x44
				return p
			}(), PopConfig{}, func(k *packet.Key) { k.TunID = 0x99 }},
		{"vxlan dst_port no df", "vxlan", []string{"remote_ip=198.18.1.2", "key=5", "dst_port=4790", "df_default=false", "tos=0x20"}, "", 0,
			func() BuildParams {
				p := base(VXLAN, false)
				p.TunID, p.DstPort, p.DontFragment, p.TOS = 5, 4790, false, 0x20
				return p
			}(), PopConfig{}, nil},
		// Open vSwitch 3.1's native tunnelling leaves the GBP
		// extension out of what it sends (the kernel datapath's vxlan
		// device carries it); gvs's Build puts it in only when asked
		// (BuildParams.GBP), as Linux's vxlan device does
		// (TestPopLinuxDevices).
		// (A GBP port needs a dst_port of its own.)
		{"vxlan gbp port", "vxlan", []string{"remote_ip=198.18.1.2", "key=5", "exts=gbp", "dst_port=4791"},
			"set_field:0x1234->tun_gbp_id,set_field:0x48->tun_gbp_flags", 0,
			func() BuildParams { p := base(VXLAN, false); p.TunID, p.DstPort = 5, 4791; return p }(), PopConfig{GBP: true}, nil},
		{"gre key seq csum", "gre", []string{"remote_ip=198.18.1.2", "key=77", "seq=true", "csum=true"}, "", 0,
			func() BuildParams {
				p := base(GRE, false)
				p.TunID, p.GRESeq, p.Csum = 77, true, true
				return p
			}(), PopConfig{}, nil},
		{"gre no key", "gre", []string{"remote_ip=198.18.1.2"}, "", 0,
			func() BuildParams { p := base(GRE, false); p.TunID, p.GREKey = 0, false; return p }(), PopConfig{}, nil},
		{"ip6gre key", "ip6gre", []string{"remote_ip=2001:2::2", "key=5"}, "", 0,
			func() BuildParams { p := base(GRE, true); p.TunID = 5; return p }(), PopConfig{}, nil},
	}
	r.run("ovs-ofctl", "add-tlv-map", "int-br", "{class=0xffff,type=0x80,len=4}->tun_metadata0")
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := r.t
			r.t = t
			defer func() { r.t = parent }()
			port := strconv.Itoa(10 + i)
			args := []string{"add-port", "int-br", "t" + port, "--", "set", "Interface", "t" + port, "type=" + c.typ, "ofport_request=" + port}
			for _, o := range c.options {
				args = append(args, "options:"+o)
			}
			r.vsctl(args...)
			acts := "output:" + port
			if c.actions != "" {
				acts = c.actions + "," + acts
			}
			// A distinct source MAC per case picks its flow.
			srcMAC := byte(0x40 + i)
			r.run("ovs-ofctl", "add-flow", "int-br", "priority=40000,in_port=1,dl_src=02:00:00:00:00:"+hex.EncodeToString([]byte{srcMAC})+",actions="+acts)

			// The inner packets vary so that every branch of
			// OVSFlowHash meets Open vSwitch's own hash.
			var in []byte
			switch i % 3 {
			case 0:
				in = innerFrame()
				binary.BigEndian.PutUint16(in[36:], uint16(10+i))
				in[15] = c.inTOS
				binary.BigEndian.PutUint16(in[24:], 0)
				binary.BigEndian.PutUint16(in[24:], packet.IPv4HeaderChecksum(in[14:34]))
				binary.BigEndian.PutUint16(in[40:], 0) // no inner UDP checksum
			case 1:
				in = innerFrameV6(uint16(10 + i))
				in[14] |= c.inTOS >> 4
				in[15] |= c.inTOS << 4
			case 2:
				in = innerICMP(c.inTOS)
			}
			in[6+5] = srcMAC

			h, err := Build(&c.want)
			if err != nil {
				t.Fatal(err)
			}
			var trace, ovsHeader string
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				trace = r.appctl("ofproto/trace", "int-br", "in_port=1", hex.EncodeToString(in))
				if ovsHeader = pushHeaderText(trace); ovsHeader != "" {
					break
				}
			}
			if ovsHeader != h.String() {
				t.Fatalf("tnl_push header\nOpen vSwitch: %s\ngvs:          %s\ntrace:\n%s", ovsHeader, h.String(), trace)
			}
			if parsed, err := ParseHeader(ovsHeader); err != nil || parsed != h {
				t.Errorf("ParseHeader of Open vSwitch's text: %v\n% x\n% x", err, parsed.Data(), h.Data())
			}
			// The same header from the port's options and the flow, the
			// way the datapath layer makes it: ParseConfig,
			// SetSendFields, Params, Build.
			opts := map[string]string{}
			for _, o := range c.options {
				k, v, _ := strings.Cut(o, "=")
				opts[k] = v
			}
			cfg, _, err := ParseConfig("t"+port, c.typ, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !cfg.GBP { // Open vSwitch's userspace leaves GBP out; gvs does not
				var k packet.Key
				packet.Parse(in, &k)
				if c.flow != nil {
					c.flow(&k)
				}
				cfg.SetSendFields(&k)
				src := local4
				if cfg.Remote.Is6() {
					src = local6
				}
				p, ok := cfg.Params(&k, src, c.want.DstMAC, c.want.SrcMAC, c.want.GeneveOptions)
				h2, err := Build(&p)
				if !ok || err != nil || h2 != h {
					t.Errorf("from the configuration and flow: %v %v\n%s\n%s", ok, err, h2.String(), h.String())
				}
			}

			before := len(pcapFrames(r.dir + "/p0.pcap"))
			r.appctl("netdev-dummy/receive", "vm", hex.EncodeToString(in))
			var sent [][]byte
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if sent = pcapFrames(r.dir + "/p0.pcap"); len(sent) > before {
					break
				}
			}
			if len(sent) != before+1 {
				t.Fatalf("Open vSwitch sent %d frames", len(sent)-before)
			}
			ovsOut := sent[before]
			var inKey packet.Key
			packet.Parse(in, &inKey)
			hash := OVSFlowHash(&inKey)
			if h.Kind.UDP() && len(ovsOut) > int(h.L4)+2 {
				if ovsPort := binary.BigEndian.Uint16(ovsOut[h.L4:]); ovsPort != SourcePort(hash, DefaultSrcPortMin, DefaultSrcPortMax) {
					t.Errorf("UDP source port: Open vSwitch %d, gvs %d (OVSFlowHash %#x)", ovsPort, SourcePort(hash, DefaultSrcPortMin, DefaultSrcPortMax), hash)
					hash = hashForPort(ovsPort)
				}
			}
			var seq uint32
			if h.GRESeq && len(ovsOut) >= int(h.Len) {
				seq = binary.BigEndian.Uint32(ovsOut[h.Len-4:])
			}
			if h.GRECsum && h.GRESeq && len(ovsOut) > int(h.Len) {
				// Open vSwitch computes the GRE checksum before it
				// writes the sequence number (netdev_gre_push_header),
				// so its checksum is wrong for every sequence number
				// but 0 and Linux drops such packets. Push checksums
				// the header as sent: compare with OVS's frame with
				// the checksum corrected.
				g := ovsOut[h.L4:]
				if packet.Checksum(g, 0) == 0xffff && seq != 0 {
					t.Log("Open vSwitch's GRE checksum covers the sequence number now")
				}
				binary.BigEndian.PutUint16(g[4:], 0)
				binary.BigEndian.PutUint16(g[4:], ^packet.Checksum(g, 0))
			}
			b := bufferWith(in)
			if err := Push(b, &h, hash, seq); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Data(), ovsOut) {
				t.Fatalf("frame\nOpen vSwitch % x\ngvs          % x", ovsOut, b.Data())
			}

			pop := c.pop
			pop.Kind = h.Kind
			ob := bufferWith(ovsOut)
			if d := Pop(ob, pop); d != DropNone {
				t.Fatalf("pop of Open vSwitch's frame: %v", d)
			}
			if !bytes.Equal(ob.Data(), in) {
				t.Errorf("popped inner frame differs")
			}
			if ob.Key.TunID != c.want.TunID && (h.Kind != GRE || c.want.GREKey) {
				t.Errorf("tun_id %#x", ob.Key.TunID)
			}
		})
	}
}

// TestConfigMatchesOpenVSwitch: Interface options Open vSwitch rejects
// give the Interface.error it writes, and options it accepts are
// accepted.
func TestConfigMatchesOpenVSwitch(t *testing.T) {
	r := startRefSwitch(t)
	cases := []struct {
		typ     string
		options []string
	}{
		{"geneve", nil},
		{"geneve", []string{"remote_ip=198.18.1.2", "key=flow"}},
		{"vxlan", []string{"remote_ip=224.0.0.1"}},
		{"vxlan", []string{"remote_ip=ff02::1"}},
		{"gre", []string{"remote_ip=2001:2::2", "local_ip=198.18.1.1"}},
		{"gre", []string{"remote_ip=198.18.1.2", "local_ip=flow"}},
		{"geneve", []string{"remote_ip=flow", "packet_type=legacy_l3"}},
		{"geneve", []string{"remote_ip=flow", "packet_type=bogus"}},
		{"vxlan", []string{"remote_ip=flow", "packet_type=ptap"}},
		{"gre", []string{"remote_ip=flow", "packet_type=legacy_l3"}},
		{"vxlan", []string{"remote_ip=198.18.1.2", "exts=gpe", "packet_type=legacy_l2"}},
		{"geneve", []string{"remote_ip=not-an-ip"}},
		{"geneve", []string{"remote_ip=198.18.1.2", "tos=0x3"}},
		{"ip6gre", []string{"remote_ip=2001:2::2", "csum=true", "seq=true"}},
		{"geneve", []string{"remote_ip=198.18.1.2", "in_key=5", "out_key=flow", "ttl=inherit", "tos=0x20", "dst_port=7000"}},
		{"geneve", []string{"remote_ip=198.18.1.2", "key=0x10", "local_ip=198.18.1.1", "df_default=false", "egress_pkt_mark=12"}},
		{"vxlan", []string{"remote_ip=198.18.1.5", "exts=gbp", "dst_port=4791", "ttl=5", "tos=inherit", "csum=true"}},
		{"vxlan", []string{"remote_ip=flow", "local_ip=flow", "key=7", "bogus=1"}},
		{"gre", []string{"remote_ip=198.18.1.2", "in_key=1", "out_key=2", "packet_type=legacy_l3", "seq=true"}},
		{"gre", []string{"remote_ip=198.18.1.9", "packet_type=ptap", "ttl=300", "dst_port=5"}},
	}
	want := map[string]string{} // dpif/show's text per port
	listeners := map[string]int{}
	for i, c := range cases {
		name := "x" + strconv.Itoa(i)
		args := []string{"add-port", "int-br", name, "--", "set", "Interface", name, "type=" + c.typ}
		opts := map[string]string{}
		for _, o := range c.options {
			args = append(args, "options:"+o)
			k, v, _ := strings.Cut(o, "=")
			opts[k] = v
		}
		r.vsctl(args...)
		ovsErr := strings.TrimSpace(r.vsctl("get", "Interface", name, "error"))
		if ovsErr == "[]" {
			ovsErr = ""
		} else if u, err := strconv.Unquote(ovsErr); err == nil {
			ovsErr = u
		}
		cfg, _, err := ParseConfig(name, c.typ, opts)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			want[name] = "(" + cfg.DpifShow(c.typ) + ")"
			listeners[DatapathPortName(c.typ, cfg.DstPort)]++
		}
		if got != ovsErr {
			t.Errorf("%s %v\nOpen vSwitch: %q\ngvs:          %q", c.typ, c.options, ovsErr, got)
		}
	}
	// "    x15 17/7000: (geneve: ...)": the configuration as read back.
	for _, line := range strings.Split(r.appctl("dpif/show"), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || want[f[0]] == "" {
			continue
		}
		if got := strings.Join(f[2:], " "); got != want[f[0]] {
			t.Errorf("dpif/show %s\nOpen vSwitch: %s\ngvs:          %s", f[0], got, want[f[0]])
		}
		delete(want, f[0])
	}
	if len(want) > 0 {
		t.Errorf("ports missing from Open vSwitch's dpif/show: %v", want)
	}
	// tnl/ports/show: names and sharing (the numbers are the datapath's).
	for _, line := range strings.Split(r.appctl("tnl/ports/show"), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || !strings.HasPrefix(f[2], "ref_cnt=") {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(f[2], "ref_cnt="))
		dp, _ := strconv.ParseUint(strings.Trim(f[1], "()"), 10, 32)
		if got := ListeningPortLine(f[0], uint32(dp), listeners[f[0]]); got != line {
			t.Errorf("tnl/ports/show\nOpen vSwitch: %s\ngvs:          %s", line, got)
		}
		if n == listeners[f[0]] {
			delete(listeners, f[0])
		}
	}
	if len(listeners) > 0 {
		t.Errorf("listening ports Open vSwitch lacks or counts otherwise: %v", listeners)
	}
}

// tunnelText returns the fields of a datapath flow's tunnel(...) key
// that Pop fills and the megaflow keeps (the flows here match on no TTL,
// port or option), in Open vSwitch's format_odp_tun_attr order.
func tunnelText(k *packet.Key) string {
	s := "tunnel("
	if k.TunFlags&FlagKey != 0 {
		s += "tun_id=0x" + strconv.FormatUint(k.TunID, 16) + ","
	}
	if k.TunSrc != [4]byte{} {
		s += "src=" + netip.AddrFrom4(k.TunSrc).String() + ",dst=" + netip.AddrFrom4(k.TunDst).String() + ","
	} else {
		s += "ipv6_src=" + netip.AddrFrom16(k.TunIPv6Src).String() + ",ipv6_dst=" + netip.AddrFrom16(k.TunIPv6Dst).String() + ","
	}
	if k.TunTOS != 0 {
		s += "tos=0x" + strconv.FormatUint(uint64(k.TunTOS), 16) + ","
	}
	if k.TunFlags&FlagUDPIF != 0 {
		// Options present or not, geneve's key says it has them
		// (unmatched: "{}" for each).
		s += "geneve("
		for opts := k.TunMetadata[:k.TunMetaLen]; len(opts) >= 4; opts = opts[4+int(opts[3]&0x1f)*4:] {
			s += "{}"
		}
		s += "),"
	}
	flag := func(f uint16, name string) string {
		if k.TunFlags&f != 0 {
			return "+" + name
		}
		return "-" + name
	}
	s += "flags(" + flag(FlagDontFragment, "df") + flag(FlagCsum, "csum") + flag(FlagKey, "key")
	if k.TunFlags&FlagOAM != 0 {
		s += "+oam"
	}
	return s + "))"
}

// TestPopMatchesOpenVSwitch: tunnel packets Push builds, received by
// Debian's ovs-vswitchd on its underlay port, are decapsulated by it to
// the frame Pop gives (read from the inner port's pcap), and its
// datapath flow after tnl_pop carries the tunnel metadata Pop fills.
func TestPopMatchesOpenVSwitch(t *testing.T) {
	r := startRefSwitch(t)
	ovsMAC := [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0}
	peerMAC := [6]byte{0xf8, 0xbc, 0x12, 0x44, 0x34, 0xb6}
	// The far side: packets from 198.18.1.2 (2001:2::2) to us.
	far := func(kind Kind, v6 bool, mod func(*BuildParams)) BuildParams {
		p := params(kind, v6)
		p.DstMAC, p.SrcMAC = ovsMAC, peerMAC
		p.Src, p.Dst = remote4, local4
		if v6 {
			p.Src, p.Dst = remote6, local6
		}
		p.TOS = 0
		if mod != nil {
			mod(&p)
		}
		return p
	}
	cases := []struct {
		name    string
		typ     string
		options []string
		p       BuildParams
	}{
		{"geneve", "geneve", []string{"remote_ip=198.18.1.2", "key=123"}, far(Geneve, false, nil)},
		{"geneve csum options tos", "geneve", []string{"remote_ip=198.18.1.2", "key=123", "dst_port=6082"},
			far(Geneve, false, func(p *BuildParams) {
				p.Csum, p.GeneveOptions, p.DstPort, p.TOS, p.TTL = true, genevePing, 6082, 0x20, 9
			})},
		{"geneve ipv6", "geneve", []string{"remote_ip=2001:2::2", "key=123"}, far(Geneve, true, nil)},
		{"vxlan", "vxlan", []string{"remote_ip=198.18.1.2", "key=flow"}, far(VXLAN, false, func(p *BuildParams) { p.TunID = 0x4567 })},
		{"gre key csum", "gre", []string{"remote_ip=198.18.1.2", "key=77"}, far(GRE, false, func(p *BuildParams) { p.TunID, p.Csum = 77, true })},
		{"ip6gre", "ip6gre", []string{"remote_ip=2001:2::2", "key=5"}, far(GRE, true, func(p *BuildParams) { p.TunID = 5 })},
	}
	r.run("ovs-ofctl", "add-tlv-map", "int-br", "{class=0xffff,type=0x80,len=4}->tun_metadata0")
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := r.t
			r.t = t
			defer func() { r.t = parent }()
			port := strconv.Itoa(30 + i)
			args := []string{"add-port", "int-br", "t" + port, "--", "set", "Interface", "t" + port, "type=" + c.typ, "ofport_request=" + port}
			for _, o := range c.options {
				args = append(args, "options:"+o)
			}
			r.vsctl(args...)
			// One tunnel port at a time: Open vSwitch 3.1 sends an
			// ip6gre packet to the gre datapath port (tnl_pop) when
			// both kinds exist, and then finds no receiving port.
			defer r.vsctl("del-port", "int-br", "t"+port)
			r.run("ovs-ofctl", "add-flow", "int-br", "in_port="+port+",actions=output:1")
			r.appctl("dpctl/del-flows")

			in := innerFrame()
			in[11] = byte(0x80 + i)
			h, err := Build(&c.p)
			if err != nil {
				t.Fatal(err)
			}
			b := bufferWith(in)
			if err := Push(b, &h, uint32(i)*0x1000000, 0); err != nil {
				t.Fatal(err)
			}
			frame := append([]byte(nil), b.Data()...)

			pb := bufferWith(frame)
			if d := Pop(pb, PopConfig{Kind: c.p.Kind}); d != DropNone {
				t.Fatalf("pop: %v", d)
			}

			before := len(pcapFrames(r.dir + "/vm.pcap"))
			r.appctl("netdev-dummy/receive", "p0", hex.EncodeToString(frame))
			var got [][]byte
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if got = pcapFrames(r.dir + "/vm.pcap"); len(got) > before {
					break
				}
			}
			if len(got) != before+1 {
				log, _ := os.ReadFile(filepath.Join(r.dir, "vswitchd.log"))
				t.Fatalf("Open vSwitch delivered %d frames\n%s\nlog:\n%s", len(got)-before, r.appctl("dpctl/dump-flows"), log)
			}
			if !bytes.Equal(got[before], pb.Data()) {
				t.Errorf("inner frame\nOpen vSwitch % x\ngvs          % x", got[before], pb.Data())
			}
			want := tunnelText(&pb.Key)
			var dump string
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if dump = r.appctl("dpctl/dump-flows"); strings.Contains(dump, "tunnel(") {
					break
				}
			}
			found := ""
			for _, line := range strings.Split(dump, "\n") {
				if i := strings.Index(line, "tunnel("); i >= 0 {
					j := strings.Index(line[i:], "))")
					found = line[i : i+j+2]
				}
			}
			if found != want {
				t.Errorf("tunnel key\nOpen vSwitch: %s\ngvs:          %s\n%s", found, want, dump)
			}
		})
	}
}
