package server

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gvs/ovsdb/db"
	"gvs/ovsdb/internal/fastjson"
)

// selection is a set of the row changes a monitor request selects.
type selection uint8

const (
	selInitial selection = 1 << iota
	selInsert
	selDelete
	selModify
	selAll = selInitial | selInsert | selDelete | selModify
)

// monitorVersion says which method created a monitor and therefore which
// notification it receives.
type monitorVersion int

const (
	monitorV1 monitorVersion = 1 + iota // "monitor" -> "update"
	monitorV2                           // "monitor_cond" -> "update2"
	monitorV3                           // "monitor_cond_since" -> "update3"
)

func (v monitorVersion) notification() string {
	switch v {
	case monitorV1:
		return "update"
	case monitorV2:
		return "update2"
	}
	return "update3"
}

// Pseudo-column indexes: every OVSDB table also has _uuid and _version.
const (
	colUUID    = -1
	colVersion = -2
)

var uuidColumnType = &db.ColumnType{Key: db.BaseType{Type: db.TypeUUID}, Min: 1, Max: 1}

// monColumn is one monitored column and the changes it was selected for.
type monColumn struct {
	name  string
	key   []byte // the name as a JSON string, then a colon
	index int    // db.Column.Index, colUUID or colVersion
	typ   *db.ColumnType
	sel   selection
}

func (c *monColumn) datum(r *db.Row) db.Datum {
	switch c.index {
	case colUUID:
		return db.Datum{Keys: []db.Atom{r.UUID}}
	case colVersion:
		return db.Datum{Keys: []db.Atom{r.Version}}
	}
	return r.Columns[c.index]
}

// monTable is what one monitor watches in one table. Its columns are fixed
// at creation; cond (nil for "monitor") may be replaced by
// monitor_cond_change while the served database's lock is held.
type monTable struct {
	name  string
	table *db.Table
	cols  []*monColumn
	// byName indexes cols in the order of their names, the order in which
	// encoding/json writes an object's members.
	byName []int
	seen   map[string]bool
	sel    selection
	cond   *monCondition
	// hasCond is set once a request has given the table its condition.
	hasCond bool
}

// monitor is one monitor of one session on one database. All fields but
// tables[*].cond are immutable after creation.
type monitor struct {
	id      json.RawMessage // canonical JSON
	key     string          // id as a map key
	version monitorVersion
	sess    *session
	sdb     *served
	tables  map[string]*monTable
	names   []string // sorted table names
	shape   string   // identifies the columns and selections, for sharing updates
}

// conditional reports whether some table has a condition that can reject
// rows; such monitors cannot share computed updates with others.
func (m *monitor) conditional() bool {
	for _, mt := range m.tables {
		if mt.cond != nil && !mt.cond.always {
			return true
		}
	}
	return false
}

// errorObject turns any error from parsing or the db into the JSON an error
// reply carries.
func errorObject(err error) any {
	var oe *ovsdbError
	if errors.As(err, &oe) {
		return oe
	}
	var de *db.Error
	if errors.As(err, &de) {
		return de
	}
	return &ovsdbError{Name: "syntax error", Details: err.Error()}
}

// parseMonitorRequests parses <monitor-requests> (or <monitor-cond-requests>
// for version 2 and 3) the way ovsdb-server does: per table, one request
// object or an array of them.
func parseMonitorRequests(schema *db.Schema, version monitorVersion, raw json.RawMessage) (map[string]*monTable, error) {
	reqs, ok := decodeObject(raw)
	if !ok {
		return nil, syntaxError(raw, "", "monitor-requests must be object")
	}
	names := make([]string, 0, len(reqs))
	for name := range reqs {
		names = append(names, name)
	}
	sort.Strings(names)
	tables := make(map[string]*monTable, len(names))
	for _, name := range names {
		t := schema.Tables[name]
		if t == nil {
			return nil, syntaxError(nil, "", "no table named %s", name)
		}
		mt := &monTable{name: name, table: t, seen: map[string]bool{}}
		if version != monitorV1 {
			mt.cond = trueCondition
		}
		value := reqs[name]
		if elems, isArray := decodeArray(value); isArray {
			for _, elem := range elems {
				if err := mt.addRequest(elem, version); err != nil {
					return nil, err
				}
			}
		} else if err := mt.addRequest(value, version); err != nil {
			return nil, err
		}
		mt.byName = make([]int, len(mt.cols))
		for i, c := range mt.cols {
			mt.byName[i] = i
			c.key = append(fastjson.AppendString(nil, c.name), ':')
		}
		slices.SortFunc(mt.byName, func(a, b int) int { return strings.Compare(mt.cols[a].name, mt.cols[b].name) })
		tables[name] = mt
	}
	return tables, nil
}

