package server

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const vswitchSchemaPath = "/usr/share/openvswitch/vswitch.ovsschema"

// vswitchServer serves an empty Open_vSwitch database on a unix socket.
func vswitchServer(t *testing.T) (*Server, string) {
	t.Helper()
	schemaJSON, err := os.ReadFile(vswitchSchemaPath)
	if err != nil {
		t.Skipf("no vswitch schema: %v", err)
	}
	srv := New(testLogger(t))
	t.Cleanup(func() { srv.Close() })
	if err := srv.AddDatabase(newTestDB(t, string(schemaJSON))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "db.sock")
	if err := srv.AddRemote("punix:" + path); err != nil {
		t.Fatal(err)
	}
	return srv, path
}

func needBinary(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not installed", path)
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+t.TempDir(), "OVS_LOGDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestOvsVsctl(t *testing.T) {
	needBinary(t, "/usr/bin/ovs-vsctl")
	_, path := vswitchServer(t)
	db := "--db=unix:" + path
	run(t, "/usr/bin/ovs-vsctl", db, "--no-wait", "init")
	run(t, "/usr/bin/ovs-vsctl", db, "--no-wait", "add-br", "br0")
	run(t, "/usr/bin/ovs-vsctl", db, "--no-wait", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=internal")
	run(t, "/usr/bin/ovs-vsctl", db, "--no-wait", "set", "bridge", "br0", "other_config:hello=world")
	if out := run(t, "/usr/bin/ovs-vsctl", db, "list-br"); out != "br0\n" {
		t.Fatalf("list-br: %q", out)
	}
	if out := run(t, "/usr/bin/ovs-vsctl", db, "list-ports", "br0"); out != "p1\n" {
		t.Fatalf("list-ports: %q", out)
	}
	if out := run(t, "/usr/bin/ovs-vsctl", db, "get", "bridge", "br0", "other_config:hello"); strings.TrimSpace(out) != "world" {
		t.Fatalf("get: %q", out)
	}
	run(t, "/usr/bin/ovs-vsctl", db, "--no-wait", "del-br", "br0")
	if out := run(t, "/usr/bin/ovs-vsctl", db, "list-br"); out != "" {
		t.Fatalf("list-br after del-br: %q", out)
	}
}

func TestOvsdbClient(t *testing.T) {
	needBinary(t, "/usr/bin/ovsdb-client")
	needBinary(t, "/usr/bin/ovs-vsctl")
	_, path := vswitchServer(t)
	remote := "unix:" + path
	if out := run(t, "/usr/bin/ovsdb-client", "list-dbs", remote); out != "Open_vSwitch\n_Server\n" {
		t.Fatalf("list-dbs: %q", out)
	}
	if out := run(t, "/usr/bin/ovsdb-client", "get-schema-version", remote, "Open_vSwitch"); strings.TrimSpace(out) == "" {
		t.Fatal("no schema version")
	}
	run(t, "/usr/bin/ovsdb-client", "wait", remote, "Open_vSwitch", "connected")
	run(t, "/usr/bin/ovs-vsctl", "--db="+remote, "--no-wait", "init")
	run(t, "/usr/bin/ovs-vsctl", "--db="+remote, "--no-wait", "add-br", "br-initial")
	if out := run(t, "/usr/bin/ovsdb-client", "dump", remote, "Open_vSwitch", "Bridge"); !strings.Contains(out, "Bridge table") || !strings.Contains(out, "br-initial") {
		t.Fatalf("dump: %q", out)
	}

	for _, method := range []string{"monitor", "monitor-cond", "monitor-cond-since"} {
		args := []string{method, remote, "Open_vSwitch"}
		switch method {
		case "monitor-cond":
			args = append(args, `[["name","!=","nope"]]`)
		case "monitor-cond-since":
			args = append(args, "00000000-0000-0000-0000-000000000000", `[true]`)
		}
		args = append(args, "Bridge", "name")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, "/usr/bin/ovsdb-client", args...)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Wait for the initial contents, then make a change.
		waitLine := func(want string) bool {
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						return false
					}
					if strings.Contains(l, want) {
						return true
					}
				case <-ctx.Done():
					return false
				}
			}
		}
		if !waitLine("br-initial") {
			t.Fatalf("%s: initial contents not printed", method)
		}
		br := "br-" + strings.ReplaceAll(method, "-", "")
		run(t, "/usr/bin/ovs-vsctl", "--db="+remote, "--no-wait", "add-br", br)
		if !waitLine(br) {
			t.Fatalf("%s: update for %s not printed", method, br)
		}
		cmd.Process.Kill()
		cmd.Wait()
		cancel()
	}
}

