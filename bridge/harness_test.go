package bridge_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gvs/bridge"
	"gvs/bridge/bridgetest"
	"gvs/metrics/source"
	"gvs/ovsdb/db"
	"gvs/ovsdb/server"
	"gvs/schema"
)

const vsctlPath = "/usr/bin/ovs-vsctl"

// env is a real in-process OVSDB server on a unix socket, the fake
// datapath, and a reconciler between them.
type env struct {
	t    testing.TB
	sock string
	// remote is what the reconciler connects to; "" means unix:sock.
	remote string
	db     *db.Database
	srv    *server.Server
	dp     *bridgetest.Datapath
	// datapath, when set, is what the reconciler drives instead of dp
	// (a wrapper of dp adding OpenFlow); the OpenFlow sockets then go
	// beside the database's.
	datapath bridge.Datapath
	log      *slog.Logger

	logMu   *sync.Mutex
	logText *strings.Builder

	cancel  context.CancelFunc
	done    sync.WaitGroup
	rec     *bridge.Reconciler
	metrics *source.Reconciler // the reconciler's passes
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvLogging(t, slog.LevelDebug)
}

// newEnvLogging is newEnv logging from level up (benchmarks log less).
func newEnvLogging(t testing.TB, level slog.Level) *env {
	t.Helper()
	if _, err := os.Stat(vsctlPath); err != nil {
		t.Skip("ovs-vsctl not installed: " + err.Error())
	}
	sc, err := db.ParseSchema(schema.VSwitch())
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "gvs-bridge-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	e := &env{
		t:       t,
		sock:    filepath.Join(dir, "db.sock"),
		dp:      bridgetest.New(),
		logMu:   &sync.Mutex{},
		logText: &strings.Builder{},
		metrics: source.NewReconciler(),
	}
	e.log = slog.New(slog.NewTextHandler(testWriter{t, e.logMu, e.logText}, &slog.HandlerOptions{Level: level}))
	e.db = db.New(sc, e.log)
	e.startServer()
	t.Cleanup(func() {
		e.stopReconciler()
		if e.srv != nil {
			e.srv.Close()
		}
	})
	e.vsctl("--no-wait", "init")
	return e
}

func (e *env) startServer() {
	e.srv = server.New(e.log.With("module", "ovsdb_server"))
	if err := e.srv.AddDatabase(e.db); err != nil {
		e.t.Fatal(err)
	}
	if err := e.srv.AddRemote("punix:" + e.sock); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) stopServer() {
	e.srv.Close()
	e.srv = nil
}

func (e *env) startReconciler() {
	e.t.Helper()
	remote := e.remote
	if remote == "" {
		remote = "unix:" + e.sock
	}
	var dp bridge.Datapath = e.dp
	rundir := ""
	if e.datapath != nil {
		dp, rundir = e.datapath, filepath.Dir(e.sock)
	}
	r, err := bridge.New(bridge.Config{
		Remote:           remote,
		Datapath:         dp,
		RunDir:           rundir,
		Logger:           e.log.With("module", "bridge"),
		OVSVersion:       "3.1.0",
		MinStatsInterval: 100 * time.Millisecond,
		MinBackoff:       20 * time.Millisecond,
		MaxBackoff:       200 * time.Millisecond,
		Metrics:          e.metrics,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.dp.SetLinkListener(r.PortsChanged) // as dpadapter's link events do
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.rec = cancel, r
	e.done.Add(1)
	go func() {
		defer e.done.Done()
		r.Run(ctx)
	}()
}

func (e *env) stopReconciler() {
	if e.cancel != nil {
		e.cancel()
		e.done.Wait()
		e.cancel = nil
	}
}

// vsctl runs the real ovs-vsctl against the server; without --no-wait it
// returns only once the reconciler has set cur_cfg.
func (e *env) vsctl(args ...string) string {
	e.t.Helper()
	out, err := e.vsctlErr(args...)
	if err != nil {
		e.t.Fatalf("ovs-vsctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (e *env) vsctlErr(args ...string) (string, error) {
	full := append([]string{"--db=unix:" + e.sock, "--timeout=20"}, args...)
	cmd := exec.Command(vsctlPath, full...)
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+filepath.Dir(e.sock))
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// get reads one column with ovs-vsctl get, trimmed.
func (e *env) get(table, record, column string) string {
	e.t.Helper()
	return e.vsctl("--no-wait", "get", table, record, column)
}

// eventually polls cond for up to 10 s.
// recordCommits records the database's commits from now until the test
// ends; the function it returns gives those recorded so far.
func (e *env) recordCommits() func() []*db.Commit {
	var mu sync.Mutex
	var commits []*db.Commit
	e.t.Cleanup(e.db.Subscribe(func(c *db.Commit) {
		mu.Lock()
		commits = append(commits, c)
		mu.Unlock()
	}))
	return func() []*db.Commit {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(commits)
	}
}

func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testWriter logs to the test and keeps the text for assertions.
type testWriter struct {
	t    testing.TB
	mu   *sync.Mutex
	text *strings.Builder
}

func (w testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.text.Write(p)
	w.mu.Unlock()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// logged reports whether the log so far contains s.
func (e *env) logged(s string) bool {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	return strings.Contains(e.logText.String(), s)
}
