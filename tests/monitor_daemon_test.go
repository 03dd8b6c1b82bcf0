package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// monitored is a server started with --detach --monitor.
type monitored struct {
	dir, pidfile, log, sock string
}

func startMonitored(t *testing.T, kind serverKind) *monitored {
	t.Helper()
	dir, err := os.MkdirTemp("", "gvs")
	if err != nil {
		t.Fatal(err)
	}
	m := &monitored{dir: dir, pidfile: filepath.Join(dir, "p.pid"), log: filepath.Join(dir, "log"), sock: filepath.Join(dir, "db.sock")}
	db := filepath.Join(dir, "conf.db")
	if out, err := exec.Command(toolPath, "create", db, vswitchSchema).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		// Monitor first, so it restarts nothing, then its daemon.
		if pid := m.pid(); pid > 0 {
			if ppid := parentOf(pid); ppid > 1 {
				syscall.Kill(ppid, syscall.SIGKILL)
			}
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if t.Failed() {
			b, _ := os.ReadFile(m.log)
			t.Logf("%s log:\n%s", kind.name, b)
		}
		os.RemoveAll(dir)
	})
	cmd := exec.Command(kind.binary, db, "--remote=punix:"+m.sock, "--detach", "--monitor", "--no-chdir",
		"--pidfile="+m.pidfile, "--log-file="+m.log, "--unixctl="+filepath.Join(dir, "ctl"))
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s --detach --monitor: %v\n%s", kind.name, err, out)
	}
	return m
}

func (m *monitored) pid() int {
	b, _ := os.ReadFile(m.pidfile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// parentOf reads a process's parent pid from /proc; 0 when it is gone.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// monitorLines are the log lines of the monitor, without time and
// sequence number, pids replaced.
func (m *monitored) monitorLines(pids ...int) []string {
	b, _ := os.ReadFile(m.log)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.SplitN(line, "|", 3); len(f) == 3 && strings.HasPrefix(f[2], "daemon_unix(monitor)|") {
			text := f[2]
			for i, pid := range pids {
				text = strings.ReplaceAll(text, fmt.Sprintf("pid %d ", pid), fmt.Sprintf("pid P%d ", i+1))
			}
			out = append(out, text)
		}
	}
	return out
}

// --monitor restarts the daemon after a crash: kill -SEGV brings a new
// process, with the same pidfile, that serves the database; a clean exit
// (ovs-appctl exit) and SIGTERM end the monitor too. Debian's
// ovsdb-server and ours run the same steps; the monitor's log lines are
// compared.
func TestMonitorRestartsAfterCrash(t *testing.T) {
	ref, ours := sides(t, clientPath)
	var lines [2][]string
	for i, kind := range []serverKind{ref, ours} {
		for _, end := range []string{"exit", "SIGTERM"} {
			m := startMonitored(t, kind)
			p1 := m.pid()
			monitor := parentOf(p1)
			if p1 == 0 || monitor <= 1 {
				t.Fatalf("%s: daemon pid %d, monitor %d", kind.name, p1, monitor)
			}
			syscall.Kill(p1, syscall.SIGSEGV)
			var p2 int
			if !waitFor(15*time.Second, func() bool {
				p2 = m.pid()
				return p2 != 0 && p2 != p1 && exec.Command(clientPath, "--timeout=2", "list-dbs", "unix:"+m.sock).Run() == nil
			}) {
				t.Fatalf("%s: no new daemon serving after SIGSEGV (pid %d, was %d)", kind.name, p2, p1)
			}
			if parentOf(p2) != monitor {
				t.Errorf("%s: new daemon %d is not the monitor's (%d) child", kind.name, p2, monitor)
			}
			if end == "exit" {
				if out, err := exec.Command(appctlPath, "--timeout=5", "-t", filepath.Join(m.dir, "ctl"), "exit").CombinedOutput(); err != nil {
					t.Errorf("%s: exit: %v %s", kind.name, err, out)
				}
			} else {
				syscall.Kill(p2, syscall.SIGTERM)
			}
			if !waitFor(5*time.Second, func() bool { return !alive(monitor) && !alive(p2) }) {
				t.Errorf("%s: after %s the monitor (%v) or daemon (%v) lives on", kind.name, end, alive(monitor), alive(p2))
			}
			if daemonExists := m.pid(); daemonExists != 0 {
				t.Errorf("%s: pidfile left after %s: %d", kind.name, end, daemonExists)
			}
			lines[i] = append(lines[i], m.monitorLines(p1, p2)...)
		}
	}
	if len(lines[1]) != 4 { // a restart and an exit, twice
		t.Errorf("ours: monitor log lines:\n%s", strings.Join(lines[1], "\n"))
	}
	if strings.Join(lines[0], "\n") != strings.Join(lines[1], "\n") {
		t.Errorf("monitor log lines differ:\ndebian:\n%s\nours:\n%s", strings.Join(lines[0], "\n"), strings.Join(lines[1], "\n"))
	}
}
