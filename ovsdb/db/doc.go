// Package db is an in-memory OVSDB database: schema parsing, the RFC 7047
// data model (atoms, data, rows), and the transaction engine that enforces
// the schema (types, enums, ranges, lengths, set and map sizes, references,
// garbage collection, maxRows, indexes) and commits all or nothing.
//
// It does no network I/O and knows nothing about sessions: the server passes
// in what a transaction may ask of its session through TxnEnv.
//
// Behaviour and error objects follow Open vSwitch's ovsdb-server (names and
// details texts of ovsdb/execution.c, transaction.c, condition.c,
// mutation.c, ovsdb-data.c): a failed operation's error object takes its
// slot in the result array and later slots are null; an error found at
// commit time is appended after all operation results. Error.Syntax carries
// Open vSwitch's "syntax" member (the offending JSON) where it has one.
//
// Concurrency: a Database is safe for concurrent use. Transact serialises
// writers; View gives readers a consistent snapshot. Committed rows are
// immutable and may be kept by readers after the callback returns.
// Subscribers registered with Subscribe are called in commit order with the
// database's write lock held: they must not call back into the Database, and
// should only queue work. ViewAndSubscribe takes an initial snapshot and
// subscribes with no commit in between (for monitors). The BeforeCommit
// hook also runs with the write lock held, before the commit is visible.
// Subscribe, ViewAndSubscribe, SetBeforeCommit and the cancel functions take
// the write lock, so they must not be called from a subscriber or hook.
// Lock order: Database before anything a subscriber or hook takes.
//
// Extensions beyond the fixed API: Table.Column and Table.ColumnsByName
// understand the pseudo columns "_uuid" and "_version" (Column.Index
// ColumnIndexUUID / ColumnIndexVersion) and Row.Datum reads them;
// TransactPrivileged lets the server write its reserved "_Server"
// database, which clients may only read; ApplyDiff inverts DiffDatum;
// AppendDatumJSON writes what json.Marshal(DatumJSON(d, t)) would, without
// building the value (for monitor updates of large sets).
package db
