package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"gvs/cmd/internal/daemontest"
	"gvs/ovsdb/db"
	"gvs/ovsdb/server"
	"gvs/ovsdb/storage"
	"gvs/schema"
)

func TestMain(m *testing.M) {
	daemontest.MaybeRunMain(main)
	os.Exit(m.Run())
}

// TestServesConfDB starts gvs-vswitchd with nothing but the OVS_*
// variables and checks it creates conf.db, serves db.sock and answers
// ovs-appctl -t ovs-vswitchd.
func TestServesConfDB(t *testing.T) {
	e := daemontest.NewEnv(t)
	pidfile := e.Path("ovs-vswitchd.pid")
	daemontest.KillFromPidfile(t, pidfile)
	if r := daemontest.Run(t, e.Command("--detach", "--pidfile", "--log-file")); r.Code != 0 {
		t.Fatalf("start: %+v", r)
	}
	if !daemontest.Exists(e.Path("db.sock")) {
		t.Fatal("db.sock missing after --detach returned")
	}
	if s, err := storage.ReadSchema(e.Path("conf.db")); err != nil || s.Name != "Open_vSwitch" {
		t.Fatalf("conf.db: %v", err)
	}
	if tool := "/usr/bin/ovsdb-tool"; daemontest.Exists(tool) {
		out, err := exec.Command(tool, "db-version", e.Path("conf.db")).CombinedOutput()
		if err != nil || string(out) != "8.3.1\n" {
			t.Errorf("ovsdb-tool db-version: %v %q", err, out)
		}
	}
	if client := "/usr/bin/ovsdb-client"; daemontest.Exists(client) {
		out, err := exec.Command(client, "--timeout=10", "list-dbs", "unix:"+e.Path("db.sock")).CombinedOutput()
		if err != nil || string(out) != "Open_vSwitch\n_Server\n" {
			t.Errorf("ovsdb-client list-dbs: %v %q", err, out)
		}
	}
	if r := e.Appctl(t, "-t", "ovs-vswitchd", "version"); r.Stdout != "gvs-vswitchd (gvs) 0.1.0\n" {
		t.Errorf("version: %+v", r)
	}
	// Without --no-wait, ovs-vsctl returns only once the switch has
	// copied next_cfg to cur_cfg.
	if vsctl := "/usr/bin/ovs-vsctl"; daemontest.Exists(vsctl) {
		cmd := exec.Command(vsctl, "--timeout=10", "init")
		cmd.Env = append(os.Environ(), e.Vars()...)
		if out, err := cmd.CombinedOutput(); err != nil {
			logText, _ := os.ReadFile(e.Path("ovs-vswitchd.log"))
			t.Errorf("ovs-vsctl init (waiting for cur_cfg): %v %s\n%s", err, out, logText)
		}
	}
	if r := e.Appctl(t, "-t", "ovs-vswitchd", "exit", "--cleanup"); r.Code != 0 {
		t.Errorf("exit: %+v", r)
	}
	daemontest.WaitFor(t, "the pidfile to go", func() bool { return !daemontest.Exists(pidfile) })
}

// TestFollowsDatabaseNamedOnCommandLine gives gvs-vswitchd an external
// server's socket, as ovs-ctl gives ovs-vswitchd ovsdb-server's: it serves
// no database itself and keeps that one's cur_cfg up to date.
func TestFollowsDatabaseNamedOnCommandLine(t *testing.T) {
	const vsctl = "/usr/bin/ovs-vsctl"
	if !daemontest.Exists(vsctl) {
		t.Skip("ovs-vsctl not installed")
	}
	e := daemontest.NewEnv(t)
	sock := e.Path("other.sock")
	sc, err := db.ParseSchema(schema.VSwitch())
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(slog.New(slog.DiscardHandler))
	defer srv.Close()
	if err := srv.AddDatabase(db.New(sc, slog.New(slog.DiscardHandler))); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddRemote("punix:" + sock); err != nil {
		t.Fatal(err)
	}
	cmd := e.Command("unix:" + sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	daemontest.WaitFor(t, "the control socket", func() bool {
		return daemontest.Exists(e.Path(fmt.Sprintf("ovs-vswitchd.%d.ctl", cmd.Process.Pid)))
	})
	if daemontest.Exists(e.Path("db.sock")) || daemontest.Exists(e.Path("conf.db")) {
		t.Error("embedded database started too")
	}
	init := exec.Command(vsctl, "--timeout=10", "--db=unix:"+sock, "init")
	if out, err := init.CombinedOutput(); err != nil {
		t.Errorf("ovs-vsctl init (waiting for cur_cfg): %v %s", err, out)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()

	for _, bad := range [][]string{{"ssl:1.2.3.4:5"}, {"tcp:nowhere"}, {"unix:" + sock, "--remote=ptcp:0"}} {
		if r := daemontest.Run(t, e.Command(bad...)); r.Code != 1 {
			t.Errorf("%v accepted: %+v", bad, r)
		}
	}
}
