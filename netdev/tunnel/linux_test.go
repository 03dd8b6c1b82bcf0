package tunnel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// ifindexIn returns the index of dev in namespace ns.
func ifindexIn(t *testing.T, e *nettest.Env, ns, dev string) int {
	t.Helper()
	out := e.NSRun(ns, "ip", "-o", "link", "show", "dev", dev)
	n, err := strconv.Atoi(strings.TrimSpace(out[:strings.IndexByte(out, ':')]))
	if err != nil {
		t.Fatalf("ifindex of %s: %q", dev, out)
	}
	return n
}

// packetSocket opens an AF_PACKET socket in ns bound to ifindex.
func packetSocket(t *testing.T, ns string, ifindex int) int {
	t.Helper()
	fd, err := nettest.SocketIn(ns, unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}); err != nil {
		t.Fatal(err)
	}
	tv := unix.NsecToTimeval(int64(200 * time.Millisecond))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	return fd
}

// TestPopLinuxDevices: frames that Linux's own geneve, vxlan (with GBP),
// gretap and ip6gretap devices send, captured on the underlay veth,
// decapsulate to the frame given to the tunnel device, with the tunnel
// metadata the device was configured with; Push makes the same bytes
// (but for the IP id, source port and flow label, the sender's choices),
// and what Push makes for the way back the device takes and delivers.
func TestPopLinuxDevices(t *testing.T) {
	e := nettest.NewPrefixed(t, "gvstn", "gt")
	ns := e.NS("a")
	// No IPv6 on the tunnel devices: their router solicitations would
	// be encapsulated too.
	e.NSRun(ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
	e.Veth("ua", ns, "ub", ns)
	e.NSRun(ns, "sysctl", "-qw", "net.ipv6.conf.ua.disable_ipv6=0")
	sub := e.Subnet(0)
	l4, r4 := sub+".1", sub+".2"
	l6, r6 := "2001:2::1", "2001:2::2"
	e.Addr(ns, "ua", l4+"/24")
	e.NSRun(ns, "ip", "addr", "add", l6+"/64", "dev", "ua", "nodad")
	peer := "02:00:00:00:00:b2"
	e.NSRun(ns, "ip", "neigh", "replace", r4, "lladdr", peer, "dev", "ua", "nud", "permanent")
	e.NSRun(ns, "ip", "-6", "neigh", "replace", r6, "lladdr", peer, "dev", "ua", "nud", "permanent")

	type tc struct {
		dev     string
		add     []string
		pop     PopConfig
		v6      bool
		mark    int
		want    func(k *packet.Key)
		tpDst   uint16
		hasPort bool
	}
	cases := []tc{
		{dev: "gnv4", add: []string{"type", "geneve", "id", "123", "remote", r4, "ttl", "33", "tos", "0x20", "udpcsum"},
			pop: PopConfig{Kind: Geneve}, tpDst: GenevePort, hasPort: true,
			want: func(k *packet.Key) {
				k.TunID, k.TunTTL, k.TunTOS, k.TunFlags = 123, 33, 0x20, FlagKey|FlagUDPIF|FlagCsum
			}},
		{dev: "gnv6", add: []string{"type", "geneve", "id", "124", "remote", r6, "ttl", "34"}, v6: true,
			pop: PopConfig{Kind: Geneve}, tpDst: GenevePort, hasPort: true,
			want: func(k *packet.Key) { k.TunID, k.TunTTL, k.TunFlags = 124, 34, FlagKey|FlagUDPIF|FlagCsum }},
		{dev: "vx4", add: []string{"type", "vxlan", "id", "5", "remote", r4, "local", l4, "dstport", "4789", "ttl", "44", "noudpcsum", "gbp"},
			pop: PopConfig{Kind: VXLAN, GBP: true}, mark: 0x00401234, tpDst: VXLANPort, hasPort: true,
			want: func(k *packet.Key) {
				k.TunID, k.TunTTL, k.TunFlags, k.TunGBPID, k.TunGBPFlags = 5, 44, FlagKey, 0x1234, 0x40
			}},
		{dev: "vx6", add: []string{"type", "vxlan", "id", "6", "remote", r6, "local", l6, "dstport", "4790", "ttl", "45"}, v6: true,
			pop: PopConfig{Kind: VXLAN}, tpDst: 4790, hasPort: true,
			want: func(k *packet.Key) { k.TunID, k.TunTTL, k.TunFlags = 6, 45, FlagKey|FlagCsum }},
		{dev: "gre4", add: []string{"type", "gretap", "remote", r4, "local", l4, "key", "77", "csum", "seq", "ttl", "55", "tos", "0x08"},
			pop:  PopConfig{Kind: GRE},
			want: func(k *packet.Key) { k.TunID, k.TunTTL, k.TunTOS, k.TunFlags = 77, 55, 0x08, FlagKey|FlagCsum }},
		{dev: "gre6", add: []string{"type", "ip6gretap", "remote", r6, "local", l6, "key", "9", "hoplimit", "56", "encaplimit", "none"}, v6: true,
			pop:  PopConfig{Kind: GRE},
			want: func(k *packet.Key) { k.TunID, k.TunTTL, k.TunFlags = 9, 56, FlagKey }},
	}
	capture := packetSocket(t, ns, ifindexIn(t, e, ns, "ub"))
	// Frames from a local sender can carry a partial checksum; the
	// virtio_net_hdr says so, as the datapath's AF_PACKET ports get it.
	if err := unix.SetsockoptInt(capture, unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	for i, c := range cases {
		t.Run(c.dev, func(t *testing.T) {
			// Some kernels are built without some of these.
			if err := nettest.Try(append([]string{"ip", "-n", ns, "link", "add", c.dev}, c.add...)...); err != nil {
				t.Skipf("the kernel makes no %s device: %v", c.add[1], err)
			}
			e.NSRun(ns, "ip", "link", "set", c.dev, "up")
			send := packetSocket(t, ns, ifindexIn(t, e, ns, c.dev))
			if c.mark != 0 {
				if err := unix.SetsockoptInt(send, unix.SOL_SOCKET, unix.SO_MARK, c.mark); err != nil {
					t.Fatal(err)
				}
			}
			in := innerFrame()
			in[11] = byte(0x60 + i)
			if err := unix.Send(send, in, 0); err != nil {
				t.Fatal(err)
			}
			var outer []byte
			for deadline := time.Now().Add(3 * time.Second); outer == nil && time.Now().Before(deadline); {
				n, _, err := unix.Recvfrom(capture, buf, 0)
				if err != nil {
					if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
						continue
					}
					t.Fatal(err)
				}
				if f := buf[:n]; bytes.HasSuffix(f, in) && len(f) > len(in)+packet.VnetHdrLen {
					outer = append([]byte(nil), f...)
				}
			}
			if outer == nil {
				t.Fatal("no encapsulated frame captured")
			}
			b := bufferWith(outer)
			if !b.PullVnetHdr() {
				t.Fatal("no virtio_net_hdr")
			}
			vnet := b.Vnet
			outer = outer[packet.VnetHdrLen:]
			if d := Pop(b, c.pop); d != DropNone {
				t.Fatalf("pop: %v\n% x", d, outer)
			}
			if !bytes.Equal(b.Data(), in) {
				t.Fatalf("inner frame\n got % x\nwant % x", b.Data(), in)
			}
			var want packet.Key
			if c.v6 {
				want.TunIPv6Src = netip.MustParseAddr(l6).As16()
				want.TunIPv6Dst = netip.MustParseAddr(r6).As16()
			} else {
				want.TunSrc = netip.MustParseAddr(l4).As4()
				want.TunDst = netip.MustParseAddr(r4).As4()
			}
			c.want(&want)
			if c.hasPort {
				want.TunTpDst = c.tpDst
				want.TunTpSrc = b.Key.TunTpSrc // the kernel's choice
				if want.TunTpSrc == 0 {
					t.Error("no udp source port")
				}
			}
			if b.Key != want {
				t.Errorf("key\n got %+v\nwant %+v", b.Key, want)
			}
			// Push makes the same outer header back, but for what
			// either side chooses per packet (IP id, source port).
			p := BuildParams{Kind: c.pop.Kind, Src: netip.MustParseAddr(l4), Dst: netip.MustParseAddr(r4),
				TTL: want.TunTTL, TOS: want.TunTOS, TunID: want.TunID, DstPort: c.tpDst, GBP: c.pop.GBP,
				GBPID: want.TunGBPID, GBPFlags: want.TunGBPFlags, GREKey: true, Csum: want.TunFlags&FlagCsum != 0,
				GRESeq: c.dev == "gre4"}
			copy(p.DstMAC[:], outer[0:6])
			copy(p.SrcMAC[:], outer[6:12])
			if c.v6 {
				p.Src, p.Dst = netip.MustParseAddr(l6), netip.MustParseAddr(r6)
			} else {
				p.DontFragment = binary.BigEndian.Uint16(outer[20:])&ipDF != 0
			}
			h, err := Build(&p)
			if err != nil {
				t.Fatal(err)
			}
			var seq uint32
			if p.GRESeq {
				seq = binary.BigEndian.Uint32(outer[h.Len-4:])
			}
			var hash uint32
			if c.hasPort {
				hash = hashForPort(want.TunTpSrc)
			}
			if want.TunTpSrc < DefaultSrcPortMin || want.TunTpSrc >= DefaultSrcPortMax {
				hash = 0 // Linux's range is wider: compare without the port
			}
			pb := bufferWith(in)
			if err := Push(pb, &h, hash, seq); err != nil {
				t.Fatal(err)
			}
			mine := pb.Data()
			theirs := append([]byte(nil), outer...)
			if vnet.Flags&packet.VnetNeedsCsum != 0 {
				if !packet.CompletePartialChecksum(theirs, int(vnet.CsumStart), int(vnet.CsumOffset)) {
					t.Fatalf("partial checksum outside the frame: %+v", vnet)
				}
				t.Logf("Linux left the checksum at %d+%d partial", vnet.CsumStart, vnet.CsumOffset)
			}
			if !c.v6 {
				// The IP id (and so the header checksum) is the sender's.
				copy(mine[18:20], theirs[18:20])
				binary.BigEndian.PutUint16(mine[24:], 0)
				binary.BigEndian.PutUint16(mine[24:], packet.IPv4HeaderChecksum(mine[14:34]))
			}
			if c.hasPort && hash == 0 {
				copy(mine[h.L4:h.L4+2], theirs[h.L4:h.L4+2])
				if p.Csum {
					binary.BigEndian.PutUint16(mine[h.L4+6:], 0)
					binary.BigEndian.PutUint16(mine[h.L4+6:], 0)
					c := ^packet.Checksum(mine[h.L4:], pseudoSum(mine, c.v6, protoUDP, len(mine)-int(h.L4)))
					if c == 0 {
						c = 0xffff
					}
					binary.BigEndian.PutUint16(mine[h.L4+6:], c)
				}
			}
			if c.v6 {
				// Linux puts a flow label in; Open vSwitch's header has none.
				mine[15] = mine[15]&0xf0 | theirs[15]&0x0f
				copy(mine[16:18], theirs[16:18])
			}
			if !bytes.Equal(mine, theirs) {
				t.Errorf("push\n gvs   % x\n linux % x", mine, theirs)
			}

			// And the other way: what Push makes for the reverse
			// direction, sent into ub, comes out of the Linux device.
			rp := p
			rp.Src, rp.Dst = p.Dst, p.Src
			rp.DstMAC, rp.SrcMAC = p.SrcMAC, p.DstMAC
			rh, err := Build(&rp)
			if err != nil {
				t.Fatal(err)
			}
			back := innerFrame()
			back[11] = byte(0x70 + i)
			rb := bufferWith(back)
			if err := Push(rb, &rh, 12345, 1); err != nil {
				t.Fatal(err)
			}
			if err := unix.Send(capture, append(make([]byte, packet.VnetHdrLen), rb.Data()...), 0); err != nil {
				t.Fatal(err)
			}
			var delivered bool
			for deadline := time.Now().Add(3 * time.Second); !delivered && time.Now().Before(deadline); {
				n, _, err := unix.Recvfrom(send, buf, 0)
				if err != nil {
					if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
						continue
					}
					t.Fatal(err)
				}
				delivered = bytes.Equal(buf[:n], back)
			}
			if !delivered {
				t.Errorf("Linux's %s device did not deliver the frame Push encapsulated:\n% x", c.dev, rb.Data())
			}
		})
	}
}
