package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestRealPrometheusScrapesACounter runs Debian's Prometheus server on
// loopback, scraping our endpoint every second, and asks its HTTP API for
// an interface counter.
func TestRealPrometheusScrapesACounter(t *testing.T) {
	prom := lookTool(t, "prometheus")
	e := newEnv(t)
	e.traffic(t, 50)

	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gvs
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: ['%s']
`, e.srv.Addr())
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	web := "127.0.0.1:" + strconv.Itoa(port)
	var logs bytes.Buffer
	cmd := exec.Command(prom,
		"--config.file="+cfgFile,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+web,
		"--log.level=warn",
	)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})

	query := url.Values{"query": {`gvs_interface_rx_packets_total{interface="p1",bridge="br0"}`}}
	api := "http://" + web + "/api/v1/query?" + query.Encode()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("prometheus exited: %v\n%s", err, logs.String())
		default:
		}
		var resp struct {
			Status string
			Data   struct {
				Result []struct {
					Metric map[string]string
					Value  [2]any
				}
			}
		}
		err := getJSON(api, &resp)
		if err == nil && resp.Status == "success" && len(resp.Data.Result) == 1 {
			r := resp.Data.Result[0]
			if r.Metric["job"] != "gvs" || r.Metric["port"] != "p1" || r.Metric["type"] != "system" {
				t.Fatalf("labels %v", r.Metric)
			}
			if v, _ := r.Value[1].(string); v != "50" {
				t.Fatalf("prometheus has %v, want 50", r.Value[1])
			}
			checkDashboardQueries(t, web)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sample in Prometheus after 60 s (last error %v)\n%s", err, logs.String())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// checkDashboardQueries evaluates every query of the Grafana dashboard
// on the real server: each must be valid PromQL, and the throughput
// query must return a series per port once two scrapes are in.
func checkDashboardQueries(t *testing.T, web string) {
	t.Helper()
	type result struct {
		Status string
		Error  string
		Data   struct{ Result []json.RawMessage }
	}
	for _, expr := range dashboardExprs(t) {
		var r result
		if err := getJSON("http://"+web+"/api/v1/query?"+url.Values{"query": {expr}}.Encode(), &r); err != nil || r.Status != "success" {
			t.Errorf("dashboard query %q: %v %s", expr, err, r.Error)
		}
	}
	throughput := `sum by (bridge, port) (rate(gvs_interface_rx_bytes_total{bridge=~".*"}[1m])) * 8`
	deadline := time.Now().Add(20 * time.Second)
	for {
		var r result
		err := getJSON("http://"+web+"/api/v1/query?"+url.Values{"query": {throughput}}.Encode(), &r)
		if err == nil && len(r.Data.Result) == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("throughput query: %v %+v", err, r)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
