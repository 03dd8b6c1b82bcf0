// Package ovsref starts Debian's ovsdb-server and ovs-vswitchd as the
// reference the side-by-side tests compare gvs with: from a private
// temporary directory, reached through unix sockets only, never the
// packaged service, killed and removed when the test ends. It is for
// tests only.
package ovsref

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Schema is the Open_vSwitch schema Debian's openvswitch-common ships.
const Schema = "/usr/share/openvswitch/vswitch.ovsschema"

// Daemons are a running ovsdb-server and ovs-vswitchd.
type Daemons struct {
	// Dir holds the database, sockets, pidfiles and logs.
	Dir string
	// Env points the Open vSwitch tools at Dir (OVS_RUNDIR and friends).
	Env []string
	// Ctl is ovs-vswitchd's control socket, for ovs-appctl -t.
	Ctl string
}

// Start runs ovsdb-server on a new database and ovs-vswitchd with
// enableDummy (e.g. "--enable-dummy" or "--enable-dummy=override"),
// --disable-system and --disable-system-route. prefix names the
// temporary directory: keep it short, unix socket paths have 108 bytes.
// The test is skipped when a Debian tool or the schema is missing.
func Start(t testing.TB, prefix, enableDummy string) *Daemons {
	t.Helper()
	for _, bin := range []string{"ovs-vswitchd", "ovsdb-server", "ovsdb-tool", "ovs-appctl", "ovs-vsctl", "ovs-ofctl"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed", bin)
		}
	}
	if _, err := os.Stat(Schema); err != nil {
		t.Skip("no vswitch schema")
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemons{Dir: dir, Env: append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_LOGDIR="+dir, "OVS_DBDIR="+dir, "OVS_SYSCONFDIR="+dir)}
	t.Cleanup(func() {
		kill(filepath.Join(dir, "ovs-vswitchd.pid"))
		kill(filepath.Join(dir, "ovsdb-server.pid"))
		time.Sleep(50 * time.Millisecond)
		os.RemoveAll(dir)
	})
	d.Run(t, "ovsdb-tool", "create", "conf.db", Schema)
	d.Run(t, "ovsdb-server", "--detach", "--no-chdir", "--pidfile="+dir+"/ovsdb-server.pid", "--log-file="+dir+"/ovsdb.log",
		"--remote=punix:"+dir+"/db.sock", "conf.db")
	d.Run(t, "ovs-vswitchd", enableDummy, "--disable-system", "--disable-system-route", "--detach", "--no-chdir",
		"--pidfile="+dir+"/ovs-vswitchd.pid", "--log-file="+dir+"/vswitchd.log", "unix:"+dir+"/db.sock")
	b, err := os.ReadFile(filepath.Join(dir, "ovs-vswitchd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	d.Ctl = filepath.Join(dir, "ovs-vswitchd."+strings.TrimSpace(string(b))+".ctl")
	return d
}

// Run runs an Open vSwitch tool in Dir with Env and fails the test,
// showing ovs-vswitchd's log, when it fails.
func (d *Daemons) Run(t testing.TB, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = d.Dir, d.Env
	if out, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(d.Dir, "vswitchd.log"))
		t.Fatalf("%s %v: %v\n%s\nlog:\n%s", name, args, err, out, log)
	}
}

// kill ends the process a pidfile names, if any.
func kill(pidfile string) {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
}
