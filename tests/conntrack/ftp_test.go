package conntrack

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	ftpZone = 11
	// The helper looks at TCP port 21 (the port the alg=ftp helper of
	// Open vSwitch recognises); the active data connection comes from 20.
	ftpCtlPort  = 21
	ftpDataPort = 20
)

// ftpFlows: a strict firewall. A may open the control connection to port
// 21 (committed with alg=ftp); data connections pass only as +rel (the
// helper's expectation): opened by A in passive mode, by B in active
// mode. Established traffic passes both ways; nothing else.
func ftpFlows() string {
	return fmt.Sprintf(`
table=0,priority=1,actions=drop
table=0,priority=200,arp,actions=NORMAL
table=0,priority=200,icmp6,icmp_type=135,actions=NORMAL
table=0,priority=200,icmp6,icmp_type=136,actions=NORMAL
table=0,priority=190,ipv6,ipv6_dst=ff00::/8,actions=drop
table=0,priority=100,ip,actions=ct(table=1,zone=%[1]d)
table=0,priority=100,ipv6,actions=ct(table=1,zone=%[1]d)
table=1,priority=100,in_port=1,tcp,tp_dst=%[2]d,ct_state=+trk+new-rel-inv,actions=ct(commit,zone=%[1]d,alg=ftp),output:2
table=1,priority=100,in_port=1,tcp6,tp_dst=%[2]d,ct_state=+trk+new-rel-inv,actions=ct(commit,zone=%[1]d,alg=ftp),output:2
table=1,priority=100,in_port=1,tcp,ct_state=+trk+new+rel-inv,actions=ct(commit,zone=%[1]d),output:2
table=1,priority=100,in_port=1,tcp6,ct_state=+trk+new+rel-inv,actions=ct(commit,zone=%[1]d),output:2
table=1,priority=100,in_port=2,tcp,ct_state=+trk+new+rel-inv,actions=ct(commit,zone=%[1]d),output:1
table=1,priority=100,in_port=2,tcp6,ct_state=+trk+new+rel-inv,actions=ct(commit,zone=%[1]d),output:1
table=1,priority=90,in_port=1,ct_state=+trk+est-inv,actions=output:2
table=1,priority=90,in_port=2,ct_state=+trk+est-inv,actions=output:1
table=1,priority=1,actions=drop
`, ftpZone, ftpCtlPort)
}

// TestFTP: an FTP download in active mode (PORT/EPRT: the server opens
// the data connection) and in passive mode (PASV/EPSV: the client opens
// it) through a firewall that admits data connections only as related to
// the control connection, i.e. only through the alg=ftp helper. The
// firewall's own check: a connection to the same ports without the
// control connection's announcement is refused. IPv4, then IPv6.
func TestFTP(t *testing.T) {
	scenario(t, "ftp", func(t *testing.T, e *env) {
		a := e.addHost(hostConfig{name: "a", mac: "02:00:00:00:03:01", ip4: "198.18.3.1/24", ip6: "2001:2:0:4::1/64"}, 1)
		b := e.addHost(hostConfig{name: "b", mac: "02:00:00:00:03:02", ip4: "198.18.3.2/24", ip6: "2001:2:0:4::2/64"}, 2)
		e.addFlows(ftpFlows())
		e.traces = append(e.traces,
			"in_port=1,tcp,dl_src=02:00:00:00:03:01,dl_dst=02:00:00:00:03:02,nw_src=198.18.3.1,nw_dst=198.18.3.2,tp_src=40000,tp_dst=21,tcp_flags=syn")
		payload := bytes.Repeat([]byte("gvs conntrack ftp test data\n"), 4000) // 112 KB
		for _, v6 := range []bool{false, true} {
			family := "v4"
			if v6 {
				family = "v6"
			}
			srv := newFTPServer(e, b, v6, payload)
			for _, passive := range []bool{true, false} {
				mode := "active"
				if passive {
					mode = "passive"
				}
				e.flushConntrack()
				got, err := ftpGet(a, b.ip(v6), passive)
				if err != nil {
					t.Errorf("%s %s FTP: %v", family, mode, err)
				} else if !bytes.Equal(got, payload) {
					t.Errorf("%s %s FTP: got %d bytes, want the %d sent", family, mode, len(got), len(payload))
				}
				time.Sleep(300 * time.Millisecond) // the last ACKs of the closes
				raw := e.checkpoint("ftp-" + family + "-" + mode)
				// The control connection (with its helper) and the data
				// connection.
				if n := strings.Count(raw, "tcp,"); n != 2 {
					t.Errorf("%s %s: dump-conntrack has %d TCP connections, want 2 (control and data):\n%s", family, mode, n, raw)
				}
				if !strings.Contains(raw, "helper=ftp") {
					t.Errorf("%s %s: no connection with helper=ftp:\n%s", family, mode, raw)
				}
			}
			// Without an announcement on the control connection the
			// firewall lets no data connection through.
			if c, err := a.dialTCP("", hostPort(b.ip(v6), srv.port()), 500*time.Millisecond); err == nil {
				c.Close()
				t.Errorf("%s: a data connection without PASV got through the firewall", family)
			}
			srv.close()
		}
	})
}

