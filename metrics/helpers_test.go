package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"gvs/metrics/source"
	"gvs/metrics/source/sourcetest"
	"gvs/netdev"
	"gvs/netdev/netdevtest"
	"gvs/ovsdb/db"
	"gvs/ovsdb/server"
	"gvs/schema"
)

// env is a real switch with traffic, a real OVSDB server with
// transactions, a reconciler counter, all registered and served.
type env struct {
	sw   *sourcetest.Switch
	devs []*netdevtest.Device
	ovs  *server.Server
	rec  *source.Reconciler
	reg  *prometheus.Registry
	srv  *Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{sw: sourcetest.New(t, 2), rec: source.NewReconciler()}
	e.sw.Budget = netdev.NewMemoryBudget(64 << 20)
	e.sw.Budget.Join(fakeRingBytes) // as p2's rings would
	e.sw.AddBridge("br0")
	for i, name := range []string{"p1", "p2"} {
		d := netdevtest.MustNew(netdevtest.Config{Name: name, TxQueues: 4, RxQueues: 2})
		e.devs = append(e.devs, d)
		var dev netdev.Device = xdpDevice{d}
		if name == "p2" {
			dev = socketDevice{d}
		}
		e.sw.AddPort("br0", dev, i+1)
	}

	sch, err := db.ParseSchema(schema.VSwitch())
	if err != nil {
		t.Fatal(err)
	}
	e.ovs = server.New(nil)
	t.Cleanup(func() { e.ovs.Close() })
	if err := e.ovs.AddDatabase(db.New(sch, nil)); err != nil {
		t.Fatal(err)
	}
	e.rec.RecordPass(3*time.Millisecond, nil)
	e.rec.RecordPass(40*time.Millisecond, errors.New("port p9: no such device"))

	e.reg, err = NewRegistry(
		NewSwitchCollector(e.sw),
		NewReconcilerCollector(e.rec),
		NewOVSDBCollector(e.ovs, map[string]func() int64{"Open_vSwitch": func() int64 { return 12345 }}),
	)
	if err != nil {
		t.Fatal(err)
	}
	e.srv, err = Serve("127.0.0.1:0", e.reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.srv.Close() })
	return e
}

// traffic sends n frames each way between p1 and p2 and waits until the
// datapath has forwarded them all.
func (e *env) traffic(t *testing.T, n int) {
	t.Helper()
	a, b := sourcetest.MAC(1), sourcetest.MAC(2)
	want := e.devs[1].Stats().TxPackets + uint64(n)
	wantA := e.devs[0].Stats().TxPackets + uint64(n)
	for i := range n {
		if err := e.devs[0].Inject(i%2, sourcetest.Frame(b, a)); err != nil {
			t.Fatal(err)
		}
		if err := e.devs[1].Inject(i%2, sourcetest.Frame(a, b)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.devs[1].Stats().TxPackets < want || e.devs[0].Stats().TxPackets < wantA {
		if time.Now().After(deadline) {
			t.Fatalf("traffic not forwarded: p1 tx %d p2 tx %d", e.devs[0].Stats().TxPackets, e.devs[1].Stats().TxPackets)
		}
		time.Sleep(2 * time.Millisecond)
	}
	e.devs[0].TakeSent()
	e.devs[1].TakeSent()
}

// scrape fetches /metrics as text.
func (e *env) scrape(t *testing.T) []byte {
	t.Helper()
	resp, err := http.Get("http://" + e.srv.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scrape: %d %v\n%s", resp.StatusCode, err, body)
	}
	return body
}

// parse decodes the text exposition format.
func parse(t *testing.T, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return fams
}

// value returns the value of the sample of family name whose labels
// include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no %s sample with labels %v", name, want)
	return 0
}

// freePort returns a loopback TCP port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func lookTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed (Debian package prometheus; scripts/install-test-deps.sh)", name)
	}
	return p
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return errors.New(resp.Status + ": " + strings.TrimSpace(string(body)))
	}
	return json.Unmarshal(body, v)
}

// socketDevice is a fake that reports socket buffers in its Status the
// way the AF_PACKET backend does.
type socketDevice struct{ *netdevtest.Device }

func (d socketDevice) Status() map[string]string {
	st := d.Device.Status()
	st["socket_buf_requested"] = "4194304"
	st["socket_rcvbuf"] = "8388608"
	st["socket_sndbuf"] = "8388608"
	return st
}

// fakeRingBytes is what socketDevice reports as its receive rings' memory.
const fakeRingBytes = 256 << 10

// RxRingBytes reports receive rings as an AF_PACKET device does.
func (d socketDevice) RxRingBytes() int64 { return fakeRingBytes }

// xdpDevice is a fake with the custom statistics of an afxdp port
// (netdev/afxdp Device.CustomStats): fixed, distinct figures.
type xdpDevice struct{ *netdevtest.Device }

func (d xdpDevice) CustomStats() map[string]uint64 {
	return map[string]uint64{
		"xsk_rx_dropped": 11, "xsk_rx_ring_full": 22, "xsk_rx_fill_ring_empty_descs": 33,
		"xsk_rx_invalid_descs": 44, "xsk_tx_invalid_descs": 55, "xsk_tx_ring_empty_descs": 66,
		"tx_kicks": 77,
	}
}
