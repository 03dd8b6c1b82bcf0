package bridge

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// pinger sends an ICMP echo request every interval from one host to
// another and counts the replies by sequence number.
type pinger struct {
	c    net.PacketConn
	dst  *net.IPAddr
	id   uint16
	stop chan struct{}
	done sync.WaitGroup

	mu     sync.Mutex
	sent   int
	got    map[uint16]bool
	sentAt map[uint16]time.Time
	maxRTT time.Duration
}

func startPinger(t *testing.T, from, to *host, interval time.Duration) *pinger {
	t.Helper()
	p := &pinger{dst: &net.IPAddr{IP: net.ParseIP(to.IP)}, id: uint16(os.Getpid()) ^ 0x5a5a, stop: make(chan struct{}), got: map[uint16]bool{},
		sentAt: map[uint16]time.Time{}}
	// The socket belongs to the namespace it was made in; it can be
	// used from any thread afterwards.
	if err := inNetns(from.NS, func() (err error) {
		p.c, err = net.ListenPacket("ip4:icmp", "0.0.0.0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	p.done.Add(2)
	go func() { // replies
		defer p.done.Done()
		buf := make([]byte, 1500)
		for {
			n, from, err := p.c.ReadFrom(buf)
			if err != nil {
				return // closed
			}
			if n >= 8 && buf[0] == 0 && from.String() == to.IP && binary.BigEndian.Uint16(buf[4:]) == p.id {
				seq := binary.BigEndian.Uint16(buf[6:])
				p.mu.Lock()
				p.got[seq] = true
				p.maxRTT = max(p.maxRTT, time.Since(p.sentAt[seq]))
				p.mu.Unlock()
			}
		}
	}()
	go func() { // requests
		defer p.done.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for seq := uint16(0); ; seq++ {
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
			p.mu.Lock()
			p.sentAt[seq] = time.Now()
			p.mu.Unlock()
			if _, err := p.c.WriteTo(echoRequest(p.id, seq), p.dst); err != nil {
				t.Errorf("ping: %v", err)
				return
			}
			p.mu.Lock()
			p.sent++
			p.mu.Unlock()
		}
	}()
	return p
}

// finish stops sending, waits for the last replies and returns how many
// requests went out, which got no reply and the longest round trip.
func (p *pinger) finish() (sent int, lost []int, maxRTT time.Duration) {
	close(p.stop)
	time.Sleep(time.Second)
	p.c.Close()
	p.done.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for seq := range p.sent {
		if !p.got[uint16(seq)] {
			lost = append(lost, seq)
		}
	}
	return p.sent, lost, p.maxRTT
}

// interfaceStatus reads every Interface's status column in one call.
func (s *switchd) interfaceStatus() map[string]map[string]string {
	s.t.Helper()
	out := s.vsctl("--no-wait", "--format=json", "--columns=name,status", "list", "Interface")
	var doc struct {
		Data [][]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		s.t.Fatalf("ovs-vsctl list Interface: %v\n%s", err, out)
	}
	m := map[string]map[string]string{}
	for _, row := range doc.Data {
		var name string
		var status []any // ["map", [[k, v], ...]]
		if len(row) != 2 || json.Unmarshal(row[0], &name) != nil || json.Unmarshal(row[1], &status) != nil || len(status) != 2 {
			s.t.Fatalf("ovs-vsctl list Interface: row %s", row)
		}
		st := map[string]string{}
		pairs, _ := status[1].([]any)
		for _, kv := range pairs {
			if kv, ok := kv.([]any); ok && len(kv) == 2 {
				st[fmt.Sprint(kv[0])] = fmt.Sprint(kv[1])
			}
		}
		m[name] = st
	}
	return m
}

// TestHugeSockBufKeepsPingAndBudget is issue 12's acceptance test for
// receive rings: 20 system ports start with small rings; setting
// userspace-sock-buf-size=99999999999 at run time makes every port swap
// its ring (MTU-sized slots, grown as far as the budget allows) while a
// ping every 10 ms crosses the switch without a loss, and the rings
// together stay within gvs-rx-ring-budget; lowering the budget live
// shrinks them into it.
func TestHugeSockBufKeepsPingAndBudget(t *testing.T) {
	requireEnv(t)
	s := newSwitchd(t, modes[0])
	const ports, budget = 20, 64 << 20
	br := "gvberbr"
	var hosts []*host
	args := []string{"set", "Open_vSwitch", ".", fmt.Sprintf("other_config:gvs-rx-ring-budget=%d", budget), "--", "add-br", br}
	for i := range ports {
		name := fmt.Sprintf("gvber%02d", i)
		h := newHost(t, "gvbe-"+name, name, fmt.Sprintf("198.18.61.%d", i+1))
		hosts = append(hosts, h)
		args = append(args, "--", "add-port", br, h.Port)
	}
	s.vsctl(args...)
	mustPing(t, hosts[0], hosts[1])
	mustPing(t, hosts[1], hosts[0])

	a := &appctlClient{t: t, s: s, target: "ovs-vswitchd"}
	mem := a.memory()
	t.Logf("before: rx-ring-kB %d, reserved %d kB of %d kB", mem["rx-ring-kB"], mem["rx-ring-reserved-kB"], mem["rx-ring-budget-kB"])
	if mem["rx-rings"] != ports || mem["rx-ring-kB"] > ports*512 || mem["rx-ring-budget-kB"] != budget>>10 {
		t.Fatalf("idle ports: memory/show %v; want %d small rings and the budget", mem, ports)
	}

	p := startPinger(t, hosts[0], hosts[1], 10*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	s.vsctl("set", "Open_vSwitch", ".", "other_config:userspace-sock-buf-size=99999999999")
	// Each ring asks for 1 GiB, capped at 64 MiB and at an equal share
	// of the budget: every port swaps its ring for a larger one.
	eventually(t, "every port's ring resized", func() bool {
		st := s.interfaceStatus()
		for _, h := range hosts {
			if st[h.Port]["rx_ring_resizes"] == "0" || st[h.Port]["rx_ring_size_pending"] != "" || st[h.Port]["rx_ring_size"] == "262144" {
				return false
			}
		}
		return true
	})
	time.Sleep(time.Second)
	sent, lost, maxRTT := p.finish()
	t.Logf("ping every 10 ms during and after the change: %d sent, %d lost %v, longest round trip %v", sent, len(lost), lost, maxRTT)
	if sent < 100 || len(lost) > 0 {
		t.Errorf("ping through the switch lost %d of %d while rings were swapped: %v\n%s\n%s", len(lost), sent, lost,
			s.appctl("gvs/sock-buf-show"), s.appctl("dpctl/show", "-s"))
	}
	mem = a.memory()
	t.Logf("after: rx-ring-kB %d, reserved %d kB of %d kB", mem["rx-ring-kB"], mem["rx-ring-reserved-kB"], mem["rx-ring-budget-kB"])
	if mem["rx-ring-kB"] > budget>>10 || mem["rx-ring-reserved-kB"] > budget>>10 {
		t.Errorf("rings %d kB, reserved %d kB: over the %d kB budget", mem["rx-ring-kB"], mem["rx-ring-reserved-kB"], budget>>10)
	}
	grown := 0
	for k, v := range mem {
		if strings.HasPrefix(k, "rx-ring-kB(") {
			if v > 64<<10 {
				t.Errorf("%s: %d kB, over the 64 MiB a ring may have", k, v)
			}
			if v > 512 {
				grown++
			}
		}
	}
	if grown == 0 || mem["rx-ring-kB"] < budget>>11 {
		t.Errorf("userspace-sock-buf-size grew no ring: %v", mem)
	}
	m := scrapeMetrics(t, s)
	for _, want := range []string{
		"\ngvs_rx_ring_budget_bytes 6.7108864e+07\n",
		"\ngvs_rx_ring_reserved_bytes ",
		`gvs_interface_rx_ring_bytes{bridge="` + br + `",interface="` + hosts[0].Port + `",port="` + hosts[0].Port + `",type="system"} `,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}

	// A lower budget, live: the grown rings shrink into it.
	const lower = 16 << 20
	s.vsctl("set", "Open_vSwitch", ".", fmt.Sprintf("other_config:gvs-rx-ring-budget=%d", lower))
	eventually(t, "rings within the lowered budget", func() bool {
		m := a.memory()
		return m["rx-ring-budget-kB"] == lower>>10 && m["rx-ring-reserved-kB"] <= lower>>10 && m["rx-ring-kB"] <= lower>>10
	})
	mustPing(t, hosts[0], hosts[1])
}
