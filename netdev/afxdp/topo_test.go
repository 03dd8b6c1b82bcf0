package afxdp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gvs/netdev/internal/nettest"
)

// env builds a throw-away topology for one test: namespaces and veth
// pairs named after the process id, addresses in 198.18.0.0/15, all
// removed in t.Cleanup, also when the test fails.
type env struct {
	t      testing.TB
	prefix string // namespaces: "gvsxdp<pid>-<n>-"
	short  string // interfaces (15 bytes at most): "gx<pid36><n36>"
	seq    int    // the env's number, for distinct subnets
}

var envSeq atomic.Int32

// newEnv skips the test unless it runs as root on a kernel with AF_XDP.
func newEnv(t testing.TB) *env {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces, XDP and AF_XDP")
	}
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Skipf("AF_XDP unsupported: %v", err)
	}
	unix.Close(fd)
	n := int(envSeq.Add(1))
	pid := os.Getpid()
	return &env{
		t:      t,
		prefix: fmt.Sprintf("gvsxdp%d-%d-", pid, n),
		short:  "gx" + strconv.FormatInt(int64(pid), 36) + strconv.FormatInt(int64(n), 36),
		seq:    n,
	}
}

// subnet returns a /24 prefix in 198.18.0.0/15 for this env's k-th link.
func (e *env) subnet(k int) string {
	return fmt.Sprintf("198.%d.%d", 18+(e.seq/128)%2, (e.seq*2+k)%256)
}

func (e *env) run(args ...string) string {
	e.t.Helper()
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil {
		var ee *exec.ExitError
		msg := ""
		if errors.As(err, &ee) {
			msg = string(ee.Stderr)
		}
		e.t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, msg)
	}
	return string(out)
}

func try(args ...string) { _ = exec.Command(args[0], args[1:]...).Run() }

func (e *env) inNS(ns string, args ...string) string {
	e.t.Helper()
	if ns == "" {
		return e.run(args...)
	}
	return e.run(append([]string{"ip", "netns", "exec", ns}, args...)...)
}

// ns creates a namespace with loopback up.
func (e *env) ns(name string) string {
	e.t.Helper()
	ns := e.prefix + name
	e.run("ip", "netns", "add", ns)
	e.t.Cleanup(func() { try("ip", "netns", "del", ns) })
	e.inNS(ns, "ip", "link", "set", "lo", "up")
	return ns
}

// ifname returns a root-namespace interface name unique to the env.
func (e *env) ifname(suffix string) string {
	name := e.short + suffix
	if len(name) > 15 {
		e.t.Fatalf("interface name %q too long", name)
	}
	return name
}

// veth creates a pair: a in aNS, b in bNS ("" for the root namespace),
// both up, IPv6 off (no stray router solicitations). Ends are deleted
// explicitly in cleanup: namespace deletion is asynchronous.
func (e *env) veth(a, aNS, b, bNS string) {
	e.t.Helper()
	args := []string{"ip", "link", "add", a}
	if aNS != "" {
		args = append(args, "netns", aNS)
	}
	args = append(args, "type", "veth", "peer", "name", b)
	if bNS != "" {
		args = append(args, "netns", bNS)
	}
	e.run(args...)
	e.t.Cleanup(func() {
		for _, x := range [][2]string{{a, aNS}, {b, bNS}} {
			if x[1] == "" {
				try("ip", "link", "del", x[0])
				waitGone(x[0])
			} else {
				try("ip", "-n", x[1], "link", "del", x[0])
			}
		}
	})
	for _, x := range [][2]string{{a, aNS}, {b, bNS}} {
		e.inNS(x[1], "sysctl", "-qw", "net.ipv6.conf."+x[0]+".disable_ipv6=1")
		e.inNS(x[1], "ip", "link", "set", x[0], "up")
	}
}

func waitGone(name string) {
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/sys/class/net/" + name); os.IsNotExist(err) {
			return
		}
	}
}

// fwdTopo is two hosts (namespaces) joined through two root-namespace
// veth ends that a forwarder bridges: A:v0 -- xa | forwarder | xb -- B:v0.
type fwdTopo struct {
	e            *env
	nsA, nsB     string
	xa, xb       string // root-namespace ends the forwarder opens
	addrA, addrB string
}

func newFwdTopo(t testing.TB) *fwdTopo {
	t.Helper()
	e := newEnv(t)
	tp := &fwdTopo{e: e, nsA: e.ns("a"), nsB: e.ns("b"), xa: e.ifname("xa"), xb: e.ifname("xb")}
	net := e.subnet(0)
	tp.addrA, tp.addrB = net+".1", net+".2"
	e.veth("v0", tp.nsA, tp.xa, "")
	e.veth("v0", tp.nsB, tp.xb, "")
	e.inNS(tp.nsA, "ip", "addr", "add", tp.addrA+"/24", "dev", "v0")
	e.inNS(tp.nsB, "ip", "addr", "add", tp.addrB+"/24", "dev", "v0")
	return tp
}

// pair is a direct veth pair between two namespaces: the reference path.
type pair struct {
	nsA, nsB     string
	addrA, addrB string
}

func (e *env) newPair() pair {
	e.t.Helper()
	p := pair{nsA: e.ns("c"), nsB: e.ns("d")}
	net := e.subnet(1)
	p.addrA, p.addrB = net+".1", net+".2"
	e.veth("v0", p.nsA, "v0", p.nsB)
	e.inNS(p.nsA, "ip", "addr", "add", p.addrA+"/24", "dev", "v0")
	e.inNS(p.nsB, "ip", "addr", "add", p.addrB+"/24", "dev", "v0")
	return p
}

