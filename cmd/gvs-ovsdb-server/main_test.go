package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"gvs/cmd/internal/daemontest"
	"gvs/ovsdb/storage"
	"gvs/schema"
)

func TestMain(m *testing.M) {
	daemontest.MaybeRunMain(main)
	os.Exit(m.Run())
}

func newEnvWithDB(t *testing.T) (*daemontest.Env, string) {
	e := daemontest.NewEnv(t)
	db := e.Path("conf.db")
	if err := storage.Create(db, schema.VSwitch()); err != nil {
		t.Fatal(err)
	}
	return e, db
}

// TestDetachedDaemonWithAppctl starts the server the way scripts do and
// drives it with the real ovs-appctl.
func TestDetachedDaemonWithAppctl(t *testing.T) {
	e, db := newEnvWithDB(t)
	pidfile := e.Path("ovsdb-server.pid")
	daemontest.KillFromPidfile(t, pidfile)
	sock := e.Path("db.sock")
	r := daemontest.Run(t, e.Command("--detach", "--pidfile", "--log-file",
		"--remote=punix:"+sock, "--remote=ptcp:0:127.0.0.1", db))
	if r.Code != 0 {
		t.Fatalf("start: %+v", r)
	}
	// --detach returns only once the daemon serves.
	for _, path := range []string{pidfile, sock} {
		if !daemontest.Exists(path) {
			t.Fatalf("%s missing right after --detach returned", path)
		}
	}
	content, _ := os.ReadFile(pidfile)
	pid := strings.TrimSpace(string(content))
	if !daemontest.Exists(e.Path("ovsdb-server." + pid + ".ctl")) {
		t.Fatalf("control socket ovsdb-server.%s.ctl missing", pid)
	}

	appctl := func(args ...string) daemontest.Result {
		return e.Appctl(t, append([]string{"-t", "ovsdb-server"}, args...)...)
	}
	if r := appctl("version"); r.Stdout != "gvs-ovsdb-server (gvs) 0.1.0\n" || r.Code != 0 {
		t.Errorf("version: %+v", r)
	}
	if r := appctl("ovsdb-server/list-dbs"); r.Stdout != "Open_vSwitch\n_Server\n" {
		t.Errorf("list-dbs: %+v", r)
	}
	remotes := fmt.Sprintf("ptcp:0:127.0.0.1\npunix:%s\n", sock)
	if r := appctl("ovsdb-server/list-remotes"); r.Stdout != remotes {
		t.Errorf("list-remotes: %+v", r)
	}
	extra := "punix:" + e.Path("b.sock")
	if r := appctl("ovsdb-server/add-remote", extra); r.Code != 0 || !daemontest.Exists(e.Path("b.sock")) {
		t.Errorf("add-remote: %+v", r)
	}
	if r := appctl("ovsdb-server/remove-remote", extra); r.Code != 0 {
		t.Errorf("remove-remote: %+v", r)
	}
	if r := appctl("ovsdb-server/remove-remote", extra); r.Code != 2 || !strings.HasPrefix(r.Stderr, "no such remote\n") {
		t.Errorf("second remove-remote: %+v", r)
	}

	// ptcp:0 reports its port in the log, and serves there.
	logText, _ := os.ReadFile(e.Path("ovsdb-server.log"))
	m := regexp.MustCompile(`listening on port (\d+)`).FindSubmatch(logText)
	if m == nil {
		t.Fatalf("no \"listening on port\" in the log:\n%s", logText)
	}
	c, err := net.Dial("tcp", "127.0.0.1:"+string(m[1]))
	if err != nil {
		t.Errorf("ptcp:0 port %s: %v", m[1], err)
	} else {
		c.Close()
	}
	if client := "/usr/bin/ovsdb-client"; daemontest.Exists(client) {
		out, err := exec.Command(client, "--timeout=10", "list-dbs", "unix:"+sock).CombinedOutput()
		if err != nil || string(out) != "Open_vSwitch\n_Server\n" {
			t.Errorf("ovsdb-client list-dbs: %v %q", err, out)
		}
	}

	// A second instance must not take over.
	r = daemontest.Run(t, e.Command("--detach", "--pidfile", "--remote=punix:"+sock, db))
	if r.Code != 1 || !strings.Contains(r.Stderr, "already running as pid "+pid) {
		t.Errorf("second instance: %+v", r)
	}

	if r := appctl("exit"); r.Code != 0 {
		t.Errorf("exit: %+v", r)
	}
	daemontest.WaitFor(t, "the daemon to remove its pidfile", func() bool { return !daemontest.Exists(pidfile) })
	daemontest.WaitFor(t, "the daemon to exit", func() bool {
		return syscall.Kill(atoi(pid), 0) != nil
	})
	if daemontest.Exists(e.Path("ovsdb-server." + pid + ".ctl")) {
		t.Error("control socket left behind")
	}
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

func TestMissingDatabaseFailsLikeOVS(t *testing.T) {
	e := daemontest.NewEnv(t)
	for _, args := range [][]string{{"nope.db"}, {"--detach", "nope.db"}} {
		r := daemontest.Run(t, e.Command(args...))
		want := "I/O error: " + e.Path("nope.db") + ": open failed (No such file or directory)"
		if r.Code != 1 || !strings.Contains(r.Stderr, want) {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if r := daemontest.Run(t, e.Command("--bogus")); r.Code != 1 || !strings.Contains(r.Stderr, "unrecognized option '--bogus'") {
		t.Errorf("--bogus: %+v", r)
	}
}

// TestTerminatedBySignal checks the foreground daemon cleans up and dies of
// SIGTERM, as Open vSwitch's daemons do.
func TestTerminatedBySignal(t *testing.T) {
	e, db := newEnvWithDB(t)
	pidfile := e.Path("ovsdb-server.pid")
	cmd := e.Command("--pidfile", "--remote=punix:"+e.Path("db.sock"), db)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	daemontest.WaitFor(t, "the pidfile", func() bool { return daemontest.Exists(pidfile) })
	daemontest.WaitFor(t, "the control socket", func() bool {
		return daemontest.Exists(e.Path(fmt.Sprintf("ovsdb-server.%d.ctl", cmd.Process.Pid)))
	})
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("exit: %v", err)
	}
	if daemontest.Exists(pidfile) || daemontest.Exists(e.Path("db.sock")) {
		t.Error("pidfile or socket left behind")
	}
}
