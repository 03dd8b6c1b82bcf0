package storagetest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gvs/ovsdb/db"
	"gvs/ovsdb/storage"
)

// appctlResult is what ovs-appctl printed and its exit code, with the
// control socket's path replaced by CTL so daemons can be compared.
type appctlResult struct {
	stdout, stderr string
	code           int
}

func appctl(t *testing.T, s *server, args ...string) appctlResult {
	t.Helper()
	ctl := filepath.Join(s.dir, "server.ctl")
	cmd := exec.Command(ovsAppctl, append([]string{"--timeout=20", "-t", ctl}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := appctlResult{stdout: stdout.String(), stderr: strings.ReplaceAll(stderr.String(), ctl, "CTL")}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ovs-appctl %v: %v", args, err)
	}
	return r
}

// churn commits n transactions that each rewrite one external_ids key of
// the Open_vSwitch row (created first if there is none), so the log grows
// while the database does not.
func churn(t *testing.T, s *server, n int) {
	t.Helper()
	c, err := dial(s.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.transact("Open_vSwitch", map[string]any{"op": "select", "table": "Open_vSwitch", "where": []any{}, "columns": []string{"_uuid"}})
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := res[0]["rows"].([]any); len(rows) == 0 {
		if _, err := c.transact("Open_vSwitch", map[string]any{"op": "insert", "table": "Open_vSwitch", "row": map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if _, err := c.transact("Open_vSwitch", map[string]any{"op": "mutate", "table": "Open_vSwitch", "where": []any{},
			"mutations": []any{
				[]any{"external_ids", "delete", []any{"set", []any{"churn"}}},
				[]any{"external_ids", "insert", []any{"map", []any{[]any{"churn", fmt.Sprintf("value %d %s", i, strings.Repeat("z", 100))}}}},
			}}); err != nil {
			t.Fatal(err)
		}
	}
}

// dumpColumn is `ovsdb-client dump` of one table's columns: what a test
// wrote, leaving out what gvs-vswitchd's switch writes on its own.
func dumpColumn(t *testing.T, s *server, table string, columns ...string) string {
	t.Helper()
	return run(t, nil, ovsdbClient, append([]string{"--timeout=20", "dump", "unix:" + s.sock, "Open_vSwitch", table}, columns...)...)
}

func showLog(t *testing.T, path string) string {
	t.Helper()
	return run(t, nil, ovsdbTool, "show-log", path)
}

// `ovs-appctl ovsdb-server/compact` on gvs-ovsdb-server and on
// gvs-vswitchd's embedded database compacts the file with its contents
// intact, and answers every form of the command (no argument, the
// database's name, an unknown name, a built-in database, too many
// arguments) with the same output and exit code as Debian's ovsdb-server.
func TestCompactCommand(t *testing.T) {
	needTools(t, debianServer, ovsdbTool, ovsdbClient, ovsAppctl, vswitchSchema)
	calls := [][]string{{}, {"Open_vSwitch"}, {"nosuch"}, {"_Server"}, {"a", "b"}}
	var want []appctlResult
	for _, daemon := range []string{"debian", "gvs-ovsdb-server", "gvs-vswitchd"} {
		t.Run(daemon, func(t *testing.T) {
			dir := newDir(t)
			dbFile := filepath.Join(dir, "conf.db")
			var s *server
			if daemon == "gvs-vswitchd" {
				s = startVswitchd(t, dir, dir)
			} else {
				run(t, nil, ovsdbTool, "create", dbFile, vswitchSchema)
				binary := map[string]string{"debian": debianServer, "gvs-ovsdb-server": bin.server}[daemon]
				s = startServer(t, binary, dir, dbFile)
			}
			churn(t, s, 150)
			before := dumpColumn(t, s, "Open_vSwitch", "external_ids")
			st, _ := os.Stat(dbFile)
			grown := st.Size()

			var got []appctlResult
			for _, args := range calls {
				got = append(got, appctl(t, s, append([]string{"ovsdb-server/compact"}, args...)...))
			}
			if daemon == "debian" {
				want = got
			} else if want != nil {
				for i := range calls {
					if got[i] != want[i] {
						t.Errorf("ovsdb-server/compact %v: got %+v, Debian's ovsdb-server %+v", calls[i], got[i], want[i])
					}
				}
			}
			if got[0].code != 0 || got[1].code != 0 || got[2].code != 2 || !strings.HasPrefix(got[2].stderr, "no database by that name\n") {
				t.Errorf("replies %+v", got)
			}
			st, _ = os.Stat(dbFile)
			if st.Size() >= grown/2 {
				t.Errorf("file is %d bytes after compaction, was %d", st.Size(), grown)
			}
			if out := showLog(t, dbFile); !startsWithSnapshot(out) {
				t.Errorf("show-log after compaction:\n%s", out)
			}
			if after := dumpColumn(t, s, "Open_vSwitch", "external_ids"); after != before {
				t.Errorf("dump after compaction:\n%s\nbefore:\n%s", after, before)
			}
			s.stop(t)
			// What the compacted file holds is what a restarted server serves.
			if daemon == "gvs-vswitchd" {
				s = startVswitchd(t, dir, dir)
			} else {
				s = startServer(t, bin.server, dir, dbFile)
			}
			if after := dumpColumn(t, s, "Open_vSwitch", "external_ids"); after != before {
				t.Errorf("dump after restart:\n%s\nbefore:\n%s", after, before)
			}
			s.stop(t)
		})
	}
}

// makeLargeLog writes an Open_vSwitch database file whose log is at least
// size bytes. With ports, a bridge of that many ports, then ports added
// and deleted one at a time, with the next_cfg/cur_cfg and ofport writes
// that go with each change (what a host that churns containers leaves;
// statistics and link state are ephemeral and never logged). Without, one
// external_ids key of the Open_vSwitch row rewritten again and again with
// a large value (nothing a switch acts on). It uses the storage package
// directly, which is much faster than a server.
func makeLargeLog(tb testing.TB, path string, size int64, ports int) {
	tb.Helper()
	schemaJSON, err := os.ReadFile(vswitchSchema)
	if err != nil {
		tb.Fatal(err)
	}
	if err := storage.Create(path, schemaJSON); err != nil {
		tb.Fatal(err)
	}
	s, err := storage.Open(path, nil, storage.Options{CompactInterval: 24 * time.Hour})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	d := s.Database()
	transact := func(ops ...string) {
		raw := make([]json.RawMessage, len(ops))
		for i, op := range ops {
			raw[i] = json.RawMessage(op)
		}
		r := d.Transact(raw, db.TxnEnv{})
		if r.Commit == nil {
			out, _ := json.Marshal(r.Results)
			tb.Fatalf("generating a large log: %s", out)
		}
	}
	// addPort adds a port whose row has UUID port.
	addPort := func(name, port string, ofport int) []string {
		return []string{
			fmt.Sprintf(`{"op":"insert","table":"Interface","uuid-name":"i%s","row":{"name":"%s","type":"system","ofport":%d,"external_ids":["map",[["iface-id","vif-%s"],["attached-mac","02:00:00:00:00:01"]]]}}`, name, name, ofport, name),
			fmt.Sprintf(`{"op":"insert","table":"Port","uuid":"%s","row":{"name":"%s","interfaces":["named-uuid","i%s"]}}`, port, name, name),
			fmt.Sprintf(`{"op":"mutate","table":"Bridge","where":[["name","==","br0"]],"mutations":[["ports","insert",["set",[["uuid","%s"]]]]]}`, port),
		}
	}
	const nextCfg = `{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["next_cfg","+=",1]]}`
	const curCfg = `{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["cur_cfg","+=",1]]}`
	if ports == 0 {
		transact(`{"op":"insert","table":"Open_vSwitch","row":{}}`)
	} else {
		ops := []string{`{"op":"insert","table":"Bridge","uuid-name":"br","row":{"name":"br0"}}`,
			`{"op":"insert","table":"Open_vSwitch","row":{"bridges":["named-uuid","br"]}}`}
		transact(ops...)
		for i := 0; i < ports; i++ {
			transact(addPort(fmt.Sprintf("p%d", i), newUUID(), i+1)...)
		}
	}
	last := int64(-1)
	for round := 0; ; round++ {
		st, err := os.Stat(path)
		if err != nil {
			tb.Fatal(err)
		}
		if st.Size() >= size {
			return
		}
		if st.Size() == last {
			tb.Fatal("generating a large log: a round wrote nothing")
		}
		last = st.Size()
		if ports == 0 {
			transact(fmt.Sprintf(`{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["external_ids","delete",["set",["churn"]]],["external_ids","insert",["map",[["churn","round %d %s"]]]]]}`,
				round, strings.Repeat("z", 4000)))
			continue
		}
		// Add a port, the switch's write-back, delete it (garbage
		// collection removes its rows), the write-back.
		name, port := fmt.Sprintf("c%d", round), newUUID()
		transact(append(addPort(name, port, -1), nextCfg)...)
		transact(curCfg, fmt.Sprintf(`{"op":"update","table":"Interface","where":[["name","==","%s"]],"row":{"ofport":%d}}`, name, ports+1+round%1000))
		transact(nextCfg, fmt.Sprintf(`{"op":"mutate","table":"Bridge","where":[["name","==","br0"]],"mutations":[["ports","delete",["set",[["uuid","%s"]]]]]}`, port))
		transact(curCfg)
	}
}

// startsWithSnapshot reports whether `ovsdb-tool show-log` output shows
// a compacted file: the schema, then a snapshot written by an online
// compaction (and whatever was committed since).
func startsWithSnapshot(showLog string) bool {
	_, rest, ok := strings.Cut(showLog, "\nrecord 1:")
	first, _, _ := strings.Cut(rest, "\n")
	return ok && strings.Contains(first, `"compacting database online"`)
}

// waitCompacted waits until the database file at path starts with the
// schema and a snapshot (commits made since may follow: gvs-vswitchd's
// switch writes as it starts), and returns how long that took.
func waitCompacted(t *testing.T, path string) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < 60*time.Second {
		if out, err := runErr(nil, ovsdbTool, "show-log", path); err == nil && startsWithSnapshot(out) {
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s was not compacted within 60 s", path)
	return 0
}

// A log that grew past Open vSwitch's threshold (over 10 MB, twice its
// size after its first transaction, 100 records) is compacted when
// gvs-ovsdb-server or gvs-vswitchd starts on it, in the background: the
// contents are those Debian's ovsdb-server serves from the original file,
// and a restart reads the small file.
func TestLargeLogIsCompactedAtStart(t *testing.T) {
	needTools(t, debianServer, ovsdbTool, ovsdbClient, ovsAppctl, vswitchSchema)
	base := newDir(t)
	original := filepath.Join(base, "large.db")
	makeLargeLog(t, original, 11<<20, 0)
	large, _ := os.Stat(original)

	refDir := newDir(t)
	refFile := filepath.Join(refDir, "conf.db")
	copyTo(t, original, refFile)
	ref := startServer(t, debianServer, refDir, refFile)
	want := dumpColumn(t, ref, "Open_vSwitch", "external_ids")
	ref.stop(t)

	for _, daemon := range []string{"gvs-ovsdb-server", "gvs-vswitchd"} {
		t.Run(daemon, func(t *testing.T) {
			dir := newDir(t)
			dbFile := filepath.Join(dir, "conf.db")
			copyTo(t, original, dbFile)
			start := func() *server {
				if daemon == "gvs-vswitchd" {
					return startVswitchd(t, dir, dir)
				}
				return startServer(t, bin.server, dir, dbFile)
			}
			s := start()
			took := waitCompacted(t, dbFile)
			st, _ := os.Stat(dbFile)
			t.Logf("compacted from %d to %d bytes %v after serving", large.Size(), st.Size(), took)
			if st.Size() > 1<<20 {
				t.Errorf("file is %d bytes after compaction", st.Size())
			}
			if got := dumpColumn(t, s, "Open_vSwitch", "external_ids"); got != want {
				t.Errorf("served after compaction:\n%s\nDebian's ovsdb-server served:\n%s", got, want)
			}
			logText, _ := os.ReadFile(s.log)
			if !strings.Contains(string(logText), "compacting database log that grew large") {
				t.Errorf("no compaction in the log:\n%s", logText)
			}
			s.kill() // as a crash would
			s = start()
			if got := dumpColumn(t, s, "Open_vSwitch", "external_ids"); got != want {
				t.Errorf("served after a restart:\n%s\nwant:\n%s", got, want)
			}
			s.stop(t)
		})
	}
}