// ping sends count echo requests of size bytes from ns to addr, with DF
// set, and returns the round trip times; it fails on the first lost one.
func (e *env) ping(ns, addr string, count, size int) ([]time.Duration, error) {
	p, err := nettest.NewPinger(ns, true)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	dst := netip.MustParseAddr(addr)
	var rtts []time.Duration
	for i := range count {
		rtt, err := p.Ping(dst, size, 2*time.Second)
		if err != nil {
			return rtts, fmt.Errorf("ping %s #%d (%d bytes): %w", addr, i, size, err)
		}
		rtts = append(rtts, rtt)
	}
	return rtts, nil
}

// xdpAttached reports whether ip(8) shows an XDP program on a
// root-namespace interface.
func (e *env) xdpAttached(name string) bool {
	e.t.Helper()
	return strings.Contains(e.run("ip", "link", "show", "dev", name), "xdp")
}

// iperfResult is what one TCP iperf3 run measured.
type iperfResult struct {
	Gbps          float64 // at the receiver
	Retransmits   int
	Intervals     []float64 // Gbit/s per interval, at the sender
	ZeroIntervals int       // intervals that moved nothing: a stall
}

// iperfTCP runs a one-shot server in serverNS bound to addr and a client
// in clientNS for secs seconds.
func (e *env) iperfTCP(serverNS, clientNS, addr string, secs int) (iperfResult, error) {
	e.t.Helper()
	if _, err := exec.LookPath("iperf3"); err != nil {
		e.t.Skip("needs iperf3")
	}
	srv := exec.Command("ip", "netns", "exec", serverNS, "iperf3", "-s", "-1", "-B", addr)
	if err := srv.Start(); err != nil {
		return iperfResult{}, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	var out []byte
	var err error
	for range 50 { // the server needs a moment to listen
		time.Sleep(50 * time.Millisecond)
		out, err = exec.Command("ip", "netns", "exec", clientNS, "iperf3", "-J", "-c", addr,
			"-t", strconv.Itoa(secs), "-i", "0.5", "--connect-timeout", "2000").Output()
		if err == nil {
			break
		}
		if len(out) == 0 || strings.Contains(strings.ToLower(string(out)), "connection refused") {
			continue // the server is not listening yet
		}
		break
	}
	if err != nil {
		return iperfResult{}, fmt.Errorf("iperf3 client: %v: %s", err, tail(out))
	}
	var r struct {
		Intervals []struct {
			Sum struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum"`
		} `json:"intervals"`
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
			SumSent struct {
				Retransmits int `json:"retransmits"`
			} `json:"sum_sent"`
		} `json:"end"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return iperfResult{}, fmt.Errorf("iperf3 output: %v: %s", err, tail(out))
	}
	if r.Error != "" {
		return iperfResult{}, fmt.Errorf("iperf3: %s", r.Error)
	}
	res := iperfResult{Gbps: r.End.SumReceived.BitsPerSecond / 1e9, Retransmits: r.End.SumSent.Retransmits}
	for _, iv := range r.Intervals {
		g := iv.Sum.BitsPerSecond / 1e9
		res.Intervals = append(res.Intervals, g)
		if g == 0 {
			res.ZeroIntervals++
		}
	}
	return res, nil
}

func tail(b []byte) string {
	if len(b) > 400 {
		b = b[len(b)-400:]
	}
	return string(b)
}

// iperfUDP runs a one-shot UDP iperf3 at rate with datagrams of size
// bytes and returns the fraction of sent bytes that did not arrive
// (computed from both ends: iperf3 under-reports loss) and the rate
// received in Gbit/s.
func (e *env) iperfUDP(serverNS, clientNS, addr, rate string, size, secs int) (loss, gbps float64, err error) {
	e.t.Helper()
	srv := exec.Command("ip", "netns", "exec", serverNS, "iperf3", "-s", "-1", "-B", addr)
	if err := srv.Start(); err != nil {
		return 0, 0, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	var out []byte
	for range 50 {
		time.Sleep(50 * time.Millisecond)
		out, err = exec.Command("ip", "netns", "exec", clientNS, "iperf3", "-J", "-u", "-c", addr,
			"-b", rate, "-l", strconv.Itoa(size), "-t", strconv.Itoa(secs)).Output()
		if err == nil {
			break
		}
	}
	if err != nil {
		return 0, 0, fmt.Errorf("iperf3 -u: %v: %s", err, tail(out))
	}
	var r struct {
		End struct {
			SumSent     struct{ Bytes float64 } `json:"sum_sent"`
			SumReceived struct {
				Bytes         float64
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, 0, fmt.Errorf("iperf3 output: %v: %s", err, tail(out))
	}
	if r.End.SumSent.Bytes == 0 {
		return 0, 0, fmt.Errorf("iperf3 sent nothing: %s", tail(out))
	}
	return 1 - r.End.SumReceived.Bytes/r.End.SumSent.Bytes, r.End.SumReceived.BitsPerSecond / 1e9, nil
}

// udpCounters returns the Udp line of /proc/net/snmp in ns by name.
func (e *env) udpCounters(ns string) map[string]int {
	e.t.Helper()
	var names []string
	out := map[string]int{}
	for _, line := range strings.Split(e.inNS(ns, "cat", "/proc/net/snmp"), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f[1:]
			continue
		}
		for i, v := range f[1:] {
			if i < len(names) {
				out[names[i]], _ = strconv.Atoi(v)
			}
		}
	}
	return out
}
