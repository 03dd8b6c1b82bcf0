package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"gvs/cmd/internal/daemontest"
	"gvs/cmd/internal/dbfile"
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
	raw, hasData, err := dbfile.ReadSchema(e.Path("conf.db"))
	if err != nil || hasData || !strings.Contains(string(raw), `"name":"Open_vSwitch"`) {
		t.Fatalf("conf.db: %v %v", err, hasData)
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
	logText, _ := os.ReadFile(e.Path("ovs-vswitchd.log"))
	if !strings.Contains(string(logText), "no datapath yet") {
		t.Errorf("log does not say the datapath is missing:\n%s", logText)
	}
	if r := e.Appctl(t, "-t", "ovs-vswitchd", "exit", "--cleanup"); r.Code != 0 {
		t.Errorf("exit: %+v", r)
	}
	daemontest.WaitFor(t, "the pidfile to go", func() bool { return !daemontest.Exists(pidfile) })
}

func TestServesSocketNamedOnCommandLine(t *testing.T) {
	e := daemontest.NewEnv(t)
	sock := e.Path("other.sock")
	cmd := e.Command("unix:" + sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	daemontest.WaitFor(t, sock, func() bool { return daemontest.Exists(sock) })
	daemontest.WaitFor(t, "the control socket", func() bool {
		return daemontest.Exists(e.Path(fmt.Sprintf("ovs-vswitchd.%d.ctl", cmd.Process.Pid)))
	})
	if daemontest.Exists(e.Path("db.sock")) {
		t.Error("default db.sock created too")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()

	if r := daemontest.Run(t, e.Command("tcp:1.2.3.4:5")); r.Code != 1 {
		t.Errorf("non-unix database operand accepted: %+v", r)
	}
}
