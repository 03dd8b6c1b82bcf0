package bridge

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"
)

// host is one end of the topology: a namespace holding one end of a veth
// pair, whose other end (Port) is left in the root namespace for the
// switch.
type host struct {
	NS   string // namespace name
	Port string // veth end in the root namespace
	Peer string // veth end inside NS
	IP   string // address of Peer
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newHost creates namespace ns with a veth pair (port in the root
// namespace, up, not yet in any bridge) and ip/24 inside. Cleanup removes
// both.
func newHost(t *testing.T, ns, port, ip string) *host {
	t.Helper()
	h := newHostWithoutVeth(t, ns, port, ip)
	h.createVeth(t)
	return h
}

// newHostWithoutVeth creates the namespace only; createVeth adds the pair.
func newHostWithoutVeth(t *testing.T, ns, port, ip string) *host {
	t.Helper()
	h := &host{NS: ns, Port: port, Peer: port + "p", IP: ip}
	exec.Command(ipPath, "netns", "del", ns).Run() // leftovers of a killed run
	exec.Command(ipPath, "link", "del", port).Run()
	run(t, ipPath, "netns", "add", ns)
	t.Cleanup(func() { exec.Command(ipPath, "netns", "del", ns).Run() })
	return h
}

// createVeth (re)creates the veth pair of h.
func (h *host) createVeth(t *testing.T) {
	t.Helper()
	run(t, ipPath, "link", "add", h.Port, "type", "veth", "peer", "name", h.Peer)
	t.Cleanup(func() { exec.Command(ipPath, "link", "del", h.Port).Run() })
	run(t, ipPath, "link", "set", h.Peer, "netns", h.NS)
	run(t, ipPath, "-n", h.NS, "addr", "add", h.IP+"/24", "dev", h.Peer)
	run(t, ipPath, "-n", h.NS, "link", "set", h.Peer, "up")
	run(t, ipPath, "-n", h.NS, "link", "set", "lo", "up")
	run(t, ipPath, "link", "set", h.Port, "up")
}

func (h *host) deleteVeth(t *testing.T) {
	t.Helper()
	run(t, ipPath, "link", "del", h.Port)
}

// inNetns runs fn on a thread in namespace ns.
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
		// goroutine ends, rather than reuse a thread in the wrong
		// namespace.
		return errors.Join(ferr, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// ping sends ICMP echo requests from namespace ns to dst and reports
// whether any of count gets a reply within timeout each (there is no ping
// binary on the test machines, so this is ping).
func ping(ns, dst string, count int, timeout time.Duration) (bool, error) {
	ok := false
	err := inNetns(ns, func() error {
		c, err := net.ListenPacket("ip4:icmp", "0.0.0.0")
		if err != nil {
			return err
		}
		defer c.Close()
		addr := &net.IPAddr{IP: net.ParseIP(dst)}
		id := uint16(os.Getpid())
		buf := make([]byte, 1500)
		for seq := range count {
			if _, err := c.WriteTo(echoRequest(id, uint16(seq)), addr); err != nil {
				return err
			}
			deadline := time.Now().Add(timeout)
			c.SetReadDeadline(deadline)
			for time.Now().Before(deadline) {
				n, from, err := c.ReadFrom(buf)
				if err != nil {
					break // timeout: next request
				}
				// ip4:icmp sockets hand over the ICMP message alone.
				if n >= 8 && buf[0] == 0 && from.String() == dst &&
					binary.BigEndian.Uint16(buf[4:]) == id && binary.BigEndian.Uint16(buf[6:]) == uint16(seq) {
					ok = true
					return nil
				}
			}
		}
		return nil
	})
	return ok, err
}

func echoRequest(id, seq uint16) []byte {
	b := make([]byte, 8+56)
	b[0] = 8 // echo request
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	for i := 8; i < len(b); i++ {
		b[i] = byte(i)
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

// mustPing fails the test unless from reaches to.
func mustPing(t *testing.T, from, to *host) {
	t.Helper()
	ok, err := ping(from.NS, to.IP, 5, time.Second)
	if err != nil {
		t.Fatalf("ping %s -> %s: %v", from.NS, to.IP, err)
	}
	if !ok {
		t.Fatalf("ping %s -> %s: no reply", from.NS, to.IP)
	}
}

// mustNotPing fails the test if from reaches to.
func mustNotPing(t *testing.T, from, to *host) {
	t.Helper()
	ok, err := ping(from.NS, to.IP, 3, 500*time.Millisecond)
	if err != nil {
		t.Fatalf("ping %s -> %s: %v", from.NS, to.IP, err)
	}
	if ok {
		t.Fatalf("ping %s -> %s: got a reply, want none", from.NS, to.IP)
	}
}

// iperfResult is the part of iperf3 -J output the tests read.
type iperfResult struct {
	End struct {
		SumReceived struct {
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum_received"`
		Sum struct {
			BitsPerSecond float64 `json:"bits_per_second"`
			LostPackets   int     `json:"lost_packets"`
			Packets       int     `json:"packets"`
			LostPercent   float64 `json:"lost_percent"`
		} `json:"sum"`
	} `json:"end"`
	Error string `json:"error"`
}

// iperf runs an iperf3 server in server.NS for one test and the client in
// client.NS with extra arguments, and returns the client's result.
func iperf(t *testing.T, server, client *host, args ...string) iperfResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := exec.CommandContext(ctx, ipPath, "netns", "exec", server.NS, iperfPath, "-s", "-1", "-B", server.IP)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	var res iperfResult
	var out []byte
	var err error
	for range 50 { // until the server listens
		cl := exec.CommandContext(ctx, ipPath, append([]string{"netns", "exec", client.NS, iperfPath, "-J", "-c", server.IP, "--connect-timeout", "2000"}, args...)...)
		out, err = cl.Output()
		res = iperfResult{}
		if jerr := json.Unmarshal(out, &res); jerr != nil {
			t.Fatalf("iperf3: %v %v\n%s", err, jerr, out)
		}
		if !strings.Contains(res.Error, "Connection refused") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if res.Error != "" {
		t.Fatalf("iperf3 %s: %s", strings.Join(args, " "), res.Error)
	}
	return res
}

func mbps(bps float64) string { return fmt.Sprintf("%.0f Mbit/s", bps/1e6) }

// peerCounter reads a statistics counter of the veth end inside the
// namespace.
func (h *host) peerCounter(t *testing.T, name string) uint64 {
	t.Helper()
	out := run(t, ipPath, "netns", "exec", h.NS, "cat", "/sys/class/net/"+h.Peer+"/statistics/"+name)
	n, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("%s %s: %v", h.Peer, name, err)
	}
	return n
}

// peerMAC is the MAC address of the veth end inside the namespace.
func (h *host) peerMAC(t *testing.T) string {
	t.Helper()
	out := run(t, ipPath, "netns", "exec", h.NS, "cat", "/sys/class/net/"+h.Peer+"/address")
	return strings.TrimSpace(out)
}