// ftpServer is a minimal FTP server: USER, PASS, TYPE, PASV/EPSV,
// PORT/EPRT, RETR (of one fixed file), QUIT.
type ftpServer struct {
	e       *env
	h       *host
	v6      bool
	payload []byte
	ctl     net.Listener
	pasv    net.Listener // the last passive listener
}

func newFTPServer(e *env, h *host, v6 bool, payload []byte) *ftpServer {
	s := &ftpServer{e: e, h: h, v6: v6, payload: payload}
	s.ctl = h.listenTCP(hostPort(h.ip(v6), ftpCtlPort))
	// A passive listener for the "no announcement" check.
	s.pasv = h.listenTCP(hostPort(h.ip(v6), 0))
	go func() {
		for {
			c, err := s.ctl.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *ftpServer) port() int { return s.pasv.Addr().(*net.TCPAddr).Port }

func (s *ftpServer) close() { s.ctl.Close(); s.pasv.Close() }

func (s *ftpServer) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	reply := func(format string, args ...any) { fmt.Fprintf(c, format+"\r\n", args...) }
	reply("220 gvs conntrack test FTP server")
	var active string // the client's PORT/EPRT address
	var pasv net.Listener
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch strings.ToUpper(cmd) {
		case "USER":
			reply("331 password please")
		case "PASS":
			reply("230 logged in")
		case "TYPE":
			reply("200 type set")
		case "PASV", "EPSV":
			var l net.Listener
			if err := inNetns(s.h.ns, func() (err error) { l, err = net.Listen("tcp", hostPort(s.h.ip(s.v6), 0)); return }); err != nil {
				reply("425 %v", err)
				continue
			}
			pasv = l
			p := l.Addr().(*net.TCPAddr).Port
			if strings.ToUpper(cmd) == "EPSV" {
				reply("229 Entering Extended Passive Mode (|||%d|)", p)
			} else {
				ip := netip.MustParseAddr(s.h.ip(false)).As4()
				reply("227 Entering Passive Mode (%d,%d,%d,%d,%d,%d)", ip[0], ip[1], ip[2], ip[3], p>>8, p&0xff)
			}
		case "PORT":
			f := strings.Split(arg, ",")
			if len(f) != 6 {
				reply("501 bad PORT")
				continue
			}
			hi, _ := strconv.Atoi(f[4])
			lo, _ := strconv.Atoi(f[5])
			active = hostPort(strings.Join(f[:4], "."), hi<<8|lo)
			reply("200 PORT ok")
		case "EPRT":
			f := strings.Split(arg, "|") // |2|addr|port|
			if len(f) != 5 {
				reply("501 bad EPRT")
				continue
			}
			p, _ := strconv.Atoi(f[3])
			active = hostPort(f[2], p)
			reply("200 EPRT ok")
		case "RETR":
			reply("150 opening data connection")
			var data net.Conn
			var err error
			if pasv != nil {
				pasv.(*net.TCPListener).SetDeadline(time.Now().Add(5 * time.Second))
				data, err = pasv.Accept()
				pasv.Close()
				pasv = nil
			} else {
				err = inNetns(s.h.ns, func() (err error) {
					d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(s.h.ip(s.v6)), Port: ftpDataPort},
						Control: reuseAddr}
					data, err = d.Dial("tcp", active)
					return
				})
			}
			if err != nil {
				reply("425 no data connection: %v", err)
				continue
			}
			data.Write(s.payload)
			data.Close()
			reply("226 transfer complete")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 not implemented")
		}
	}
}

