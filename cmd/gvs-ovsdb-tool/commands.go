package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"gvs/cmd/internal/daemon"
	"gvs/ovsdb/db"
	"gvs/ovsdb/storage"
	"gvs/schema"
)

type command struct {
	min, max int
	run      func(t *tool, args []string) error
}

var commands = map[string]command{
	"create":           {0, 2, (*tool).create},
	"compact":          {0, 2, (*tool).compact},
	"convert":          {0, 3, (*tool).convert},
	"needs-conversion": {0, 2, (*tool).needsConversion},
	"db-name":          {0, 1, dbField(func(s *db.Schema) string { return s.Name })},
	"db-version":       {0, 1, dbField(func(s *db.Schema) string { return s.Version })},
	"db-cksum":         {0, 1, dbField(func(s *db.Schema) string { return s.Cksum })},
	"db-is-standalone": {1, 1, isStandalone(true)},
	"db-is-clustered":  {1, 1, isStandalone(false)},
	"schema-name":      {0, 1, schemaField(func(s *db.Schema) string { return s.Name })},
	"schema-version":   {0, 1, schemaField(func(s *db.Schema) string { return s.Version })},
	"schema-cksum":     {0, 1, schemaField(func(s *db.Schema) string { return s.Cksum })},
	"query":            {1, 2, (*tool).query},
	"transact":         {1, 2, (*tool).transact},
	"show-log":         {0, 1, (*tool).showLog},
}

// ioError words a failed system call as Open vSwitch does:
// "I/O error: FILE: open failed (No such file or directory)".
func ioError(err error, what string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		var errno syscall.Errno
		text := pe.Err.Error()
		if errors.As(pe.Err, &errno) {
			text = errno.Error()
		}
		if text != "" {
			text = strings.ToUpper(text[:1]) + text[1:]
		}
		return fmt.Errorf("I/O error: %s: %s failed (%s)", pe.Path, what, text)
	}
	return err
}

// readSchemaFile reads a schema file. The default schema file, when Open
// vSwitch is not installed, is gvs's embedded copy of the same schema.
func (t *tool) readSchemaFile(path string) (*db.Schema, []byte, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && path == t.schemaDef {
		raw, err = schema.VSwitch(), nil
	}
	if err != nil {
		return nil, nil, ioError(err, "open")
	}
	s, err := db.ParseSchema(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, raw, nil
}

func (t *tool) create(args []string) error {
	path := arg(args, 0, t.dbDefault)
	_, raw, err := t.readSchemaFile(arg(args, 1, t.schemaDef))
	if err != nil {
		return err
	}
	if err := storage.Create(path, raw); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) && errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("I/O error: %s: create failed (File exists)", path)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return createLockFailure(path, syscall.ENOENT)
		}
		return ioError(err, "create")
	}
	return nil
}

func (t *tool) compact(args []string) error {
	src := arg(args, 0, t.dbDefault)
	comment := "compacted by " + program + " " + daemon.Version
	if len(args) < 2 {
		return ioError(storage.RewriteInPlace(src, nil, comment, func(d *db.Database) (*db.Database, error) { return d, nil }), "open")
	}
	d, err := storage.Load(src, nil)
	if err != nil {
		return ioError(err, "open")
	}
	return storage.Rewrite(args[1], d, comment)
}

func (t *tool) convert(args []string) error {
	src := arg(args, 0, t.dbDefault)
	target, _, err := t.readSchemaFile(arg(args, 1, t.schemaDef))
	if err != nil {
		return err
	}
	comment := "converted by " + program + " " + daemon.Version
	convert := func(d *db.Database) (*db.Database, error) { return storage.Convert(d, target, nil) }
	if len(args) < 3 {
		return ioError(storage.RewriteInPlace(src, nil, comment, convert), "open")
	}
	d, err := storage.Load(src, nil)
	if err != nil {
		return ioError(err, "open")
	}
	if d, err = convert(d); err != nil {
		return err
	}
	return storage.Rewrite(args[2], d, comment)
}

func (t *tool) needsConversion(args []string) error {
	current, err := storage.ReadSchema(arg(args, 0, t.dbDefault))
	if err != nil {
		return ioError(err, "open")
	}
	target, _, err := t.readSchemaFile(arg(args, 1, t.schemaDef))
	if err != nil {
		return err
	}
	answer := "yes"
	if storage.SchemasEqual(current, target) {
		answer = "no"
	}
	fmt.Fprintln(t.stdout, answer)
	return nil
}

func dbField(field func(*db.Schema) string) func(*tool, []string) error {
	return func(t *tool, args []string) error {
		s, err := storage.ReadSchema(arg(args, 0, t.dbDefault))
		if err != nil {
			return ioError(err, "open")
		}
		fmt.Fprintln(t.stdout, field(s))
		return nil
	}
}

func schemaField(field func(*db.Schema) string) func(*tool, []string) error {
	return func(t *tool, args []string) error {
		s, _, err := t.readSchemaFile(arg(args, 0, t.schemaDef))
		if err != nil {
			return err
		}
		fmt.Fprintln(t.stdout, field(s))
		return nil
	}
}

// isStandalone exits 0 when the file's first record is (want) or is not
// (!want) a standalone database record, 2 otherwise.
func isStandalone(want bool) func(*tool, []string) error {
	return func(t *tool, args []string) error {
		_, err := storage.ReadSchema(args[0])
		if errors.Is(err, storage.ErrNotStandalone) {
			if want {
				return exitError{2}
			}
			return nil
		}
		if err != nil {
			return ioError(err, "open")
		}
		if !want {
			return exitError{2}
		}
		return nil
	}
}

// transaction parses TRNS: ["DB-NAME", op...].
func transaction(text string, d *db.Database) ([]json.RawMessage, error) {
	var params []json.RawMessage
	if err := json.Unmarshal([]byte(text), &params); err != nil || len(params) == 0 {
		return nil, fmt.Errorf("\"%s\": syntax error: transaction must be a JSON array beginning with the database name", text)
	}
	var name string
	if err := json.Unmarshal(params[0], &name); err != nil || name != d.Schema().Name {
		return nil, fmt.Errorf("\"%s\": unknown database (this one is %s)", params[0], d.Schema().Name)
	}
	return params[1:], nil
}

func (t *tool) printResult(r db.TxnResult) error {
	out, err := json.Marshal(r.Results)
	if err != nil {
		return err
	}
	fmt.Fprintln(t.stdout, string(out))
	return nil
}

func (t *tool) query(args []string) error {
	path := t.dbDefault
	if len(args) == 2 {
		path = args[0]
	}
	d, err := storage.Load(path, nil)
	if err != nil {
		return ioError(err, "open")
	}
	ops, err := transaction(args[len(args)-1], d)
	if err != nil {
		return err
	}
	// A read-only copy: whatever the transaction changes is discarded.
	return t.printResult(d.Transact(ops, db.TxnEnv{}))
}

func (t *tool) transact(args []string) error {
	path := t.dbDefault
	if len(args) == 2 {
		path = args[0]
	}
	s, err := storage.Open(path, nil, storage.Options{})
	if err != nil {
		return ioError(err, "open")
	}
	defer s.Close()
	ops, err := transaction(args[len(args)-1], s.Database())
	if err != nil {
		return err
	}
	return t.printResult(s.Database().Transact(ops, db.TxnEnv{}))
}
