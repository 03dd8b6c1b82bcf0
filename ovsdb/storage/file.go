package storage

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"gvs/ovsdb/db"
)

// This file holds what ovsdb-tool-like commands need besides Open: reading
// a database without locking or changing it, and rewriting a file whole.

// ReadSchema returns the schema of the database file at path, reading only
// its first record.
func ReadSchema(path string) (*db.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	records, _, readErr := readRecordsN(f, 1)
	if len(records) == 0 {
		if readErr == nil {
			readErr = fmt.Errorf("unexpected end of file (empty database file?)")
		}
		return nil, fmt.Errorf("%s: %w", path, readErr)
	}
	schema, err := db.ParseSchema(records[0].Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return schema, nil
}

// Load reads the database file at path into memory without locking or
// changing the file, as ovsdb-tool's read-only commands do: a torn or
// corrupt tail, and records from one that cannot be decoded on, are left
// out with a warning.
func Load(path string, logger *slog.Logger) (*db.Database, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	records, _, readErr := ReadRecords(f)
	if len(records) == 0 {
		if readErr == nil {
			readErr = fmt.Errorf("unexpected end of file (empty database file?)")
		}
		return nil, fmt.Errorf("%s: %w", path, readErr)
	}
	if readErr != nil {
		logger.Warn("ignoring corrupt or incomplete tail of database log", "file", path, "reason", readErr)
	}
	schema, err := db.ParseSchema(records[0].Body)
	if err != nil {
		return nil, fmt.Errorf("%s: schema: %w", path, err)
	}
	d := db.New(schema, logger)
	if bad, err := replayRecords(d, records[1:], logger, path); bad >= 0 {
		logger.Warn("ignoring database log from a record that cannot be read", "file", path, "offset", bad, "reason", err)
	}
	return d, nil
}

// Rewrite writes the file at path anew as d's schema and one record holding
// all of d's data with comment (no "_is_diff", as ovsdb-tool compact and
// convert write it), replacing any file there atomically. When path is an
// open database's file its lock must be held by the caller (see
// RewriteInPlace); otherwise Rewrite takes path's lock itself.
func Rewrite(path string, d *db.Database, comment string) error {
	path, err := followSymlinks(path) // a link stays a link
	if err != nil {
		return err
	}
	lock, err := lockFile(path)
	if err != nil {
		return err
	}
	defer lock.release()
	return writeWhole(path, d, comment)
}

// RewriteInPlace loads the database file at path under its lock, lets
// transform turn the loaded database into the one to write (the same
// database to compact, a converted one to convert), and replaces the file
// atomically.
func RewriteInPlace(path string, logger *slog.Logger, comment string, transform func(*db.Database) (*db.Database, error)) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	log, records, err := OpenLog(path, logger)
	if err != nil {
		return err
	}
	defer log.Close()
	d, err := load(log, records, logger)
	if err != nil {
		return err
	}
	if d, err = transform(d); err != nil {
		return err
	}
	body, err := wholeRecord(d, comment)
	if err != nil {
		return err
	}
	return log.Replace([]json.RawMessage{d.Schema().Raw, body})
}

func wholeRecord(d *db.Database, comment string) (json.RawMessage, error) {
	var body json.RawMessage
	var err error
	d.View(func(v db.View) {
		body, err = snapshotRecord(d.Schema(), allRows(d.Schema(), v), comment, time.Now(), false)
	})
	return body, err
}

func writeWhole(path string, d *db.Database, comment string) error {
	body, err := wholeRecord(d, comment)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	os.Remove(tmp)
	if err := CreateLog(tmp, []json.RawMessage{d.Schema().Raw, body}); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}
