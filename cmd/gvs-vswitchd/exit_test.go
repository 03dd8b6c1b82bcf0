package main

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"gvs/cmd/internal/daemontest"
)

// TestExitKeepsTapsCleanupRemovesThem: a plain "exit" leaves the bridge's
// internal port (a tap device) in the kernel, as ovs-vswitchd leaves its
// taps; started again, gvs-vswitchd takes it back, and "exit --cleanup"
// removes it.
func TestExitKeepsTapsCleanupRemovesThem(t *testing.T) {
	const vsctl = "/usr/bin/ovs-vsctl"
	if !daemontest.Exists(vsctl) {
		t.Skip("ovs-vsctl not installed")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for tap devices")
	}
	br := fmt.Sprintf("gvx%d", os.Getpid()%100000)
	t.Cleanup(func() { exec.Command("ip", "link", "del", br).Run() })
	e := daemontest.NewEnv(t)
	pidfile := e.Path("ovs-vswitchd.pid")
	start := func() {
		t.Helper()
		daemontest.KillFromPidfile(t, pidfile)
		if r := daemontest.Run(t, e.Command("--detach", "--pidfile", "--log-file")); r.Code != 0 {
			t.Fatalf("start: %+v", r)
		}
	}
	vs := func(args ...string) {
		t.Helper()
		cmd := exec.Command(vsctl, append([]string{"--timeout=10"}, args...)...)
		cmd.Env = append(os.Environ(), e.Vars()...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ovs-vsctl %v: %v %s", args, err, out)
		}
	}
	tapExists := func() bool { return daemontest.Exists("/sys/class/net/" + br) }
	start()
	vs("init")
	vs("add-br", br)
	if !tapExists() {
		t.Fatalf("%s not created", br)
	}
	if r := e.Appctl(t, "-t", "ovs-vswitchd", "exit"); r.Code != 0 {
		t.Fatalf("exit: %+v", r)
	}
	daemontest.WaitFor(t, "the pidfile to go", func() bool { return !daemontest.Exists(pidfile) })
	if !tapExists() {
		t.Fatalf("plain exit removed %s", br)
	}
	start()
	vs("set", "bridge", br, "other_config:forward-bpdu=false") // a pass with the bridge in place
	if r := e.Appctl(t, "-t", "ovs-vswitchd", "exit", "--cleanup"); r.Code != 0 {
		t.Fatalf("exit --cleanup: %+v", r)
	}
	daemontest.WaitFor(t, "the pidfile to go", func() bool { return !daemontest.Exists(pidfile) })
	daemontest.WaitFor(t, br+" to go", func() bool { return !tapExists() })
}
