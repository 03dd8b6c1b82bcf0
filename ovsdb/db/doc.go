// Package db is an in-memory OVSDB database: schema parsing, the RFC 7047
// data model (atoms, data, rows), and the transaction engine that enforces
// the schema (types, enums, ranges, lengths, set and map sizes, references,
// garbage collection, maxRows, indexes) and commits all or nothing.
//
// It does no network I/O and knows nothing about sessions: the server passes
// in what a transaction may ask of its session through TxnEnv.
//
// Concurrency: a Database is safe for concurrent use. Transact serialises
// writers; View gives readers a consistent snapshot. Committed rows are
// immutable and may be kept by readers after the callback returns.
// Subscribers registered with Subscribe are called in commit order with the
// database's write lock held: they must not call back into the Database, and
// should only queue work. Lock order: Database before anything a subscriber
// takes.
package db
