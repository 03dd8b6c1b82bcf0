package unixctl

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	appctlBin       = "/usr/bin/ovs-appctl"
	ovsdbServerBin  = "/usr/sbin/ovsdb-server"
	ovsdbToolBin    = "/usr/bin/ovsdb-tool"
	installedSchema = "/usr/share/openvswitch/vswitch.ovsschema"
)

type appctlRun struct {
	stdout, stderr string
	exitCode       int
}

// appctl runs the real ovs-appctl against the socket at target. The target
// path in stderr is replaced by TARGET so runs against different sockets
// compare equal.
func appctl(t *testing.T, target string, args ...string) appctlRun {
	t.Helper()
	cmd := exec.Command(appctlBin, append([]string{"--timeout=10", "-t", target}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return appctlRun{stdout.String(), strings.ReplaceAll(stderr.String(), target, "TARGET"), code}
}

func needBinaries(t *testing.T, bins ...string) {
	t.Helper()
	for _, b := range bins {
		if _, err := os.Stat(b); err != nil {
			t.Skipf("%s not installed", b)
		}
	}
}

func TestWithRealAppctl(t *testing.T) {
	needBinaries(t, appctlBin)
	s, path := startServer(t)
	s.Register("echo", "WORD...", 1, 3, func(args []string) (string, error) {
		return strings.Join(args, " ") + "\n", nil
	})
	if r := appctl(t, path, "version"); r != (appctlRun{"test-daemon (gvs) 9.9.9\n", "", 0}) {
		t.Errorf("version: %+v", r)
	}
	want := "The available commands are:\n" +
		"  echo                    WORD...\n" +
		"  list-commands           \n" +
		"  version                 \n"
	if r := appctl(t, path, "list-commands"); r != (appctlRun{want, "", 0}) {
		t.Errorf("list-commands: %+v", r)
	}
	if r := appctl(t, path, "echo", "a", "b c"); r != (appctlRun{"a b c\n", "", 0}) {
		t.Errorf("echo: %+v", r)
	}
	r := appctl(t, path, "no-such-command")
	wantErr := `"no-such-command" is not a valid command (use "list-commands" to see a list of valid commands)`
	if r.exitCode != 2 || !strings.HasPrefix(r.stderr, wantErr) || r.stdout != "" {
		t.Errorf("unknown command: %+v", r)
	}
}

// TestSameAsOpenVSwitch runs the same failing commands against the real
// ovsdb-server's control socket and ours, and wants identical output and
// exit codes from ovs-appctl.
func TestSameAsOpenVSwitch(t *testing.T) {
	needBinaries(t, appctlBin, ovsdbServerBin, ovsdbToolBin, installedSchema)
	dir := t.TempDir()
	db := filepath.Join(dir, "conf.db")
	if out, err := exec.Command(ovsdbToolBin, "create", db, installedSchema).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create: %v\n%s", err, out)
	}
	realCtl := filepath.Join(dir, "real.ctl")
	real := exec.Command(ovsdbServerBin, "--no-chdir", "--unixctl="+realCtl, "-vconsole:off", db)
	if err := real.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		real.Process.Kill()
		real.Wait()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(realCtl); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("real ovsdb-server did not create its control socket")
		}
		time.Sleep(20 * time.Millisecond)
	}

	s, ours := startServer(t)
	// The same shape as ovsdb-server's command, to compare argument
	// count errors.
	s.Register("ovsdb-server/add-remote", "REMOTE", 1, 1, func([]string) (string, error) { return "", nil })

	for _, args := range [][]string{
		{"no-such-command"},
		{"no-such-command", "with", "args"},
		{"version", "extra"},
		{"list-commands", "a", "b"},
		{"ovsdb-server/add-remote"},
		{"ovsdb-server/add-remote", "a", "b"},
	} {
		want := appctl(t, realCtl, args...)
		got := appctl(t, ours, args...)
		if got != want {
			t.Errorf("%v:\n got  %+v\n want %+v", args, got, want)
		}
		if want.exitCode == 0 {
			t.Errorf("%v: expected a failure from Open vSwitch", args)
		}
	}
}
