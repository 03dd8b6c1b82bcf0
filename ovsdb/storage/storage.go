package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"gvs/ovsdb/db"
)

// Options tune a Storage. The zero value is Open vSwitch's behaviour.
type Options struct {
	// Sync fsyncs every commit's record before the commit is acknowledged
	// (ovsdb-server fsyncs only commits whose transaction asks with
	// "commit" "durable": true, which Storage always honours).
	Sync bool
	// NoColumnDiff writes a modified column's new value rather than its
	// diff, for readers older than Open vSwitch 2.15
	// (ovsdb-server --disable-file-column-diff).
	NoColumnDiff bool
	// Schema, when set, is the schema the database must have: a file with
	// a different schema of the same name is converted to it (data kept
	// where the new schema has room for it, as `ovsdb-tool convert` does)
	// and rewritten atomically, after a copy of the original is saved as
	// FILE.backupVERSION-CKSUM as ovs-ctl's upgrade does. A different name
	// is an error.
	Schema *db.Schema
	// ConvertComment is the "_comment" of the record written by a
	// conversion.
	ConvertComment string
	// Compaction policy; zero values take ovsdb-server's (Open vSwitch
	// 2.10 and later): the log "grew lots" when it is over CompactMinSize
	// (10 MB) and CompactGrowth (2) times its size after the last
	// compaction (or, in a file not compacted since, after its first
	// transaction record); it is then compacted once it holds at least 100
	// records (read and written) and CompactInterval (10 minutes) has
	// passed since the last compaction or opening; after a day, any
	// commit is enough. A file that grew lots is also compacted right after
	// Open, in the background, so a daemon that never lives 10 minutes
	// does not replay an ever longer log at every start.
	CompactMinSize  int64
	CompactGrowth   int64
	CompactInterval time.Duration
}

const (
	defaultCompactMinSize  = 10 << 20
	defaultCompactGrowth   = 2
	defaultCompactInterval = 10 * time.Minute
	compactMinRecords      = 100
	compactMaxInterval     = 24 * time.Hour
)

// Storage is one database kept in a standalone file. See doc.go.
type Storage struct {
	// db and schema are replaced by Convert, with compactMu and mu held:
	// read them holding either.
	db     *db.Database
	schema *db.Schema
	logger *slog.Logger
	opts   Options
	path   string

	// compactMu serialises compactions. Lock order: compactMu, then the
	// database's lock, then mu.
	compactMu sync.Mutex
	wg        sync.WaitGroup // background compactions

	mu             sync.Mutex
	log            *Log
	closing        bool // Close has begun: schedule no more compactions
	closed         bool
	base           int64     // log size to measure growth against
	records        int       // records read and written (as ovsdb-server counts them)
	lastCompaction time.Time // or open
	compacting     bool      // an automatic compaction is scheduled or running
	recording      bool      // a compaction's snapshot is taken: keep appended records
	pending        [][]byte  // encoded records
}

// Create writes a new database file holding only schema (the JSON of a
// database schema), like `ovsdb-tool create`. It fails if path exists.
func Create(path string, schemaJSON []byte) error {
	if _, err := db.ParseSchema(schemaJSON); err != nil {
		return err
	}
	return CreateLog(path, []json.RawMessage{schemaJSON})
}

// Open locks the database file at path, loads it (the schema record, then
// every transaction record replayed in order; a torn or corrupt tail is
// truncated with a warning), converts it when opts.Schema asks, and
// returns it ready to serve: from then on every commit of Database() is
// written to the file before it is acknowledged.
func Open(path string, logger *slog.Logger, opts Options) (*Storage, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	log, records, err := OpenLog(path, logger)
	if err != nil {
		return nil, err
	}
	d, err := load(log, records, logger)
	if err != nil {
		log.Close()
		return nil, err
	}
	base := growthBase(log, records)
	if opts.Schema != nil && !SchemasEqual(d.Schema(), opts.Schema) {
		if d, err = upgrade(log, d, opts, logger); err != nil {
			log.Close()
			return nil, err
		}
		base = log.Size()
	}
	s := &Storage{
		db: d, schema: d.Schema(), logger: logger, opts: opts, path: log.Path(),
		log: log, base: base, records: len(records), lastCompaction: time.Now(),
	}
	if s.opts.CompactMinSize == 0 {
		s.opts.CompactMinSize = defaultCompactMinSize
	}
	if s.opts.CompactGrowth == 0 {
		s.opts.CompactGrowth = defaultCompactGrowth
	}
	if s.opts.CompactInterval == 0 {
		s.opts.CompactInterval = defaultCompactInterval
	}
	d.SetBeforeCommit(s.commitHook(d))
	if s.grewLots() {
		// Open vSwitch would compact this log at its first chance; the
		// replay just paid for it once, the next start need not.
		s.compacting = true
		s.wg.Add(1)
		go s.autoCompact("compacting database log that grew large since its last compaction", s.log.Size())
	}
	return s, nil
}

// growthBase is the size the log's growth is measured against, as
// ovsdb-server marks it: the end of the first record after the schema
// (the snapshot, in a compacted file), or 0 for a file with only a schema.
func growthBase(log *Log, records []Record) int64 {
	switch {
	case len(records) > 2:
		return records[2].Offset
	case len(records) == 2:
		return log.Size()
	}
	return 0
}

