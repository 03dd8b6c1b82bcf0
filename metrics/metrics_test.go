package metrics

import (
	"bytes"
	"encoding/json"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"gvs/dpif"
	"gvs/metrics/source/sourcetest"
	"gvs/ovsdb/jsonrpc"
)

// transact runs one OVSDB transaction over a fresh session.
func (e *env) transact(t *testing.T, ops string) {
	t.Helper()
	a, b := net.Pipe()
	go e.ovs.ServeConn(b)
	defer a.Close()
	params := []json.RawMessage{json.RawMessage(`"Open_vSwitch"`), json.RawMessage(ops)}
	m, err := jsonrpc.NewRequest("transact", params, 1)
	if err != nil {
		t.Fatal(err)
	}
	go jsonrpc.NewWriter(a).Write(m)
	r := jsonrpc.NewReader(a)
	a.SetDeadline(time.Now().Add(5 * time.Second))
	for {
		reply, err := r.Read()
		if err != nil {
			t.Fatalf("transact: %v", err)
		}
		if reply.IsResponse() {
			return
		}
	}
}

func TestScrapeReportsTrafficAndPassesPromtool(t *testing.T) {
	e := newEnv(t)
	e.traffic(t, 50)
	e.transact(t, `{"op":"insert","table":"Open_vSwitch","row":{}}`)
	e.transact(t, `{"op":"select","table":"Open_vSwitch","where":[]}`)
	e.transact(t, `{"op":"insert","table":"Bridge","row":{"name":7}}`)

	text := e.scrape(t)
	fams := parse(t, text)
	p1 := map[string]string{"bridge": "br0", "port": "p1", "interface": "p1", "type": "system"}
	if v := value(t, fams, "gvs_interface_rx_packets_total", p1); v != 50 {
		t.Errorf("p1 rx packets %v, want 50", v)
	}
	if v := value(t, fams, "gvs_interface_tx_packets_total", p1); v != 50 {
		t.Errorf("p1 tx packets %v, want 50", v)
	}
	if v := value(t, fams, "gvs_interface_rx_bytes_total", p1); v != 50*60 {
		t.Errorf("p1 rx bytes %v, want %d", v, 50*60)
	}
	if v := value(t, fams, "gvs_interface_drops_total", map[string]string{"interface": "p2", "where": "kernel_rx"}); v != 0 {
		t.Errorf("p2 kernel drops %v", v)
	}
	p2 := map[string]string{"interface": "p2"}
	if v := value(t, fams, "gvs_interface_socket_buffer_request_bytes", p2); v != 4194304 {
		t.Errorf("p2 requested socket buffer %v", v)
	}
	if v := value(t, fams, "gvs_interface_socket_buffer_bytes", map[string]string{"interface": "p2", "direction": "receive"}); v != 8388608 {
		t.Errorf("p2 effective receive buffer %v", v)
	}
	if v := value(t, fams, "gvs_interface_socket_buffer_request_bytes", p1); v != 0 {
		t.Errorf("p1 requested socket buffer %v, want 0 (defaults)", v)
	}
	if v := value(t, fams, "gvs_interface_link_up", p1); v != 1 {
		t.Errorf("p1 link up %v", v)
	}
	var rx, hits, misses, megaflowHits, lookups float64
	for _, pmd := range []string{"0", "1"} {
		l := map[string]string{"pmd": pmd}
		rx += value(t, fams, "gvs_pmd_rx_packets_total", l)
		hits += value(t, fams, "gvs_pmd_emc_hits_total", l) + value(t, fams, "gvs_pmd_megaflow_hits_total", l)
		megaflowHits += value(t, fams, "gvs_pmd_megaflow_hits_total", l)
		lookups += value(t, fams, "gvs_pmd_subtable_lookups_total", l)
		misses += value(t, fams, "gvs_pmd_misses_total", l)
		if q := value(t, fams, "gvs_pmd_rx_queues", l); q != 2 {
			t.Errorf("pmd %s polls %v queues, want 2", pmd, q)
		}
	}
	if rx != 100 || hits+misses != 100 || misses == 0 {
		t.Errorf("pmds: rx %v, hits %v, misses %v; want 100 received, all classified, some misses", rx, hits, misses)
	}
	// NORMAL installs one mask: each megaflow hit probed one subtable.
	if lookups != megaflowHits {
		t.Errorf("pmds: %v subtable lookups for %v megaflow hits in the only subtable", lookups, megaflowHits)
	}
	if v := value(t, fams, "gvs_datapath_flows", nil); v < 1 {
		t.Errorf("datapath flows %v", v)
	}
	if v := value(t, fams, "gvs_mac_table_entries", map[string]string{"bridge": "br0"}); v != 2 {
		t.Errorf("mac entries %v, want 2", v)
	}
	if v := value(t, fams, "gvs_mac_learned_total", map[string]string{"bridge": "br0"}); v != 2 {
		t.Errorf("mac learned %v, want 2", v)
	}
	if v := value(t, fams, "gvs_reconciler_runs_total", nil); v != 2 {
		t.Errorf("reconciler runs %v", v)
	}
	if v := value(t, fams, "gvs_reconciler_errors_total", nil); v != 1 {
		t.Errorf("reconciler errors %v", v)
	}
	if v := value(t, fams, "gvs_reconciler_run_duration_seconds", nil); v != 2 {
		t.Errorf("reconciler duration count %v", v)
	}
	if v := value(t, fams, "gvs_ovsdb_transactions_total", map[string]string{"result": "committed"}); v != 1 {
		t.Errorf("committed transactions %v, want 1", v)
	}
	if v := value(t, fams, "gvs_ovsdb_transactions_total", map[string]string{"result": "unchanged"}); v != 1 {
		t.Errorf("unchanged transactions %v, want 1", v)
	}
	if v := value(t, fams, "gvs_ovsdb_transactions_total", map[string]string{"result": "error"}); v != 1 {
		t.Errorf("failed transactions %v, want 1", v)
	}
	if v := value(t, fams, "gvs_ovsdb_commit_duration_seconds", nil); v != 1 {
		t.Errorf("commit duration count %v, want 1", v)
	}
	if v := value(t, fams, "gvs_ovsdb_connections_accepted_total", nil); v != 3 {
		t.Errorf("accepted %v, want 3", v)
	}
	if v := value(t, fams, "gvs_ovsdb_database_size_bytes", map[string]string{"database": "Open_vSwitch"}); v != 12345 {
		t.Errorf("db size %v", v)
	}
	for name, f := range fams {
		if strings.HasPrefix(name, "gvs_") && f.GetHelp() == "" {
			t.Errorf("%s has no help", name)
		}
	}

	// More traffic moves the counters.
	e.traffic(t, 10)
	fams = parse(t, e.scrape(t))
	if v := value(t, fams, "gvs_interface_rx_packets_total", p1); v != 60 {
		t.Errorf("after more traffic p1 rx packets %v, want 60", v)
	}

	promtool := lookTool(t, "promtool")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestKernelDropsAppearPerInterface(t *testing.T) {
	e := newEnv(t)
	// A fake device's receive queue holds 4096 frames; injecting more
	// than it holds is what a full socket buffer does.
	d := e.devs[0]
	before := d.Stats().RxKernelDrops
	frame := make([]byte, 60)
	for range 20000 {
		d.Inject(0, frame)
	}
	drops := d.Stats().RxKernelDrops - before
	if drops == 0 {
		t.Skip("the PMD kept up with 20000 injected frames; no kernel drops to see")
	}
	fams := parse(t, e.scrape(t))
	if v := value(t, fams, "gvs_interface_drops_total", map[string]string{"interface": "p1", "where": "kernel_rx"}); v < float64(drops) {
		t.Errorf("kernel_rx drops %v, device counted %d", v, drops)
	}
}

// TestXDPDropsAppearForAFXDPInterfaces: an interface whose device has
// AF_XDP custom statistics (p1) gets gvs_interface_xdp_drops_total by
// reason with the device's figures; one without (p2) gets none.
func TestXDPDropsAppearForAFXDPInterfaces(t *testing.T) {
	e := newEnv(t)
	fams := parse(t, e.scrape(t))
	for reason, want := range map[string]float64{
		"rx_dropped": 11, "rx_ring_full": 22, "fill_ring_empty": 33, "rx_invalid_descs": 44, "tx_invalid_descs": 55,
	} {
		if v := value(t, fams, "gvs_interface_xdp_drops_total", map[string]string{"interface": "p1", "reason": reason}); v != want {
			t.Errorf("p1 xdp drops %s = %v, want %v", reason, v, want)
		}
	}
	for _, m := range fams["gvs_interface_xdp_drops_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["interface"] != "p1" || labels["reason"] == "" || strings.Contains(labels["reason"], "empty_descs") {
			t.Errorf("unexpected xdp drops series %v", labels)
		}
	}
	if n := len(fams["gvs_interface_xdp_drops_total"].GetMetric()); n != 5 {
		t.Errorf("%d xdp drops series, want 5 (p1's reasons)", n)
	}
}

