package ovn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"time"

	"github.com/vishvananda/netns"
)

// host is a namespace joined to br-int by a veth pair: dev inside the
// host's namespace, port inside the switch's, bound to logical switch port
// lsp through Interface external_ids:iface-id.
type host struct {
	c    *chassis
	name string
	ns   string
	dev  string
	port string
	lsp  string
	mac  string
	ip4  string // without prefix length; "" when none (DHCP)
	ip6  string // without prefix length; "" when none
}

// hostConfig describes a host: its logical port, MAC, IPv4 address with
// prefix length ("" to leave it unconfigured) and default gateway.
type hostConfig struct {
	name string // short: namespace suffix and switch port name
	lsp  string // "": a host on another bridge, not bound to OVN
	// bridge is the bridge of the host's port ("" br-int).
	bridge string
	mac    string
	ip4    string // "198.18.0.1/24"
	ip6    string // "2001:2::1/64" (no duplicate address detection)
	gw     string // "" none
	gw6    string // "" none
}

// addHost creates the host's namespace and veth pair (tx checksum offload
// off on the host's end, as Open vSwitch asks for its userspace datapath)
// and adds its switch end to br-int bound to the logical port.
func (c *chassis) addHost(hc hostConfig) *host {
	c.t.Helper()
	h := &host{c: c, name: hc.name, ns: c.newNS(hc.name), dev: "eth0", port: hc.name, lsp: hc.lsp, mac: hc.mac}
	c.run(ipPath, "link", "add", "name", h.port, "netns", c.sw, "type", "veth", "peer", "name", h.dev, "netns", h.ns)
	c.run(ipPath, "-n", h.ns, "link", "set", "dev", h.dev, "address", hc.mac)
	c.run(ipPath, "netns", "exec", h.ns, ethtoolPath, "-K", h.dev, "tx", "off")
	c.run(ipPath, "netns", "exec", h.ns, "sysctl", "-qw", "net.ipv6.conf."+h.dev+".router_solicitations=0")
	if hc.ip4 != "" {
		c.run(ipPath, "-n", h.ns, "addr", "add", hc.ip4, "dev", h.dev)
		h.ip4 = netip.MustParsePrefix(hc.ip4).Addr().String()
	}
	if hc.ip6 != "" {
		c.run(ipPath, "-n", h.ns, "addr", "add", hc.ip6, "dev", h.dev, "nodad")
		h.ip6 = netip.MustParsePrefix(hc.ip6).Addr().String()
	}
	c.run(ipPath, "-n", h.ns, "link", "set", "dev", h.dev, "up")
	if hc.gw != "" {
		c.run(ipPath, "-n", h.ns, "route", "add", "default", "via", hc.gw)
	}
	if hc.gw6 != "" {
		c.run(ipPath, "-n", h.ns, "-6", "route", "add", "default", "via", hc.gw6)
	}
	c.run(ipPath, "-n", c.sw, "link", "set", "dev", h.port, "up")
	if hc.lsp == "" {
		bridge := hc.bridge
		if bridge == "" {
			bridge = integrationBridge
		}
		c.vsctl("add-port", bridge, h.port)
		return h
	}
	c.vsctl("add-port", integrationBridge, h.port, "--", "set", "interface", h.port, "external-ids:iface-id="+hc.lsp)
	c.hosts = append(c.hosts, h)
	return h
}

// waitUp waits until OVN claimed every host's port: Port_Binding up (the
// logical switch port shows up=true) and ovn-installed in the Interface's
// external_ids; then until the chassis caught up with the northbound
// database (--wait=hv). It records the outcome.
func (c *chassis) waitUp(step string) {
	c.t.Helper()
	for _, h := range c.hosts {
		c.nbctl("wait-until", "logical_switch_port", h.lsp, "up=true")
		c.vsctl("wait-until", "interface", h.port, `external-ids:ovn-installed="true"`)
	}
	c.nbctl("--wait=hv", "sync")
	var b strings.Builder
	for _, h := range c.hosts {
		up := strings.TrimSpace(c.nbctl("get", "logical_switch_port", h.lsp, "up"))
		inst := strings.TrimSpace(c.vsctl("get", "interface", h.port, "external-ids:ovn-installed"))
		fmt.Fprintf(&b, "%s up=%s ovn-installed=%s; ", h.lsp, up, inst)
	}
	c.outcome(step, b.String())
}

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