// load builds the database from a log's records.
func load(log *Log, records []Record, logger *slog.Logger) (*db.Database, error) {
	schema, err := db.ParseSchema(records[0].Body)
	if err != nil {
		return nil, fmt.Errorf("%s: schema: %w", log.Path(), err)
	}
	d := db.New(schema, logger)
	bad, badErr := replayRecords(d, records[1:], logger, log.Path())
	if bad >= 0 {
		logger.Error(replayErrorText(records, bad, badErr)) // Open vSwitch's line, alone
		logger.Warn("truncating database log at a record that cannot be read",
			"file", log.Path(), "offset", bad, "dropped_bytes", log.Size()-bad, "reason", badErr)
		if err := log.Truncate(bad); err != nil {
			return nil, fmt.Errorf("%s: truncate: %w", log.Path(), err)
		}
	}
	return d, nil
}

// Database is the database the file holds: after Convert, the converted
// one.
func (s *Storage) Database() *db.Database {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.db
}

// Path is the database file's name.
func (s *Storage) Path() string { return s.path }

// commitHook is d's BeforeCommit hook, writeCommit for d.
func (s *Storage) commitHook(d *db.Database) func(*db.Commit) error {
	schema := d.Schema()
	return func(c *db.Commit) error { return s.writeCommit(d, schema, c) }
}

// writeCommit appends the record of c, a commit of d, (fsynced when the
// transaction asked for durability or Options.Sync is set) before the
// commit becomes visible, and schedules a compaction when the log has
// grown enough. Once d has been replaced by Convert, its commits fail: the
// file holds the converted database.
func (s *Storage) writeCommit(d *db.Database, schema *db.Schema, c *db.Commit) error {
	body, ok, err := commitRecord(schema, c, s.opts.NoColumnDiff)
	if err != nil || !ok {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New(s.path + ": database is closed")
	}
	if s.db != d {
		return errors.New(s.path + ": database was converted to a new schema")
	}
	rec := encodeCompact(body) // json.Marshal's output is compact
	if err := s.log.appendRecord(rec, c.Durable || s.opts.Sync); err != nil {
		return err
	}
	s.records++
	if s.recording {
		s.pending = append(s.pending, rec)
	}
	if !s.compacting && !s.closing && s.shouldCompact(time.Now()) {
		s.compacting = true
		s.wg.Add(1)
		go s.autoCompact("compacting database online", s.log.Size())
	}
	return nil
}

// shouldCompact is ovsdb-server's policy (ovsdb_storage_should_snapshot
// with ovsdb_log_grew_lots). Called with mu held.
func (s *Storage) shouldCompact(now time.Time) bool {
	if now.Before(s.lastCompaction.Add(s.opts.CompactInterval)) {
		return false
	}
	if now.After(s.lastCompaction.Add(compactMaxInterval)) {
		return s.records > 0
	}
	return s.grewLots()
}

// grewLots is the size part of ovsdb-server's policy: enough records, and
// a log both large and much larger than after the last compaction
// (ovsdb_log_grew_lots). Called with mu held, or before s is shared.
func (s *Storage) grewLots() bool {
	size := s.log.Size()
	return s.records >= compactMinRecords && size > s.opts.CompactMinSize && size > s.opts.CompactGrowth*s.base
}

func (s *Storage) autoCompact(why string, size int64) {
	defer s.wg.Done()
	s.logger.Info(why, "file", s.path, "bytes", size)
	err := s.compact()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compacting = false
	if err != nil {
		s.logger.Error("compaction failed", "file", s.path, "error", err)
		// As ovsdb-server does after a failed snapshot, try again after a
		// tenth of the interval, not at every commit (each attempt writes
		// the whole database, which a full disk would refuse every time).
		s.lastCompaction = time.Now().Add(-s.opts.CompactInterval + s.opts.CompactInterval/10)
	}
}

// Compact rewrites the file as the schema and one record holding the whole
// database, atomically, while commits go on. It is the
// ovsdb-server/compact control command.
func (s *Storage) Compact() error { return s.compact() }

// compact snapshots the database under the read lock (cheap: committed
// rows are immutable, so the snapshot is a list of pointers), writes the
// new file without any lock, then, holding only the log's mutex, copies
// in the records committed meanwhile and swaps the files.
func (s *Storage) compact() error {
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	var rows map[string][]*db.Row
	closed := false
	s.db.View(func(v db.View) {
		rows = allRows(s.schema, v)
		s.mu.Lock()
		closed = s.closed
		s.recording = true
		s.pending = nil
		s.mu.Unlock()
	})
	if closed {
		return errors.New(s.path + ": database is closed")
	}
	now := time.Now()
	body, err := snapshotRecord(s.schema, rows, "compacting database online", now, true)
	var r *Replacement
	if err == nil {
		r, err = s.log.StartReplace([]json.RawMessage{s.schema.Raw, body})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pending := s.pending
	s.recording, s.pending = false, nil
	if err != nil {
		return err
	}
	if s.closed {
		r.Abort()
		return errors.New(s.path + ": database is closed")
	}
	for _, rec := range pending {
		if err := r.appendRecord(rec); err != nil {
			r.Abort()
			return fmt.Errorf("%s: compaction: %w", s.path, err)
		}
	}
	if err := s.log.CommitReplace(r); err != nil {
		return err
	}
	s.base = s.log.Size()
	s.lastCompaction = now
	return nil
}

// Close stops writing: it waits for a running compaction, makes later
// commits of the database fail with an "I/O error" (callers close the
// server first), and releases the file and its lock.
func (s *Storage) Close() error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	s.mu.Unlock()
	s.wg.Wait()        // an automatic compaction completes
	s.compactMu.Lock() // and so does a requested one
	defer s.compactMu.Unlock()
	s.db.SetBeforeCommit(s.refuseCommit)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.log.Close()
}

func (s *Storage) refuseCommit(*db.Commit) error {
	return errors.New(s.path + ": database is closed")
}