// TestDatapathDropsAppearPerInterface: packets from p1 output to a port
// that does not exist are datapath drops charged to p1, in
// gvs_interface_drops_total{where="datapath_rx"} and by reason.
func TestDatapathDropsAppearPerInterface(t *testing.T) {
	e := newEnv(t)
	var p1 uint32
	found := false
	for _, p := range e.sw.DP.Ports() {
		if p.Name == "p1" {
			p1, found = p.No, true
		}
	}
	if !found {
		t.Fatal("p1 not in the datapath")
	}
	where := func(fams map[string]*dto.MetricFamily, iface, w string) float64 {
		return value(t, fams, "gvs_interface_drops_total", map[string]string{"interface": iface, "where": w})
	}
	fams := parse(t, e.scrape(t))
	if v := where(fams, "p1", "datapath_rx"); v != 0 {
		t.Fatalf("p1 datapath_rx drops %v before any", v)
	}
	frame := sourcetest.Frame(sourcetest.MAC(2), sourcetest.MAC(1))
	for range 3 {
		if err := e.sw.DP.Execute(frame, p1, dpif.Actions{dpif.Output(999)}); err != nil {
			t.Fatal(err)
		}
	}
	fams = parse(t, e.scrape(t))
	if v := where(fams, "p1", "datapath_rx"); v != 3 {
		t.Errorf("p1 datapath_rx drops %v, want 3", v)
	}
	if v := where(fams, "p1", "datapath_tx"); v != 0 {
		t.Errorf("p1 datapath_tx drops %v, want 0", v)
	}
	if v := where(fams, "p2", "datapath_rx"); v != 0 {
		t.Errorf("p2 datapath_rx drops %v, want 0", v)
	}
	reason := func(r string) float64 {
		return value(t, fams, "gvs_interface_datapath_drops_total", map[string]string{"interface": "p1", "reason": r})
	}
	if v := reason("no_port"); v != 3 {
		t.Errorf("p1 no_port drops %v, want 3", v)
	}
	if v := reason("lost_upcall"); v != 0 {
		t.Errorf("p1 lost_upcall drops %v, want 0", v)
	}
	ps, err := e.sw.DP.PortStats(p1)
	if err != nil || ps.Drops() != 3 {
		t.Errorf("PortStats(p1) = %+v, %v", ps, err)
	}
}

