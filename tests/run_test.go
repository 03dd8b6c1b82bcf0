package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// --run=COMMAND makes a transient server: COMMAND runs once the server
// serves, and the server exits when it ends, 0 if it succeeded, otherwise
// 1 with "COMMAND: child exited, STATUS". Debian's ovsdb-server and ours
// run the same commands; the program name before the message differs.
func TestRunCommand(t *testing.T) {
	ref, ours := sides(t, clientPath)
	dir, err := os.MkdirTemp("", "gvs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "conf.db")
	if out, err := exec.Command(toolPath, "create", db, vswitchSchema).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "db.sock")
	commands := []string{
		clientPath + " --timeout=5 list-dbs unix:" + sock + " && " + vsctlPath + " --db=unix:" + sock + " --timeout=5 --no-wait init",
		"exit 3",
		"kill -TERM $$",
	}
	for _, c := range commands {
		var got [2]string
		for i, kind := range []serverKind{ref, ours} {
			logFile := filepath.Join(dir, kind.name+".log")
			cmd := exec.Command(kind.binary, db, "--remote=punix:"+sock, "--unixctl="+filepath.Join(dir, "ctl"), "-vconsole:off", "--log-file="+logFile, "--run="+c)
			cmd.Dir, cmd.Env = dir, append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			msg := stderr.String()
			if i := strings.Index(msg, ": "); i >= 0 && strings.HasSuffix(msg[:i], "ovsdb-server") {
				msg = msg[i+2:] // "ovsdb-server: " or "gvs-ovsdb-server: "
			}
			// A transient server does not log its version.
			if b, _ := os.ReadFile(logFile); strings.Contains(string(b), "|ovsdb_server|INFO|") && strings.Contains(string(b), kind.binary[strings.LastIndexByte(kind.binary, '/')+1:]) {
				t.Errorf("%s --run logged its version:\n%s", kind.name, b)
			}
			os.Remove(logFile)
			got[i] = stdout.String() + "|exit " + strconv.Itoa(exitStatus(cmd.ProcessState)) + "|" + msg
		}
		if got[0] != got[1] {
			t.Errorf("--run=%q:\ndebian: %q\nours:   %q", c, got[0], got[1])
		}
	}
}
