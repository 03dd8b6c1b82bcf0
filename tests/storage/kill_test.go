package storagetest

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gvs/ovsdb/storage"
)

const killSchema = `{"name":"kill","version":"1.0.0","tables":{"Item":{"columns":{
	"client":{"type":"integer"},"n":{"type":"integer"},"pad":{"type":"string"}}}}}`

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// op is one row change a transaction makes, identified by the row's UUID
// (inserts name their UUID explicitly, so even an unacknowledged insert is
// known).
type op struct {
	uuid   string
	insert bool // false: delete
}

// workload is what the clients did in one round.
type workload struct {
	mu       sync.Mutex
	acked    [][]op // acknowledged transactions, in order per client
	inFlight [][]op // transactions sent without a reply when the server died
}

// runClient commits transactions until the connection breaks: each inserts
// a row and every third also deletes one of this client's earlier rows;
// every other one asks for durability.
func runClient(sock string, id int, live []string, w *workload, rng *mrand.Rand) {
	c, err := dial(sock)
	if err != nil {
		return
	}
	defer c.Close()
	for n := 0; ; n++ {
		uuid := newUUID()
		txn := []op{{uuid, true}}
		ops := []any{map[string]any{"op": "insert", "table": "Item", "uuid": uuid,
			"row": map[string]any{"client": id, "n": n, "pad": strings.Repeat("x", rng.Intn(300))}}}
		if n%3 == 2 && len(live) > 0 {
			victim := live[rng.Intn(len(live))]
			txn = append(txn, op{victim, false})
			ops = append(ops, map[string]any{"op": "delete", "table": "Item",
				"where": []any{[]any{"_uuid", "==", []any{"uuid", victim}}}})
		}
		if n%2 == 1 {
			ops = append(ops, map[string]any{"op": "commit", "durable": true})
		}
		_, err := c.transact("kill", ops...)
		w.mu.Lock()
		if err != nil {
			if errors.Is(err, errConnection) {
				w.inFlight = append(w.inFlight, txn)
			} else {
				panic(err) // a transaction the server refused: a test bug
			}
			w.mu.Unlock()
			return
		}
		w.acked = append(w.acked, txn)
		w.mu.Unlock()
		live = append(live, uuid)
		if len(txn) == 2 {
			for i, u := range live {
				if u == txn[1].uuid {
					live = append(live[:i], live[i+1:]...)
					break
				}
			}
		}
	}
}

// serverRows returns the UUIDs of the Item rows a server holds.
func serverRows(t *testing.T, sock string) map[string]bool {
	t.Helper()
	c, err := dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.transact("kill", map[string]any{"op": "select", "table": "Item", "where": []any{}, "columns": []string{"_uuid"}})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, r := range res[0]["rows"].([]any) {
		rows[r.(map[string]any)["_uuid"].([]any)[1].(string)] = true
	}
	return rows
}

// lastRecordOps returns the row changes of the file's last record and the
// offset where it starts, or ok=false when the file holds no transaction.
func lastRecordOps(t *testing.T, path string) (ops []op, offset int64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, _, err := storage.ReadRecords(f)
	if err != nil {
		t.Fatalf("a SIGKILLed server left a damaged log: %v", err)
	}
	if len(recs) < 2 {
		return nil, 0, false
	}
	last := recs[len(recs)-1]
	var body map[string]map[string]json.RawMessage
	json.Unmarshal(last.Body, &body)
	for uuid, row := range body["Item"] {
		ops = append(ops, op{uuid, string(row) != "null"})
	}
	return ops, last.Offset, true
}

// damage truncates the last record or flips one bit of its body.
func damage(t *testing.T, path string, offset int64, how string, rng *mrand.Rand) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	headerEnd := offset + int64(strings.IndexByte(string(data[offset:]), '\n')) + 1
	switch how {
	case "truncate":
		cut := offset + 1 + rng.Int63n(int64(len(data))-offset-1)
		data = data[:cut]
	case "bitflip":
		i := headerEnd + rng.Int63n(int64(len(data))-headerEnd)
		data[i] ^= 1 << rng.Intn(8)
	}
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
}

