package conntrack

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"syscall"
	"time"

	"github.com/vishvananda/netns"
)

// host is a namespace joined to the switch by a veth pair: dev inside the
// host's namespace, port (OpenFlow port ofport) inside the switch's.
type host struct {
	e      *env
	name   string
	ns     string
	dev    string
	port   string
	ofport int
	mac    string
	ip4    string // without prefix length; "" when none
	ip6    string
}

// hostConfig describes a host: addresses with their prefix length.
type hostConfig struct {
	name     string // short: namespace suffix and switch port name
	mac      string
	ip4, ip6 string // "198.18.0.1/24", "2001:2:0:1::1/64"
	mtu      int    // 0: the default 1500
}

// addHost creates the host's namespace and veth pair (tx checksum offload
// off on the host's end, as Open vSwitch's documentation asks for its
// userspace datapath), and adds its port to the bridge with OpenFlow port
// number ofport.
func (e *env) addHost(c hostConfig, ofport int) *host {
	e.t.Helper()
	h := &host{e: e, name: c.name, ns: e.newNS(c.name), dev: "eth0", port: c.name, ofport: ofport, mac: c.mac}
	e.run(ipPath, "link", "add", "name", h.port, "netns", e.sw, "type", "veth", "peer", "name", h.dev, "netns", h.ns)
	if c.mtu != 0 {
		e.run(ipPath, "-n", e.sw, "link", "set", "dev", h.port, "mtu", itoa(c.mtu))
		e.run(ipPath, "-n", h.ns, "link", "set", "dev", h.dev, "mtu", itoa(c.mtu))
	}
	e.run(ipPath, "-n", h.ns, "link", "set", "dev", h.dev, "address", c.mac)
	e.run(ipPath, "netns", "exec", h.ns, ethtoolPath, "-K", h.dev, "tx", "off")
	e.run(ipPath, "netns", "exec", h.ns, "sysctl", "-qew", "net.ipv6.conf."+h.dev+".router_solicitations=0",
		"net.ipv4.ipfrag_time=5", "net.ipv6.ip6frag_time=5")
	if c.ip4 != "" {
		e.run(ipPath, "-n", h.ns, "addr", "add", c.ip4, "dev", h.dev)
		h.ip4 = netip.MustParsePrefix(c.ip4).Addr().String()
	}
	if c.ip6 != "" {
		e.run(ipPath, "-n", h.ns, "addr", "add", c.ip6, "dev", h.dev, "nodad")
		h.ip6 = netip.MustParsePrefix(c.ip6).Addr().String()
	}
	e.run(ipPath, "-n", h.ns, "link", "set", "dev", h.dev, "up")
	e.run(ipPath, "-n", e.sw, "link", "set", "dev", h.port, "up")
	e.vsctl("add-port", bridgeName, h.port, "--", "set", "interface", h.port, "ofport_request="+itoa(ofport))
	e.hosts = append(e.hosts, h)
	return h
}

// ip returns the host's address of the family (v6 or not).
func (h *host) ip(v6 bool) string {
	if v6 {
		return h.ip6
	}
	return h.ip4
}

// neigh adds a permanent neighbour entry in the host (for addresses no
// host answers ARP or ND for: a NAT address, a virtual IP).
func (h *host) neigh(ip, mac string) {
	h.e.t.Helper()
	h.e.run(ipPath, "-n", h.ns, "neigh", "replace", ip, "lladdr", mac, "dev", h.dev, "nud", "permanent")
}

// hostPort joins an address and a port.
func hostPort(ip string, port int) string { return net.JoinHostPort(ip, itoa(port)) }

// inNetns runs fn on a thread in namespace ns. Sockets created there stay
// in ns and can be used from any goroutine afterwards. (A copy of
// tests/bridge's unexported helper.)
func inNetns(ns string, fn func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	target, err := netns.GetFromName(ns)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		// Leave the thread locked: the runtime discards it when the
		// goroutine ends rather than reuse it in the wrong namespace.
		return errors.Join(ferr, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// listenTCP listens on addr inside the host.
func (h *host) listenTCP(addr string) net.Listener {
	h.e.t.Helper()
	var l net.Listener
	if err := inNetns(h.ns, func() (err error) { l, err = net.Listen("tcp", addr); return }); err != nil {
		h.e.t.Fatalf("%s: listen %s: %v", h.name, addr, err)
	}
	h.e.t.Cleanup(func() { l.Close() })
	return l
}

// dialTCP connects from the host to addr, from local ("" any) within
// timeout.
func (h *host) dialTCP(local, addr string, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	err := inNetns(h.ns, func() error {
		d := net.Dialer{Timeout: timeout}
		if local != "" {
			la, err := net.ResolveTCPAddr("tcp", local)
			if err != nil {
				return err
			}
			d.LocalAddr = la
		}
		var err error
		c, err = d.Dial("tcp", addr)
		return err
	})
	return c, err
}

// listenUDP opens a UDP socket bound to addr inside the host.
func (h *host) listenUDP(addr string) *net.UDPConn {
	h.e.t.Helper()
	var c net.PacketConn
	if err := inNetns(h.ns, func() (err error) { c, err = net.ListenPacket("udp", addr); return }); err != nil {
		h.e.t.Fatalf("%s: listen udp %s: %v", h.name, addr, err)
	}
	h.e.t.Cleanup(func() { c.Close() })
	return c.(*net.UDPConn)
}

// dialUDP opens a connected UDP socket from the host to addr (connected,
// so an ICMP port unreachable shows as ECONNREFUSED).
func (h *host) dialUDP(addr string) *net.UDPConn {
	h.e.t.Helper()
	var c net.Conn
	if err := inNetns(h.ns, func() (err error) { c, err = net.Dial("udp", addr); return }); err != nil {
		h.e.t.Fatalf("%s: dial udp %s: %v", h.name, addr, err)
	}
	h.e.t.Cleanup(func() { c.Close() })
	return c.(*net.UDPConn)
}

// serveEcho answers every connection l accepts with what it reads,
// prefixed by tag (so a client learns which server answered).
func serveEcho(l net.Listener, tag string) {
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					if _, err := c.Write(append([]byte(tag), buf[:n]...)); err != nil {
						return
					}
				}
			}()
		}
	}()
}