// reuseAddr lets the active-mode data connection bind port 20 while an
// earlier one from it is in TIME_WAIT.
func reuseAddr(network, address string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1) })
	if err != nil {
		return err
	}
	return serr
}

// ftpGet logs in to the server at ip from host a and downloads the file in
// passive or active mode (EPSV/EPRT for IPv6, PASV/PORT for IPv4).
func ftpGet(a *host, ip string, passive bool) ([]byte, error) {
	v6 := netip.MustParseAddr(ip).Is6()
	c, err := a.dialTCP("", hostPort(ip, ftpCtlPort), 3*time.Second)
	if err != nil {
		return nil, fmt.Errorf("control connection: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	r := bufio.NewReader(c)
	expect := func(code string) (string, error) {
		line, err := r.ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("waiting for %s: %w", code, err)
		}
		if !strings.HasPrefix(line, code) {
			return "", fmt.Errorf("got %q, want %s", strings.TrimSpace(line), code)
		}
		return strings.TrimSpace(line), nil
	}
	send := func(cmd, code string) (string, error) {
		if _, err := fmt.Fprintf(c, "%s\r\n", cmd); err != nil {
			return "", err
		}
		return expect(code)
	}
	if _, err := expect("220"); err != nil {
		return nil, err
	}
	for _, s := range [][2]string{{"USER test", "331"}, {"PASS test", "230"}, {"TYPE I", "200"}} {
		if _, err := send(s[0], s[1]); err != nil {
			return nil, err
		}
	}
	var data net.Conn
	var listener net.Listener
	if passive {
		var addr string
		if v6 {
			line, err := send("EPSV", "229")
			if err != nil {
				return nil, err
			}
			f := strings.Split(line, "|") // ... (|||port|)
			if len(f) < 5 {
				return nil, fmt.Errorf("bad EPSV reply %q", line)
			}
			addr = hostPort(ip, atoiOr(f[3]))
		} else {
			line, err := send("PASV", "227")
			if err != nil {
				return nil, err
			}
			_, nums, _ := strings.Cut(line, "(")
			nums, _, _ = strings.Cut(nums, ")")
			f := strings.Split(nums, ",")
			if len(f) != 6 {
				return nil, fmt.Errorf("bad PASV reply %q", line)
			}
			addr = hostPort(strings.Join(f[:4], "."), atoiOr(f[4])<<8|atoiOr(f[5]))
		}
		if data, err = a.dialTCP("", addr, 3*time.Second); err != nil {
			return nil, fmt.Errorf("passive data connection to %s: %w", addr, err)
		}
		defer data.Close()
	} else {
		listener = a.listenTCP(hostPort(a.ip(v6), 0))
		p := listener.Addr().(*net.TCPAddr).Port
		cmd := ""
		if v6 {
			cmd = fmt.Sprintf("EPRT |2|%s|%d|", a.ip(v6), p)
		} else {
			cmd = fmt.Sprintf("PORT %s,%d,%d", strings.ReplaceAll(a.ip(v6), ".", ","), p>>8, p&0xff)
		}
		if _, err := send(cmd, "200"); err != nil {
			return nil, err
		}
	}
	if _, err := send("RETR file", "150"); err != nil {
		return nil, err
	}
	if !passive {
		listener.(*net.TCPListener).SetDeadline(time.Now().Add(5 * time.Second))
		if data, err = listener.Accept(); err != nil {
			return nil, fmt.Errorf("active data connection from the server: %w", err)
		}
		listener.Close()
		defer data.Close()
	}
	data.SetDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(data)
	if err != nil {
		return got, fmt.Errorf("data: %w", err)
	}
	if _, err := expect("226"); err != nil {
		return got, err
	}
	if _, err := send("QUIT", "221"); err != nil {
		return got, err
	}
	return got, nil
}

func atoiOr(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}
