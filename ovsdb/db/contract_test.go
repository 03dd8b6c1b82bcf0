package db

// The functions the rest of gvs builds on; this fails to compile while any is
// missing or has a different signature.
import (
	"encoding/json"
	"log/slog"
)

var (
	_ func([]byte) (*Schema, error)                        = ParseSchema
	_ func(*Schema, *slog.Logger) *Database                = New
	_ func(*Database) *Schema                              = (*Database).Schema
	_ func(*Database, []json.RawMessage, TxnEnv) TxnResult = (*Database).Transact
	_ func(*Database, func(View))                          = (*Database).View
	_ func(*Database, func(*Commit)) (cancel func())       = (*Database).Subscribe
	_ func(*Database, func(*Commit) error)                 = (*Database).SetBeforeCommit
	_ func(*Table, json.RawMessage) (Condition, error)     = (*Table).ParseCondition
	_ func(*Table, *Row, []*Column) map[string]any         = (*Table).RowJSON
	_ func(json.RawMessage, *ColumnType) (Datum, error)    = ParseDatum
	_ func(Datum, *ColumnType) any                         = DatumJSON
	_ func(old, new Datum, t *ColumnType) Datum            = DiffDatum
	_ func(Datum, Datum) bool                              = Datum.Equal
	_ func() UUID                                          = NewUUID
	_ error                                                = (*Error)(nil)
)
