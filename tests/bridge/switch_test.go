package bridge

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestSwitch is the acceptance scenario of the bridge reconciler, once
// per database mode: ovs-vsctl builds a bridge, traffic flows, VLANs
// isolate, socket buffers apply at run time, a late veth starts working,
// bad configuration stays local, a restart keeps ofports and forwarding,
// del-port stops traffic.
func TestSwitch(t *testing.T) {
	requireEnv(t, iperfPath)
	for i, mode := range modes {
		t.Run(mode.name, func(t *testing.T) { testSwitch(t, "edg"[i], 20+i, mode) })
	}
}

func testSwitch(t *testing.T, letter byte, subnet int, mode dbMode) {
	s := newSwitchd(t, mode)
	name := func(suffix string) string { return fmt.Sprintf("gvbe%c%s", letter, suffix) }
	addr := func(n int) string { return fmt.Sprintf("198.18.%d.%d", subnet, n) }
	br := name("br")
	h1 := newHost(t, "gvbe-"+name("1"), name("1"), addr(1))
	h2 := newHost(t, "gvbe-"+name("2"), name("2"), addr(2))

	s.vsctl("add-br", br)
	if _, err := net.InterfaceByName(br); err != nil {
		t.Fatalf("bridge port %s: %v", br, err)
	}
	s.vsctl("add-port", br, h1.Port)
	s.vsctl("add-port", br, h2.Port)
	mustPing(t, h1, h2)
	mustPing(t, h2, h1)
	if fdb := s.appctl("fdb/show", br); !strings.Contains(fdb, " port  VLAN  MAC                Age") ||
		!strings.Contains(fdb, h1.peerMAC(t)) {
		t.Errorf("fdb/show %s does not list %s's MAC %s:\n%s", br, h1.Peer, h1.peerMAC(t), fdb)
	}
	tcp := iperf(t, h1, h2, "-t", "2")
	t.Logf("TCP through %s: %s", br, mbps(tcp.End.SumReceived.BitsPerSecond))

	show := s.vsctl("show")
	for _, want := range []string{
		"Bridge " + br, "Port " + br, "Interface " + br, "type: internal",
		"Port " + h1.Port, "Interface " + h1.Port, `ovs_version: "3.1.0"`,
	} {
		if !strings.Contains(show, want) {
			t.Errorf("ovs-vsctl show lacks %q:\n%s", want, show)
		}
	}
	if strings.Contains(show, "error:") {
		t.Errorf("ovs-vsctl show reports errors:\n%s", show)
	}

	t.Run("observability", func(t *testing.T) {
		if show := s.appctl("dpif/show"); !strings.Contains(show, br+":") || !strings.Contains(show, h1.Port+" ") {
			t.Errorf("dpif/show:\n%s", show)
		}
		resp, err := http.Get(s.metricsURL())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := []string{`gvs_interface_rx_packets_total{bridge="` + br + `",interface="` + h1.Port + `"`, "gvs_reconciler_runs_total "}
		if !s.external {
			want = append(want, "gvs_ovsdb_connections ")
		}
		for _, w := range want {
			if !strings.Contains(string(body), w) {
				t.Errorf("metrics lack %s", w)
			}
		}
	})

	t.Run("vlan", func(t *testing.T) {
		s.vsctl("set", "Port", h1.Port, "tag=10", "--", "set", "Port", h2.Port, "tag=20")
		mustNotPing(t, h1, h2)
		s.vsctl("set", "Port", h2.Port, "tag=10")
		mustPing(t, h1, h2)
		s.vsctl("clear", "Port", h1.Port, "tag", "--", "clear", "Port", h2.Port, "tag")
		mustPing(t, h1, h2)
	})

	t.Run("socket-buffers", func(t *testing.T) {
		s.vsctl("set", "Open_vSwitch", ".", "other_config:userspace-sock-buf-size=8388608")
		for _, h := range []*host{h1, h2} {
			eventually(t, h.Port+" status to show the buffer size", func() bool {
				return strings.Contains(s.get("Interface", h.Port, "status"), `socket_buf_requested="8388608"`)
			})
		}
		t.Logf("%s status: %s", h1.Port, s.get("Interface", h1.Port, "status"))
	})

	// UDP with 8 KB datagrams at 1 Gbit/s flows through the switch with
	// the buffers above. The figure (0.00% loss) is a performance
	// target that depends on the machine's load, so it is asserted by
	// `make bench` (the "UDP 8 KB at 1 Gbit/s" target row) with a
	// reference measured in the same run, not here: this test logs the
	// loss and fails only when the switch stops carrying the stream.
	t.Run("udp-8k-1g", func(t *testing.T) {
		// The switch's share of any loss: frames the sender's veth sent
		// that never left the switch towards the receiver. Losses in the
		// receiver's own socket (UdpRcvbufErrors) are iperf3's, not ours.
		sentBefore, deliveredBefore := h2.peerCounter(t, "tx_packets"), h1.peerCounter(t, "rx_packets")
		udp := iperf(t, h1, h2, "-u", "-b", "1G", "-l", "8000", "-t", "3", "-w", "4M")
		sent, delivered := h2.peerCounter(t, "tx_packets")-sentBefore, h1.peerCounter(t, "rx_packets")-deliveredBefore
		sum := udp.End.Sum
		t.Logf("UDP 8000-byte datagrams at 1 Gbit/s: iperf3 lost %d/%d datagrams (%.3f%%) at %s; frames into the switch %d, out of it %d",
			sum.LostPackets, sum.Packets, sum.LostPercent, mbps(sum.BitsPerSecond), sent, delivered)
		if sum.Packets == 0 {
			t.Fatal("no UDP datagram sent")
		}
		if delivered < sent {
			t.Logf("the switch lost %d of %d frames (%.2f%%) of UDP at 1 Gbit/s with userspace-sock-buf-size=8388608",
				sent-delivered, sent, 100*float64(sent-delivered)/float64(sent))
		}
		if 2*delivered < sent {
			t.Errorf("the switch delivered only %d of %d frames", delivered, sent)
		}
	})

	t.Run("afxdp", func(t *testing.T) {
		s.vsctl("set", "Interface", h1.Port, "type=afxdp", "--", "set", "Interface", h2.Port, "type=afxdp", "options:xdp-mode=generic")
		for _, h := range []*host{h1, h2} {
			if st := s.get("Interface", h.Port, "status"); !strings.Contains(st, "xdp-mode=") {
				t.Errorf("%s status lacks the XDP mode: %s", h.Port, st)
			}
		}
		mustPing(t, h1, h2)
		s.vsctl("set", "Interface", h1.Port, "type=system", "--", "set", "Interface", h2.Port, "type=system", "--", "clear", "Interface", h2.Port, "options")
		mustPing(t, h1, h2)
	})

	t.Run("late-veth", func(t *testing.T) {
		h3 := newHostWithoutVeth(t, "gvbe-"+name("3"), name("3"), addr(3))
		out := s.vsctl("add-port", br, h3.Port)
		if want := "could not open network device " + h3.Port + " (No such device)"; !strings.Contains(s.get("Interface", h3.Port, "error"), want) {
			t.Fatalf("error of a missing device: %s (ovs-vsctl said %q)", s.get("Interface", h3.Port, "error"), out)
		}
		h3.createVeth(t)
		eventually(t, h3.Port+" to get an ofport", func() bool {
			p := s.get("Interface", h3.Port, "ofport")
			return p != "-1" && p != "[]"
		})
		mustPing(t, h3, h1)
		s.vsctl("del-port", h3.Port)
	})

	t.Run("bad-configuration", func(t *testing.T) {
		odd := name("x")
		s.vsctl("add-port", br, odd, "--", "set", "Interface", odd, "type=vxlan")
		if got := s.get("Interface", odd, "error"); !strings.Contains(got, "Address family not supported by protocol") {
			t.Errorf("unknown type error = %s", got)
		}
		s.vsctl("set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=zz", "other_config:userspace-sock-buf-size=lots")
		mustPing(t, h1, h2)
		// A valid mask re-pins the PMDs live; the ports stay.
		s.vsctl("set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0x1")
		mustPing(t, h1, h2)
		s.vsctl("remove", "Open_vSwitch", ".", "other_config", "pmd-cpu-mask", "--", "del-port", odd)
	})

	t.Run("restart", func(t *testing.T) {
		ports := map[string]string{}
		for _, p := range []string{br, h1.Port, h2.Port} {
			ports[p] = s.get("Interface", p, "ofport")
		}
		s.stop()
		if _, err := net.InterfaceByName(br); err == nil {
			t.Errorf("tap device %s left behind after SIGTERM", br)
		}
		s.start()
		eventually(t, "ports to come back", func() bool {
			return s.get("Interface", h2.Port, "ofport") == ports[h2.Port]
		})
		for p, want := range ports {
			if got := s.get("Interface", p, "ofport"); got != want {
				t.Errorf("%s ofport after restart = %s, want %s", p, got, want)
			}
		}
		mustPing(t, h1, h2)
	})

	if s.external {
		t.Run("server-restart", func(t *testing.T) {
			s.restartServer()
			// gvs-vswitchd reconnects: ovs-vsctl without --no-wait
			// returns, and forwarding never depended on the server.
			mustPing(t, h1, h2)
			s.vsctl("set", "Port", h1.Port, "tag=30")
			mustNotPing(t, h1, h2)
			s.vsctl("clear", "Port", h1.Port, "tag")
			mustPing(t, h1, h2)
		})
	}

	t.Run("del-port", func(t *testing.T) {
		s.vsctl("del-port", h2.Port)
		mustNotPing(t, h1, h2)
		s.vsctl("del-br", br)
		if _, err := net.InterfaceByName(br); err == nil {
			t.Errorf("tap device %s left after del-br", br)
		}
	})
}