func TestListenAddress(t *testing.T) {
	for in, want := range map[string]string{
		"9475":           "127.0.0.1:9475",
		":9475":          "127.0.0.1:9475",
		"0.0.0.0:9475":   "0.0.0.0:9475",
		"[::1]:80":       "[::1]:80",
		"localhost:9475": "localhost:9475",
	} {
		got, err := ListenAddress(in)
		if err != nil || got != want {
			t.Errorf("ListenAddress(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "1.2.3.4", ":port", "70000", "host:99999"} {
		if got, err := ListenAddress(bad); err == nil {
			t.Errorf("ListenAddress(%q) = %q, want an error", bad, got)
		}
	}
}

func TestServeRefusesBadAddressAndClosesCleanly(t *testing.T) {
	reg, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Serve("nope", reg, nil); err == nil {
		t.Fatal("Serve accepted a bad address")
	}
	s, err := Serve(":0", reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ip := s.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		t.Errorf(":0 listens on %v, want loopback", ip)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
		t.Error("still listening after Close")
	}
}

// TestRxRingMemory: an interface with receive rings of its own (p2, as
// an AF_PACKET port) reports their memory; one without (p1) has no such
// series; the budget and what is reserved from it are exported.
func TestRxRingMemory(t *testing.T) {
	e := newEnv(t)
	fams := parse(t, e.scrape(t))
	if v := value(t, fams, "gvs_interface_rx_ring_bytes", map[string]string{"interface": "p2"}); v != fakeRingBytes {
		t.Errorf("p2 rx ring bytes %v, want %d", v, fakeRingBytes)
	}
	if n := len(fams["gvs_interface_rx_ring_bytes"].GetMetric()); n != 1 {
		t.Errorf("%d rx ring series, want 1 (p2 only)", n)
	}
	if v := value(t, fams, "gvs_rx_ring_budget_bytes", nil); v != 64<<20 {
		t.Errorf("budget %v", v)
	}
	if v := value(t, fams, "gvs_rx_ring_reserved_bytes", nil); v != fakeRingBytes {
		t.Errorf("reserved %v, want %d", v, fakeRingBytes)
	}
}
