package db

// This file fixes the API that the server (ovsdb/server), storage and the
// reconciler build on. Implementations live in the other files of the package.

import (
	"encoding/json"
	"time"
)

// UUID is a row UUID in canonical lower-case 8-4-4-4-12 form.
type UUID string

// AtomicType is one of RFC 7047's five atomic types.
type AtomicType int

const (
	TypeInteger AtomicType = iota
	TypeReal
	TypeBoolean
	TypeString
	TypeUUID
)

// RefType says whether a reference keeps its target alive.
type RefType int

const (
	RefStrong RefType = iota
	RefWeak
)

// Atom is an int64, float64, bool, string or UUID, matching its AtomicType.
type Atom = any

// BaseType is RFC 7047's <base-type> with its constraints.
type BaseType struct {
	Type       AtomicType
	Enum       []Atom // sorted; nil when unconstrained
	MinInteger *int64
	MaxInteger *int64
	MinReal    *float64
	MaxReal    *float64
	MinLength  *int64
	MaxLength  *int64
	RefTable   string // for TypeUUID only; "" when not a reference
	RefType    RefType
}

// Unlimited is ColumnType.Max for "max": "unlimited".
const Unlimited = int(^uint(0) >> 1)

// ColumnType is RFC 7047's <type>. A column is a map when Value != nil.
type ColumnType struct {
	Key   BaseType
	Value *BaseType
	Min   int
	Max   int
}

// Column is one column of a table. Index is its position in Row.Columns.
type Column struct {
	Name      string
	Type      ColumnType
	Ephemeral bool
	Mutable   bool
	Index     int
}

// Table is one table of a schema. Columns holds the user columns in a fixed
// order (Column.Index); _uuid and _version are not in it.
type Table struct {
	Name    string
	Columns []*Column
	ByName  map[string]*Column
	MaxRows int // 0 means unlimited
	IsRoot  bool
	Indexes [][]*Column
}

// Schema is a parsed database schema. Raw is the schema's JSON as given, for
// get_schema replies and for storage.
type Schema struct {
	Name    string
	Version string
	Cksum   string
	Tables  map[string]*Table
	Raw     json.RawMessage
}

// Datum is a column value: a set (Values == nil) or a map, its keys sorted
// and unique. A scalar column holds a set of exactly one atom.
type Datum struct {
	Keys   []Atom
	Values []Atom
}

// Row is a committed row. Committed rows are immutable: a change makes a new
// Row, so readers may keep pointers to them without locks.
type Row struct {
	UUID    UUID
	Version UUID
	Columns []Datum // indexed by Column.Index
}

// Change is what one commit did to one row: Old is nil for an insert, New is
// nil for a delete.
type Change struct {
	Old *Row
	New *Row
}

// Commit describes one committed transaction, in commit order. Tables maps
// table name to the rows it changed; rows changed only in ephemeral columns
// are included. Comment collects the transaction's "comment" operations.
type Commit struct {
	TxnID   UUID
	Tables  map[string]map[UUID]Change
	Comment string
	Durable bool
	Date    time.Time
}

// TxnEnv is what a transaction may ask of the session running it.
type TxnEnv struct {
	// HasLock reports whether the session owns the named lock ("assert").
	HasLock func(name string) bool
	// Started is when the transaction first ran; "wait" timeouts count
	// from it across retries.
	Started time.Time
	// Now is the current time.
	Now time.Time
}

// TxnResult is the outcome of Database.Transact.
type TxnResult struct {
	// Results is the RFC 7047 result array, ready for encoding/json: one
	// element per operation, plus a trailing error object when the
	// transaction failed for a reason not tied to one operation.
	Results []any
	// Commit is non-nil when the transaction changed the database.
	Commit *Commit
	// Blocked is true when a "wait" operation is not yet satisfied and its
	// timeout has not expired: the caller re-runs the transaction after the
	// next commit or at RetryAt, whichever comes first, with the same
	// TxnEnv.Started. Nothing was committed.
	Blocked bool
	RetryAt time.Time
}

// Condition is a parsed "where" clause, matched against rows of one table.
type Condition interface {
	Match(row *Row) bool
}

// View is a consistent read-only view of a database, valid only inside the
// callback that received it.
type View interface {
	// Rows calls fn for every row of table, in no particular order, until fn
	// returns false.
	Rows(table string, fn func(*Row) bool)
	// Row returns one row, or nil.
	Row(table string, uuid UUID) *Row
}