// TestKillAtRandomMoments SIGKILLs gvs-ovsdb-server while clients commit,
// many times, and checks after each restart that every acknowledged
// transaction is there (an unacknowledged one may be there or not, but
// whole), that ovsdb-tool reads the file cleanly, and that gvs truncated
// nothing. Some rounds then cut or bit-flip the last record: the restart
// must drop exactly that record, with a warning, and keep all before it.
// Every other round also compacts the database continually, so kills land
// in the middle of compactions too.
func TestKillAtRandomMoments(t *testing.T) {
	needTools(t, ovsdbTool, ovsAppctl)
	rng := mrand.New(mrand.NewSource(time.Now().UnixNano()))
	dir := newDir(t)
	dbFile := filepath.Join(dir, "kill.db")
	os.WriteFile(filepath.Join(dir, "kill.ovsschema"), []byte(killSchema), 0o644)
	run(t, nil, bin.tool, "create", dbFile, filepath.Join(dir, "kill.ovsschema"))

	model := map[string]bool{} // what the database must hold
	rounds := 20
	if testing.Short() {
		rounds = 6
	}
	start := time.Now()
	for round := 0; round < rounds && time.Since(start) < 90*time.Second; round++ {
		how := []string{"clean", "clean", "truncate", "bitflip"}[round%4]
		s := startServer(t, bin.server, dir, dbFile)
		w := &workload{}
		var wg sync.WaitGroup
		var live []string
		for u := range model {
			live = append(live, u)
		}
		sort.Strings(live)
		for id := 0; id < 2; id++ {
			wg.Add(1)
			mine := append([]string(nil), live[id*len(live)/2:(id+1)*len(live)/2]...)
			clientRng := mrand.New(mrand.NewSource(rng.Int63()))
			go func(id int) {
				defer wg.Done()
				runClient(s.sock, round*10+id, mine, w, clientRng)
			}(id)
		}
		// Every other round compacts the database over and over meanwhile,
		// so some kills land in the middle of a compaction.
		stopCompacting := make(chan struct{})
		compactions := 0
		var compactor sync.WaitGroup
		if round%2 == 1 {
			compactor.Add(1)
			go func() {
				defer compactor.Done()
				for {
					select {
					case <-stopCompacting:
						return
					default:
					}
					if _, err := runErr(nil, ovsAppctl, "-t", filepath.Join(dir, "server.ctl"), "ovsdb-server/compact"); err == nil {
						compactions++
					}
				}
			}()
		}
		time.Sleep(time.Duration(20+rng.Intn(250)) * time.Millisecond)
		s.kill()
		close(stopCompacting)
		compactor.Wait()
		wg.Wait()

		// The file a SIGKILL left behind is clean for Open vSwitch's tool.
		run(t, nil, ovsdbTool, "db-cksum", dbFile)
		run(t, nil, ovsdbTool, "show-log", dbFile)
		lastOps, lastOffset, hasTxn := lastRecordOps(t, dbFile)
		if how != "clean" && hasTxn {
			damage(t, dbFile, lastOffset, how, rng)
		} else {
			how = "clean"
		}

		os.Remove(s.log)
		s2 := startServer(t, bin.server, dir, dbFile)
		got := serverRows(t, s2.sock)
		s2.stop(t)
		logText, _ := os.ReadFile(s2.log)
		warned := strings.Contains(string(logText), "truncating")

		expect := map[string]bool{}
		for u, v := range model {
			expect[u] = v
		}
		for _, txn := range w.acked {
			for _, o := range txn {
				expect[o.uuid] = o.insert
			}
		}
		undecided := map[string]bool{}
		if how != "clean" {
			// The damaged record is gone: undo what it did.
			for _, o := range lastOps {
				expect[o.uuid] = !o.insert
				undecided[o.uuid] = false
			}
			if !warned {
				t.Errorf("round %d (%s): no truncation warning in the log:\n%s", round, how, logText)
			}
		} else if warned {
			t.Errorf("round %d: gvs truncated a log a SIGKILL left:\n%s", round, logText)
		}
		// An unacknowledged transaction is all there or not at all.
		for _, txn := range w.inFlight {
			applied := got[txn[0].uuid]
			for _, o := range txn {
				if _, isLast := undecided[o.uuid]; isLast {
					continue
				}
				if got[o.uuid] != (o.insert == applied) {
					t.Errorf("round %d: unacknowledged transaction %v applied in part", round, txn)
				}
				expect[o.uuid] = got[o.uuid]
			}
		}
		for u, want := range expect {
			if got[u] != want {
				t.Fatalf("round %d (%s): row %s present=%v, want %v (acknowledged transactions: %d)", round, how, u, got[u], want, len(w.acked))
			}
		}
		for u := range got {
			if !expect[u] {
				t.Fatalf("round %d (%s): unexpected row %s", round, how, u)
			}
		}
		model = map[string]bool{}
		for u, v := range expect {
			if v {
				model[u] = true
			}
		}
		t.Logf("round %d (%s): %d transactions acknowledged, %d in flight, %d compactions, %d rows",
			round, how, len(w.acked), len(w.inFlight), compactions, len(model))
	}
	// Debian's tool agrees with gvs on the final contents.
	out := run(t, nil, ovsdbTool, "query", dbFile, `["kill",{"op":"select","table":"Item","where":[],"columns":["_uuid"]}]`)
	if n := strings.Count(out, `"_uuid"`); n != len(model) {
		t.Fatalf("ovsdb-tool query sees %d rows, want %d", n, len(model))
	}
}
