package bridge

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

const debianVswitchd = "/usr/sbin/ovs-vswitchd"

// Open vSwitch's PARSE_LISTENING_PORT pattern (tests/ofproto-macros.at).
var parseListeningPortRE = regexp.MustCompile(`(?m)^.*0:.*: listening on port ([0-9]*)$`)

// An OpenFlow "ptcp:0:127.0.0.1" controller is logged by gvs-vswitchd as
// by Debian's ovs-vswitchd ("socket_util|INFO|0:127.0.0.1: listening on
// port N", the port read with Open vSwitch's own pattern), and the port
// read so answers OpenFlow; a given port is not logged. Each switch runs
// in a namespace of its own (its br0 tap device lives there) on a
// database served by Debian's ovsdb-server.
func TestVswitchdListenerLogLine(t *testing.T) {
	requireEnv(t, debianVswitchd, debianServer, toolPath, appctlPath, "/usr/bin/ovs-ofctl")
	type outcome struct{ lines []string }
	var got [2]outcome
	for i, impl := range []struct{ name, binary string }{{"debian", debianVswitchd}, {"gvs", bins.vswitchd}} {
		ns := fmt.Sprintf("gvsll%d-%d", i, os.Getpid()%100000)
		run(t, ipPath, "netns", "add", ns)
		t.Cleanup(func() { exec.Command(ipPath, "netns", "del", ns).Run() })
		run(t, ipPath, "netns", "exec", ns, ipPath, "link", "set", "lo", "up")

		dir := t.TempDir()
		startExternal(t, dir, debianServer)
		t.Cleanup(func() { stopPidfile(t, filepath.Join(dir, "ovsdb-server.pid")) })
		db := "--db=unix:" + filepath.Join(dir, "db.sock")
		run(t, vsctlPath, db, "--no-wait", "init")
		run(t, vsctlPath, db, "--no-wait", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
			"--", "set-controller", "br0", "ptcp:0:127.0.0.1", "ptcp:16653:127.0.0.1")

		logFile := filepath.Join(dir, "ovs-vswitchd.log")
		pidfile := filepath.Join(dir, "ovs-vswitchd.pid")
		cmd := exec.Command(ipPath, "netns", "exec", ns, impl.binary, "unix:"+filepath.Join(dir, "db.sock"),
			"--pidfile="+pidfile, "--unixctl="+filepath.Join(dir, "ovs-vswitchd.ctl"), "--log-file="+logFile,
			"--detach", "--no-chdir", "-vconsole:off")
		cmd.Env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", impl.name, err, out)
		}
		t.Cleanup(func() {
			exec.Command(appctlPath, "-t", filepath.Join(dir, "ovs-vswitchd.ctl"), "exit", "--cleanup").Run()
			stopPidfile(t, pidfile)
			if t.Failed() {
				b, _ := os.ReadFile(logFile)
				t.Logf("%s ovs-vswitchd.log:\n%s", impl.name, b)
			}
		})

		var port string
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, _ := os.ReadFile(logFile)
			if m := parseListeningPortRE.FindSubmatch(b); m != nil {
				port = string(m[1])
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no listening line in its log", impl.name)
			}
			time.Sleep(20 * time.Millisecond)
		}
		// The port answers OpenFlow, inside the switch's namespace.
		out, err := exec.Command(ipPath, "netns", "exec", ns, "/usr/bin/ovs-ofctl", "--timeout=5", "show", "tcp:127.0.0.1:"+port).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "OFPT_FEATURES_REPLY") {
			t.Errorf("%s: ovs-ofctl show tcp:127.0.0.1:%s: %v\n%s", impl.name, port, err, out)
		}
		b, _ := os.ReadFile(logFile)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "|socket_util|") {
				l = regexp.MustCompile(`^[^|]*\|[0-9]+\|`).ReplaceAllString(l, "")
				l = regexp.MustCompile(`port [0-9]+$`).ReplaceAllString(l, "port N")
				got[i].lines = append(got[i].lines, l)
			}
		}
		sort.Strings(got[i].lines)
	}
	if fmt.Sprint(got[0].lines) != fmt.Sprint(got[1].lines) {
		t.Errorf("socket_util lines differ:\ndebian: %q\ngvs:    %q", got[0].lines, got[1].lines)
	}
}
