package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gvs/cmd/internal/daemontest"
	"gvs/ovsdb/jsonrpc"
)

// TestMetricsAddress runs the daemon with --metrics-address=0 (loopback,
// any port), scrapes /metrics, commits a transaction through the
// database socket and sees the committed-transaction counter and the
// file size grow; the endpoint goes away with the daemon.
func TestMetricsAddress(t *testing.T) {
	e, db := newEnvWithDB(t)
	sock := e.Path("db.sock")
	logFile := e.Path("ovsdb-server.log")
	cmd := e.Command("--log-file", "--metrics-address=0", "--remote=punix:"+sock, db)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addrRE := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/metrics`)
	var addr string
	daemontest.WaitFor(t, "the metrics address in the log", func() bool {
		text, _ := os.ReadFile(logFile)
		if m := addrRE.FindSubmatch(text); m != nil {
			addr = string(m[1])
		}
		return addr != ""
	})
	daemontest.WaitFor(t, "the database socket", func() bool { return daemontest.Exists(sock) })

	committed := func(text string) float64 {
		return metricValue(t, text, `gvs_ovsdb_transactions_total{result="committed"}`)
	}
	size := func(text string) float64 {
		return metricValue(t, text, `gvs_ovsdb_database_size_bytes{database="Open_vSwitch"}`)
	}
	before := scrape(t, addr)
	if c := committed(before); c != 0 {
		t.Errorf("committed transactions before any: %v", c)
	}
	sizeBefore := size(before)
	if st, err := os.Stat(db); err != nil || float64(st.Size()) != sizeBefore {
		t.Errorf("database size metric %v, file %v (%v)", sizeBefore, st.Size(), err)
	}
	metricValue(t, before, "process_resident_memory_bytes")

	transact(t, sock, `{"op":"insert","table":"Open_vSwitch","row":{}}`)
	after := scrape(t, addr)
	if c := committed(after); c != 1 {
		t.Errorf("committed transactions after one: %v", c)
	}
	if s := size(after); s <= sizeBefore {
		t.Errorf("database size %v after a commit, was %v", s, sizeBefore)
	}
	if a := metricValue(t, after, "gvs_ovsdb_connections_accepted_total"); a < 1 {
		t.Errorf("accepted connections %v", a)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("metrics endpoint %s still open after exit", addr)
	}
}

func TestMetricsAddressRefused(t *testing.T) {
	e, db := newEnvWithDB(t)
	r := daemontest.Run(t, e.Command("--metrics-address=nope", db))
	if r.Code != 1 || !regexp.MustCompile(`metrics address must be HOST:PORT`).MatchString(r.Stderr) {
		t.Errorf("--metrics-address=nope: %+v", r)
	}
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %v %s", err, resp.Status)
	}
	return string(body)
}

// metricValue returns the value of the sample named exactly series
// (name{labels}) in Prometheus text.
func metricValue(t *testing.T, text, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no %s in:\n%s", series, text)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// transact commits ops on the Open_vSwitch database over the unix socket.
func transact(t *testing.T, sock, ops string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	m, err := jsonrpc.NewRequest("transact", []json.RawMessage{json.RawMessage(`"Open_vSwitch"`), json.RawMessage(ops)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonrpc.NewWriter(c).Write(m); err != nil {
		t.Fatal(err)
	}
	r := jsonrpc.NewReader(c)
	for {
		reply, err := r.Read()
		if err != nil {
			t.Fatalf("transact: %v", err)
		}
		if reply.IsResponse() {
			if reply.Error != nil && string(reply.Error) != "null" {
				t.Fatalf("transact error: %s", reply.Error)
			}
			if !regexp.MustCompile(`^\[\{"uuid":`).Match(reply.Result) {
				t.Fatalf("transact result: %s", reply.Result)
			}
			return
		}
	}
}
