package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

const dashboardFile = "grafana-dashboard.json"

// dashboardExprs returns every Prometheus query of the dashboard, with
// Grafana's variables replaced by values Prometheus accepts.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string
		UID    string
		Inputs []struct{ Name, Type, PluginID string } `json:"__inputs"`
		Panels []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Inputs) != 1 || dash.Inputs[0].PluginID != "prometheus" {
		t.Fatalf("not an importable dashboard with one Prometheus input: %+v", dash.Inputs)
	}
	var exprs []string
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			e := strings.NewReplacer("$__rate_interval", "1m", "$bridge", ".*").Replace(tg.Expr)
			if strings.Contains(e, "$") {
				t.Errorf("panel %q: unknown variable in %q", p.Title, tg.Expr)
			}
			exprs = append(exprs, e)
		}
	}
	return exprs
}

var metricName = regexp.MustCompile(`\bgvs_[a-z0-9_]+`)

// TestDashboardUsesOnlyExportedMetrics: every metric a panel queries is
// one the collectors export, and the dashboard covers per-port throughput
// and drops and per-PMD load.
func TestDashboardUsesOnlyExportedMetrics(t *testing.T) {
	exprs := dashboardExprs(t)
	e := newEnv(t)
	e.traffic(t, 5)
	e.transact(t, `{"op":"insert","table":"Open_vSwitch","row":{}}`)
	fams := parse(t, e.scrape(t))
	exported := map[string]bool{}
	for name, f := range fams {
		exported[name] = true
		if f.GetType().String() == "HISTOGRAM" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				exported[name+s] = true
			}
		}
	}
	used := map[string]bool{}
	for _, expr := range exprs {
		for _, name := range metricName.FindAllString(expr, -1) {
			used[name] = true
			if !exported[name] {
				t.Errorf("dashboard queries %s, which no collector exports (in %q)", name, expr)
			}
		}
	}
	for _, must := range []string{"gvs_interface_rx_bytes_total", "gvs_interface_tx_bytes_total", "gvs_interface_drops_total",
		"gvs_interface_datapath_drops_total", "gvs_pmd_busy_seconds_total", "gvs_pmd_idle_seconds_total"} {
		if !used[must] {
			t.Errorf("dashboard does not use %s", must)
		}
	}
}
