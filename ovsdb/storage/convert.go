package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"gvs/ovsdb/db"
)

// SchemasEqual reports whether two schemas are the same once parsed, as
// ovsdb_schema_equal compares them (through their normalised JSON): name,
// version, checksum, and every table's columns (types, ephemeral,
// mutable), maxRows, isRoot and indexes. Formatting and member order do
// not matter. `needs-conversion` answers "no" exactly when this is true.
func SchemasEqual(a, b *db.Schema) bool {
	return reflect.DeepEqual(schemaShape(a), schemaShape(b))
}

type columnShape struct {
	Type      db.ColumnType
	Ephemeral bool
	Mutable   bool
}

type tableShape struct {
	Columns map[string]columnShape
	MaxRows int
	IsRoot  bool
	Indexes [][]string
}

func schemaShape(s *db.Schema) any {
	tables := map[string]tableShape{}
	for name, t := range s.Tables {
		ts := tableShape{Columns: map[string]columnShape{}, MaxRows: t.MaxRows, IsRoot: t.IsRoot}
		for _, c := range t.Columns {
			ts.Columns[c.Name] = columnShape{c.Type, c.Ephemeral, c.Mutable}
		}
		for _, idx := range t.Indexes {
			names := make([]string, len(idx))
			for i, c := range idx {
				names[i] = c.Name
			}
			ts.Indexes = append(ts.Indexes, names)
		}
		sort.Slice(ts.Indexes, func(i, j int) bool { return fmt.Sprint(ts.Indexes[i]) < fmt.Sprint(ts.Indexes[j]) })
		tables[name] = ts
	}
	return []any{s.Name, s.Version, s.Cksum, tables}
}

// Convert copies the data of src into a new database with schema to, as
// ovsdb_convert does: tables and columns that to lacks are dropped, new
// columns take their defaults, values of columns whose type changed are
// converted through their JSON form (an error if they no longer fit). The
// result then passes the commit-time checks of to (references, garbage
// collection of rows no root row refers to any more, indexes).
func Convert(src *db.Database, to *db.Schema, logger *slog.Logger) (*db.Database, error) {
	var dst *db.Database
	var err error
	src.View(func(v db.View) { dst, err = convertView(v, src.Schema(), to, logger) })
	return dst, err
}

// convertView is Convert of the state v shows, which has schema from.
func convertView(v db.View, from, to *db.Schema, logger *slog.Logger) (*db.Database, error) {
	if from.Name != to.Name {
		return nil, fmt.Errorf("database name %s does not match schema name %s", from.Name, to.Name)
	}
	changes := map[string]map[db.UUID]*db.Row{}
	for name, newTable := range to.Tables {
		oldTable := from.Tables[name]
		if oldTable == nil {
			continue
		}
		rows := map[db.UUID]*db.Row{}
		var err error
		v.Rows(name, func(old *db.Row) bool {
			var row *db.Row
			row, err = convertRow(old, oldTable, newTable)
			rows[old.UUID] = row
			return err == nil
		})
		if err != nil {
			return nil, err
		}
		changes[name] = rows
	}
	dst := db.New(to, logger)
	if err := dst.Replay(changes); err != nil {
		return nil, fmt.Errorf("converting to schema %s %s: %w", to.Name, to.Version, err)
	}
	return dst, nil
}

func convertRow(old *db.Row, from, to *db.Table) (*db.Row, error) {
	row := &db.Row{UUID: old.UUID, Columns: make([]db.Datum, len(to.Columns))}
	for _, c := range to.Columns {
		oc := from.ByName[c.Name]
		switch {
		case oc == nil:
			row.Columns[c.Index] = c.Type.Default()
		case reflect.DeepEqual(oc.Type, c.Type):
			row.Columns[c.Index] = old.Columns[oc.Index]
		default:
			raw, err := json.Marshal(db.DatumJSON(old.Columns[oc.Index], &oc.Type))
			if err != nil {
				return nil, err
			}
			d, err := db.ParseDatum(raw, &c.Type)
			if err != nil {
				return nil, fmt.Errorf("table %s column %s row %s: %w", to.Name, c.Name, old.UUID, err)
			}
			row.Columns[c.Index] = d
		}
	}
	return row, nil
}

// Convert converts the open database to schema to while it is served, as
// ovsdb-server's "convert" method does for a standalone database: the data
// are converted as by the package-level Convert, and the file is rewritten
// atomically as the new schema and one record holding the converted data
// (comment is its "_comment"). It returns the converted database, which
// Database returns from then on and whose commits are written to the file;
// commits of the old database fail from then on. On error nothing changes.
//
// The old database is read under its read lock for the whole conversion,
// so no commit can slip in between the snapshot and the rewritten file.
func (s *Storage) Convert(to *db.Schema, comment string) (*db.Database, error) {
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		return nil, errors.New(s.path + ": database is closed")
	}
	old := s.db // written only with compactMu held
	var converted *db.Database
	var err error
	old.View(func(v db.View) {
		if converted, err = convertView(v, old.Schema(), to, s.logger); err != nil {
			return
		}
		var body json.RawMessage
		converted.View(func(cv db.View) {
			body, err = snapshotRecord(to, allRows(to, cv), comment, time.Now(), false)
		})
		if err != nil {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if err = s.log.Replace([]json.RawMessage{to.Raw, body}); err != nil {
			return
		}
		s.db, s.schema = converted, to
		s.base = s.log.Size()
		s.lastCompaction = time.Now()
	})
	if err != nil {
		return nil, err
	}
	converted.SetBeforeCommit(s.commitHook(converted))
	return converted, nil
}

// upgrade converts the loaded database d to opts.Schema and rewrites its
// log atomically as the new schema and one record with the data, after
// saving a copy of the file.
func upgrade(log *Log, d *db.Database, opts Options, logger *slog.Logger) (*db.Database, error) {
	from := d.Schema()
	to := opts.Schema
	converted, err := Convert(d, to, logger)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", log.Path(), err)
	}
	// ovs-ctl's name for it: the version and the checksum's first field.
	cksum, _, _ := strings.Cut(from.Cksum, " ")
	backup := fmt.Sprintf("%s.backup%s-%s", log.Path(), from.Version, cksum)
	if err := copyFile(log.Path(), backup); err != nil {
		return nil, fmt.Errorf("%s: backing up before conversion: %w", log.Path(), err)
	}
	comment := opts.ConvertComment
	if comment == "" {
		comment = "converted by gvs"
	}
	var body json.RawMessage
	converted.View(func(v db.View) {
		body, err = snapshotRecord(to, allRows(to, v), comment, time.Now(), false)
	})
	if err == nil {
		err = log.Replace([]json.RawMessage{to.Raw, body})
	}
	if err != nil {
		return nil, err
	}
	logger.Info("converted database to a new schema", "file", log.Path(),
		"from_version", from.Version, "to_version", to.Version, "backup", backup)
	return converted, nil
}

// copyFile copies src to dst (replacing it) and fsyncs the copy.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, FileMode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