func (mt *monTable) addRequest(raw json.RawMessage, version monitorVersion) error {
	p := newObjectParser(raw, "table "+mt.name)
	var where json.RawMessage
	if version != monitorV1 {
		where = p.member("where", '[')
	}
	columns := p.member("columns", '[')
	selectJSON := p.member("select", '{')
	if err := p.finish(); err != nil {
		return err
	}
	sel := selAll
	if selectJSON != nil {
		sel = 0
		sp := newObjectParser(selectJSON, "table "+mt.name+" select")
		for _, b := range []struct {
			name string
			bit  selection
		}{{"initial", selInitial}, {"insert", selInsert}, {"delete", selDelete}, {"modify", selModify}} {
			if v := sp.member(b.name, 'b'); v == nil || string(v) == "true" {
				sel |= b.bit
			}
		}
		if err := sp.finish(); err != nil {
			return err
		}
	}
	mt.sel |= sel
	if columns != nil {
		elems, _ := decodeArray(columns)
		for _, elem := range elems {
			name, ok := decodeString(elem)
			if !ok {
				return syntaxError(columns, "", "array of column names expected")
			}
			c := mt.lookup(name)
			if c == nil {
				return syntaxError(columns, "", "%s is not a valid column name", name)
			}
			if mt.seen[name] {
				return syntaxError(columns, "", "column %s mentioned more than once", name)
			}
			c.sel = sel
			mt.seen[name] = true
			mt.cols = append(mt.cols, c)
		}
	} else {
		// Every column but _uuid, as Open vSwitch does.
		names := make([]string, 0, len(mt.table.Columns)+1)
		for _, col := range mt.table.Columns {
			names = append(names, col.Name)
		}
		names = append(names, "_version")
		for _, name := range names {
			if mt.seen[name] {
				return syntaxError(nil, "", "column %s mentioned more than once", name)
			}
			c := mt.lookup(name)
			c.sel = sel
			mt.seen[name] = true
			mt.cols = append(mt.cols, c)
		}
	}
	if version != monitorV1 {
		cond, err := parseMonCondition(mt.table, where)
		if err != nil {
			return err
		}
		// With several requests for a table, ovsdb-server applies the
		// first one's "where" (measured against Open vSwitch 3.1).
		if !mt.hasCond {
			mt.cond, mt.hasCond = cond, true
		}
	}
	return nil
}

// lookup returns a fresh monColumn for a column name, or nil.
func (mt *monTable) lookup(name string) *monColumn {
	switch name {
	case "_uuid":
		return &monColumn{name: name, index: colUUID, typ: uuidColumnType}
	case "_version":
		return &monColumn{name: name, index: colVersion, typ: uuidColumnType}
	}
	col := mt.table.ByName[name]
	if col == nil {
		return nil
	}
	return &monColumn{name: name, index: col.Index, typ: &col.Type}
}

// shapeOf identifies a monitor's version, tables, columns and selections, so
// that unconditional monitors with the same shape share one computed update.
func shapeOf(version monitorVersion, tables map[string]*monTable, names []string) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(version)))
	for _, name := range names {
		mt := tables[name]
		b.WriteString("|" + name + ":" + strconv.Itoa(int(mt.sel)))
		for _, c := range mt.cols {
			b.WriteString("," + c.name + "=" + strconv.Itoa(int(c.sel)))
		}
	}
	return b.String()
}
