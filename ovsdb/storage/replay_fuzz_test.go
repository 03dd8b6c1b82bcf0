package storage

import (
	"encoding/json"
	"math/rand"
	"os"
	"testing"
	"time"

	"gvs/ovsdb/db"
)

// FuzzReplay feeds arbitrary record bodies to the replay path on top of a
// populated database: decoding and Replay must reject what does not fit
// the schema with an error, never panic, and leave a database that still
// commits and reloads.
func FuzzReplay(f *testing.F) {
	path := create(f, richSchema)
	s := open(f, path, Options{})
	randomWorkload(f, s.Database(), rand.New(rand.NewSource(3)), 60)
	s.Close()
	file, err := os.Open(path)
	if err != nil {
		f.Fatal(err)
	}
	records, _, _ := ReadRecords(file)
	file.Close()
	for _, r := range records[1:] {
		f.Add([]byte(r.Body))
	}
	f.Add([]byte(`{"Root":{"00000000-0000-0000-0000-000000000001":{"nums":["set",[1,2,3,4,5,6]]}},"_is_diff":true}`))
	f.Add([]byte(`{"Root":{"00000000-0000-0000-0000-000000000001":{"kids":["uuid","00000000-0000-0000-0000-000000000002"],"weak":7}}}`))
	f.Add([]byte(`{"Kid":{"00000000-0000-0000-0000-000000000001":null}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		schema, _ := db.ParseSchema([]byte(richSchema))
		d := db.New(schema, nil)
		if bad, _ := replayRecords(d, records[1:], quietLogger(), "seed"); bad >= 0 {
			t.Fatal("seed records do not replay")
		}
		if !json.Valid(body) {
			return
		}
		changes, err := decodeTransaction(d, body)
		if err == nil && d.Replay(changes) == nil {
			// Whatever was accepted must survive a snapshot and reload.
			var snap json.RawMessage
			d.View(func(v db.View) {
				snap, err = snapshotRecord(schema, allRows(schema, v), "fuzz", time.Now(), true)
			})
			if err != nil {
				t.Fatal(err)
			}
			again := db.New(schema, nil)
			if bad, err := replayRecords(again, []Record{{Body: snap}}, quietLogger(), "snapshot"); bad >= 0 {
				t.Fatalf("snapshot of an accepted state does not load: %v", err)
			}
			if dump(again) != dump(d) {
				t.Fatalf("snapshot reloads differently:\n%s\nwant\n%s", dump(again), dump(d))
			}
		}
		r := d.Transact([]json.RawMessage{json.RawMessage(`{"op":"insert","table":"Root","row":{"name":"after fuzz"}}`)}, db.TxnEnv{})
		if r.Commit == nil {
			out, _ := json.Marshal(r.Results)
			t.Fatalf("database no longer commits: %s", out)
		}
	})
}