const pythonIDL = `
import sys
import ovs.db.idl, ovs.poller
helper = ovs.db.idl.SchemaHelper(location=sys.argv[2])
helper.register_all()
idl = ovs.db.idl.Idl(sys.argv[1], helper)
def wait_for(pred):
    for _ in range(1000):
        idl.run()
        if pred():
            return
        poller = ovs.poller.Poller()
        idl.wait(poller)
        poller.timer_wait(100)
        poller.block()
    sys.exit("timed out")
wait_for(lambda: idl.has_ever_connected() and len(idl.tables["Open_vSwitch"].rows) == 1)
print("bridges", sorted(b.name for b in idl.tables["Bridge"].rows.values()))
txn = ovs.db.idl.Transaction(idl)
ovsrow = next(iter(idl.tables["Open_vSwitch"].rows.values()))
ovsrow.external_ids = {"from": "python"}
status = txn.commit_block()
print("commit", status == ovs.db.idl.Transaction.SUCCESS)
wait_for(lambda: ovsrow.external_ids.get("from") == "python")
print("seen", ovsrow.external_ids["from"])
`

func TestPythonIDL(t *testing.T) {
	needBinary(t, "/usr/bin/python3")
	needBinary(t, "/usr/bin/ovs-vsctl")
	if err := exec.Command("/usr/bin/python3", "-c", "import ovs.db.idl").Run(); err != nil {
		t.Skip("python3-openvswitch not installed")
	}
	_, path := vswitchServer(t)
	remote := "unix:" + path
	run(t, "/usr/bin/ovs-vsctl", "--db="+remote, "--no-wait", "init")
	run(t, "/usr/bin/ovs-vsctl", "--db="+remote, "--no-wait", "add-br", "brpy")
	out := run(t, "/usr/bin/python3", "-c", pythonIDL, remote, vswitchSchemaPath)
	if !strings.Contains(out, "bridges ['brpy']") || !strings.Contains(out, "commit True") || !strings.Contains(out, "seen python") {
		t.Fatalf("python IDL output:\n%s", out)
	}
	if got := run(t, "/usr/bin/ovs-vsctl", "--db="+remote, "get", "Open_vSwitch", ".", "external_ids:from"); strings.TrimSpace(got) != `python` {
		t.Fatalf("external_ids:from = %q", got)
	}
}

func TestOvsdbClientLockSteal(t *testing.T) {
	needBinary(t, "/usr/bin/ovsdb-client")
	srv, path := vswitchServer(t)
	_ = srv
	remote := "unix:" + path
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	holder := exec.CommandContext(ctx, "/usr/bin/ovsdb-client", "lock", remote, "L")
	var holderOut syncBuffer
	holder.Stdout = &holderOut
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the holder owns the lock.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(holderOut.String(), `{"locked":true}`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("lock holder output %q", holderOut.String())
		}
	}
	stealer := exec.CommandContext(ctx, "/usr/bin/ovsdb-client", "steal", remote, "L")
	var stealerOut syncBuffer
	stealer.Stdout = &stealerOut
	if err := stealer.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(holderOut.String(), "stolen"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("holder not told of the steal: %q", holderOut.String())
		}
	}
	holder.Process.Kill()
	holder.Wait()
	// As with ovsdb-server, the owner hears "locked" when a waiter leaves.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stealerOut.String(), "locked\n[\"L\"]"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stealer output %q", stealerOut.String())
		}
	}
	stealer.Process.Kill()
	stealer.Wait()
	if !strings.HasPrefix(stealerOut.String(), `{"locked":true}`) {
		t.Fatalf("stealer output %q", stealerOut.String())
	}
}

// syncBuffer is a strings.Builder safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
