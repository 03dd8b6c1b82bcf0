package bridge

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ofBridge is a secure-mode bridge with hosts on OpenFlow ports 1..n,
// addresses 198.18.<subnet>.<1..n>.
type ofBridge struct {
	s     *switchd
	name  string
	hosts []*host
}

func newOFBridge(t *testing.T, tag string, subnet, n int) *ofBridge {
	t.Helper()
	s := newSwitchd(t, modes[0])
	b := &ofBridge{s: s, name: "gvof" + tag}
	s.vsctl("add-br", b.name, "--", "set", "bridge", b.name, "fail-mode=secure", "protocols=OpenFlow10,OpenFlow13,OpenFlow15")
	for i := 1; i <= n; i++ {
		h := newHost(t, fmt.Sprintf("gvof-%s%d", tag, i), fmt.Sprintf("gvof%s%d", tag, i), fmt.Sprintf("198.18.%d.%d", subnet, i))
		s.vsctl("add-port", b.name, h.Port, "--", "set", "interface", h.Port, fmt.Sprintf("ofport_request=%d", i))
		b.hosts = append(b.hosts, h)
	}
	return b
}

// flows loads flows (one per line) with ovs-ofctl -O OpenFlow13 add-flows.
func (b *ofBridge) flows(t *testing.T, flows ...string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "flows")
	if err := os.WriteFile(file, []byte(strings.Join(flows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.s.ofctl("-O", "OpenFlow13", "add-flows", b.name, file)
}

// sendUDP sends count datagrams from h to dst:port, each from its own
// source port when spread is set (so each is a new flow), paced so that
// flow setup is not what is tested.
func sendUDP(t *testing.T, h *host, dst string, port, count int, spread bool) {
	t.Helper()
	err := inNetns(h.NS, func() error {
		var conn *net.UDPConn
		for i := range count {
			if conn == nil || spread {
				if conn != nil {
					conn.Close()
				}
				c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.ParseIP(dst), Port: port})
				if err != nil {
					return err
				}
				conn = c
			}
			if _, err := conn.Write([]byte(fmt.Sprintf("gvs test datagram %d", i))); err != nil {
				return err
			}
			time.Sleep(200 * time.Microsecond)
		}
		if conn != nil {
			conn.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// staticARP gives h a permanent neighbour entry for ip.
func staticARP(t *testing.T, h *host, ip, mac string) {
	t.Helper()
	run(t, ipPath, "-n", h.NS, "neigh", "replace", ip, "lladdr", mac, "dev", h.Peer, "nud", "permanent")
}

// TestOpenFlowSelectGroupSpreads sends many UDP flows through a select
// group of two buckets: both receive a fair part of them.
func TestOpenFlowSelectGroupSpreads(t *testing.T) {
	requireEnv(t, ofctlPath)
	b := newOFBridge(t, "sg", 41, 3)
	const vip, vmac = "198.18.41.100", "02:00:00:00:41:64"
	staticARP(t, b.hosts[0], vip, vmac)
	b.s.ofctl("-O", "OpenFlow15", "add-group", b.name, "group_id=1,type=select,bucket=output:2,bucket=output:3")
	b.flows(t, "priority=10,in_port=1,udp,actions=group:1")
	before2, before3 := b.hosts[1].peerCounter(t, "rx_packets"), b.hosts[2].peerCounter(t, "rx_packets")
	const flows = 400
	sendUDP(t, b.hosts[0], vip, 9, flows, true)
	var got2, got3 uint64
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		got2 = b.hosts[1].peerCounter(t, "rx_packets") - before2
		got3 = b.hosts[2].peerCounter(t, "rx_packets") - before3
		if got2+got3 >= flows {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got2+got3 < flows {
		t.Errorf("%d of %d datagrams arrived (%d and %d)\n%s", got2+got3, flows, got2, got3, b.s.appctl("dpctl/show"))
	}
	t.Logf("select group: %d flows to bucket 0, %d to bucket 1", got2, got3)
	if got2 < flows/5 || got3 < flows/5 {
		t.Errorf("select group does not spread: %d and %d of %d flows", got2, got3, flows)
	}
	stats := b.s.ofctl("-O", "OpenFlow15", "dump-group-stats", b.name)
	if !strings.Contains(stats, "group_id=1") || strings.Contains(stats, "packet_count=0,") {
		t.Errorf("group statistics: %s", stats)
	}
}

// TestOpenFlowFastFailover follows port liveness: traffic goes to the
// first live bucket and moves when its port goes down.
func TestOpenFlowFastFailover(t *testing.T) {
	requireEnv(t, ofctlPath)
	b := newOFBridge(t, "ff", 42, 3)
	const vip, vmac = "198.18.42.100", "02:00:00:00:42:64"
	staticARP(t, b.hosts[0], vip, vmac)
	b.s.ofctl("-O", "OpenFlow13", "add-group", b.name,
		"group_id=2,type=fast_failover,bucket=watch_port:2,actions=output:2,bucket=watch_port:3,actions=output:3")
	b.flows(t, "priority=10,in_port=1,udp,actions=group:2")
	count := func() (uint64, uint64) {
		return b.hosts[1].peerCounter(t, "rx_packets"), b.hosts[2].peerCounter(t, "rx_packets")
	}
	a2, a3 := count()
	sendUDP(t, b.hosts[0], vip, 9, 50, false)
	eventually(t, "datagrams on port 2", func() bool { n2, _ := count(); return n2-a2 >= 50 })
	if _, n3 := count(); n3-a3 > 5 {
		t.Errorf("fast failover sent %d datagrams to the standby port while port 2 was live", n3-a3)
	}
	// Port 2's link goes down (its peer leaves): the group fails over.
	run(t, ipPath, "-n", b.hosts[1].NS, "link", "set", b.hosts[1].Peer, "down")
	time.Sleep(300 * time.Millisecond) // link event, port status, revalidation
	_, b3 := count()
	sendUDP(t, b.hosts[0], vip, 9, 50, false)
	eventually(t, "datagrams on port 3 after port 2 went down", func() bool { _, n3 := count(); return n3-b3 >= 50 })
}

// TestOpenFlowMeter holds a UDP stream offered at 40 Mbit/s to a 10 Mbit/s
// drop meter (±10%).
func TestOpenFlowMeter(t *testing.T) {
	requireEnv(t, iperfPath, ofctlPath)
	b := newOFBridge(t, "mt", 43, 2)
	b.s.ofctl("-O", "OpenFlow13", "add-meter", b.name, "meter=1,kbps,band=type=drop,rate=10000")
	b.flows(t,
		"priority=10,in_port=1,udp,actions=meter:1,output:2",
		"priority=5,in_port=1,actions=output:2",
		"priority=5,in_port=2,actions=output:1")
	// The rate is read from the receiver's counter between seconds 2
	// and 5 of the stream: the bucket starts full (burst_size defaults
	// to one second of the rate, as Open vSwitch's).
	srv := exec.Command(ipPath, "netns", "exec", b.hosts[1].NS, iperfPath, "-s", "-1", "-B", b.hosts[1].IP)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	time.Sleep(300 * time.Millisecond)
	cl := exec.Command(ipPath, "netns", "exec", b.hosts[0].NS, iperfPath, "-c", b.hosts[1].IP, "-u", "-b", "40M", "-t", "6", "-l", "1400")
	if err := cl.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cl.Process.Kill(); cl.Wait() }()
	time.Sleep(2 * time.Second)
	start, t0 := b.hosts[1].peerCounter(t, "rx_bytes"), time.Now()
	time.Sleep(3 * time.Second)
	end, t1 := b.hosts[1].peerCounter(t, "rx_bytes"), time.Now()
	got := float64(end-start) * 8 / t1.Sub(t0).Seconds()
	t.Logf("UDP offered at 40 Mbit/s through a 10 Mbit/s meter: %s received (Ethernet frames)", mbps(got))
	if got < 9e6 || got > 11e6 {
		t.Errorf("meter held UDP to %s, want 10 Mbit/s ±10%%", mbps(got))
	}
	if stats := b.s.ofctl("-O", "OpenFlow13", "meter-stats", b.name); !strings.Contains(stats, "meter:1") {
		t.Errorf("meter-stats: %s", stats)
	}
}

// TestOpenFlowLearnAndConjunction: learn builds the forwarding table from
// traffic; a conjunctive match admits one source-destination pair only.
func TestOpenFlowLearnAndConjunction(t *testing.T) {
	requireEnv(t, ofctlPath)
	b := newOFBridge(t, "lc", 44, 3)
	h1, h2, h3 := b.hosts[0], b.hosts[1], b.hosts[2]
	b.flows(t,
		// Table 0: learn where each source lives, then go on to the ACL.
		"table=0,priority=0,actions=learn(table=2,hard_timeout=300,priority=10,NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],output:NXM_OF_IN_PORT[]),resubmit(,1)",
		// Table 1: IPv4 from .1 to .2 passes (a two-clause conjunction);
		// other IPv4 is dropped; ARP passes.
		fmt.Sprintf("table=1,priority=10,ip,nw_src=%s,actions=conjunction(7,1/2)", h1.IP),
		fmt.Sprintf("table=1,priority=10,ip,nw_src=%s,actions=conjunction(7,1/2)", h2.IP),
		fmt.Sprintf("table=1,priority=10,ip,nw_dst=%s,actions=conjunction(7,2/2)", h2.IP),
		fmt.Sprintf("table=1,priority=10,ip,nw_dst=%s,actions=conjunction(7,2/2)", h1.IP),
		"table=1,priority=10,conj_id=7,ip,actions=resubmit(,2)",
		"table=1,priority=5,ip,actions=drop",
		"table=1,priority=0,actions=resubmit(,2)",
		// Table 2: learned destinations, else flood.
		"table=2,priority=0,actions=flood")
	mustPing(t, h1, h2)
	mustPing(t, h2, h1)
	mustNotPing(t, h3, h1)
	learned := b.s.ofctl("-O", "OpenFlow13", "dump-flows", b.name, "table=2")
	for _, h := range []*host{h1, h2} {
		if !strings.Contains(learned, "dl_dst="+h.peerMAC(t)) {
			t.Errorf("no learned flow for %s in table 2:\n%s", h.peerMAC(t), learned)
		}
	}
	conj := b.s.ofctl("-O", "OpenFlow13", "dump-flows", b.name, "table=1,conj_id=7")
	if strings.Contains(conj, "n_packets=0,") {
		eventually(t, "the conj_id flow's counters", func() bool {
			return !strings.Contains(b.s.ofctl("-O", "OpenFlow13", "dump-flows", b.name, "table=1,conj_id=7"), "n_packets=0,")
		})
	}
}