// serveEcho listens on addr inside the host and answers every connection
// with what it reads, prefixed by tag (so a client learns which server
// answered); tag "" prefixes the client's address as the server sees it
// and a colon.
func (h *host) serveEcho(addr, tag string) {
	h.c.t.Helper()
	var l net.Listener
	if err := inNetns(h.ns, func() (err error) { l, err = net.Listen("tcp", addr); return }); err != nil {
		h.c.t.Fatalf("%s: listen %s: %v", h.name, addr, err)
	}
	h.c.t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			tag := tag
			if tag == "" {
				ap, _ := netip.ParseAddrPort(conn.RemoteAddr().String())
				tag = ap.Addr().String() + ":"
			}
			go func() {
				defer conn.Close()
				buf := make([]byte, 4096)
				for {
					n, err := conn.Read(buf)
					if err != nil {
						return
					}
					if _, err := conn.Write(append([]byte(tag), buf[:n]...)); err != nil {
						return
					}
				}
			}()
		}
	}()
}

// dialTCP connects from the host to addr within timeout.
func (h *host) dialTCP(addr string, timeout time.Duration) (net.Conn, error) {
	var conn net.Conn
	err := inNetns(h.ns, func() (err error) {
		d := net.Dialer{Timeout: timeout}
		conn, err = d.Dial("tcp", addr)
		return err
	})
	return conn, err
}

// exchange writes msg to conn and reads the echo: it returns the tag the
// server put before it.
func exchange(conn net.Conn, msg string, timeout time.Duration) (string, error) {
	conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, 4096)
	got := ""
	for !strings.HasSuffix(got, msg) {
		n, err := conn.Read(buf)
		if err != nil {
			return got, err
		}
		got += string(buf[:n])
	}
	return strings.TrimSuffix(got, msg), nil
}

// tcpOutcome classifies a connection attempt from h to addr: "connected"
// (and an echo came back), "refused" (RST), "timeout", or the error.
func (h *host) tcpOutcome(addr string, timeout time.Duration) string {
	conn, err := h.dialTCP(addr, timeout)
	if err != nil {
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			return "timeout"
		case strings.Contains(err.Error(), "connection refused"):
			return "refused"
		}
		return "error: " + err.Error()
	}
	defer conn.Close()
	if _, err := exchange(conn, "gvs-ovn", timeout); err != nil {
		return "connected, no echo: " + err.Error()
	}
	return "connected"
}

// pingID is the ICMP echo identifier of every ping the tests send.
const pingID = 0x4744

// ping sends ICMP (v6: ICMPv6) echo requests from the host to dst and
// reports whether one of count got a reply within timeout each.
func (h *host) ping(dst string, count int, timeout time.Duration) (bool, error) {
	v6 := netip.MustParseAddr(dst).Is6()
	ok := false
	err := inNetns(h.ns, func() error {
		network, reqType, replyType := "ip4:icmp", byte(8), byte(0)
		if v6 {
			network, reqType, replyType = "ip6:ipv6-icmp", 128, 129
		}
		conn, err := net.ListenPacket(network, "")
		if err != nil {
			return err
		}
		defer conn.Close()
		addr := &net.IPAddr{IP: net.ParseIP(dst)}
		buf := make([]byte, 1500)
		for seq := range count {
			if _, err := conn.WriteTo(echoRequest(reqType, pingID, uint16(seq+1), v6), addr); err != nil {
				return err
			}
			deadline := time.Now().Add(timeout)
			conn.SetReadDeadline(deadline)
			for time.Now().Before(deadline) {
				n, from, err := conn.ReadFrom(buf)
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
func echoRequest(typ byte, id, seq uint16, v6 bool) []byte {
	b := make([]byte, 8+56)
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
	for i := 0; i < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	binary.BigEndian.PutUint16(b[2:], ^uint16(sum))
	return b
}

// pingOutcome is "reply" or "no reply" (and records the outcome); the
// first pings may need ARP through the pipeline, so it tries for a while.
func (h *host) pingOutcome(step, dst string) string {
	h.c.t.Helper()
	ok, err := h.ping(dst, 5, time.Second)
	if err != nil {
		h.c.t.Fatalf("ping %s -> %s: %v", h.name, dst, err)
	}
	got := "no reply"
	if ok {
		got = "reply"
	}
	h.c.outcome(step, got)
	return got
}

// mustPing fails the test unless the host reaches dst.
func (h *host) mustPing(step, dst string) {
	h.c.t.Helper()
	if got := h.pingOutcome(step, dst); got != "reply" {
		h.c.t.Errorf("%s: ping %s -> %s: %s", step, h.name, dst, got)
	}
}

// mustTCP fails the test unless a TCP connection from the host to addr
// carries data both ways.
func (h *host) mustTCP(step, addr string) {
	h.c.t.Helper()
	got := h.tcpOutcome(addr, 3*time.Second)
	h.c.outcome(step, got)
	if got != "connected" {
		h.c.t.Errorf("%s: TCP %s -> %s: %s", step, h.name, addr, got)
	}
}