// exchange writes msg to c and reads the echo; it returns what came back.
func exchange(c net.Conn, msg string, timeout time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, 4096)
	got := ""
	for len(got) < len(msg) || !endsWith(got, msg) {
		n, err := c.Read(buf)
		if err != nil {
			return got, err
		}
		got += string(buf[:n])
	}
	return got, nil
}

func endsWith(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

// pingID is the ICMP echo identifier of every ping the tests send, so the
// conntrack entries of two runs compare equal.
const pingID = 0x4743

// ping sends ICMP (v6: ICMPv6) echo requests from the host to dst and
// reports whether one of count got a reply within timeout each.
func (h *host) ping(dst string, count int, timeout time.Duration) (bool, error) {
	return h.pingSize(dst, 56, count, timeout)
}

// pingSize is ping with size bytes of payload (above the MTU: the kernel
// sends each request as fragments).
func (h *host) pingSize(dst string, size, count int, timeout time.Duration) (bool, error) {
	v6 := netip.MustParseAddr(dst).Is6()
	ok := false
	err := inNetns(h.ns, func() error {
		network, reqType, replyType := "ip4:icmp", byte(8), byte(0)
		if v6 {
			network, reqType, replyType = "ip6:ipv6-icmp", 128, 129
		}
		c, err := net.ListenPacket(network, "")
		if err != nil {
			return err
		}
		defer c.Close()
		addr := &net.IPAddr{IP: net.ParseIP(dst)}
		buf := make([]byte, 65536)
		for seq := range count {
			if _, err := c.WriteTo(echoRequest(reqType, pingID, uint16(seq+1), size, v6), addr); err != nil {
				return err
			}
			deadline := time.Now().Add(timeout)
			c.SetReadDeadline(deadline)
			for time.Now().Before(deadline) {
				n, from, err := c.ReadFrom(buf)
				if err != nil {
					break
				}
				if n >= 8 && buf[0] == replyType && netip.MustParseAddr(from.String()) == netip.MustParseAddr(dst) &&
					binary.BigEndian.Uint16(buf[4:]) == pingID && binary.BigEndian.Uint16(buf[6:]) == uint16(seq+1) {
					ok = true
					return nil
				}
			}
		}
		return nil
	})
	return ok, err
}

// echoRequest builds an echo request; for ICMPv6 the kernel fills the
// checksum.
func echoRequest(typ byte, id, seq uint16, size int, v6 bool) []byte {
	b := make([]byte, 8+size)
	b[0] = typ
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	for i := 8; i < len(b); i++ {
		b[i] = byte(i)
	}
	if v6 {
		return b
	}
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	binary.BigEndian.PutUint16(b[2:], ^uint16(sum))
	return b
}

// mustPing fails the test unless the host reaches dst.
func (h *host) mustPing(dst string) {
	h.e.t.Helper()
	ok, err := h.ping(dst, 3, time.Second)
	if err != nil {
		h.e.t.Fatalf("ping %s -> %s: %v", h.name, dst, err)
	}
	if !ok {
		h.e.t.Errorf("ping %s -> %s: no reply", h.name, dst)
	}
}

// mustNotPing fails the test if the host reaches dst.
func (h *host) mustNotPing(dst string) {
	h.e.t.Helper()
	ok, err := h.ping(dst, 2, 400*time.Millisecond)
	if err != nil {
		h.e.t.Fatalf("ping %s -> %s: %v", h.name, dst, err)
	}
	if ok {
		h.e.t.Errorf("ping %s -> %s: got a reply, the firewall should drop it", h.name, dst)
	}
}

// isRefused reports whether err is ECONNREFUSED.
func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
