// Package storage keeps OVSDB databases on disk in Open vSwitch's standalone
// format (Documentation/ref/ovsdb.5.rst), so that ovsdb-tool and
// ovsdb-server read what gvs writes and the other way round.
//
// The file is a log of records, each a line "OVSDB JSON <length> <sha1>"
// and that many bytes of JSON. Record 0 is the schema; every later record
// is one committed transaction as ovsdb-server writes it: per table, per
// row UUID, null for a deleted row, an inserted row's non-default
// persistent columns, a modified row's changed columns as diffs
// ("_is_diff": true; ovsdb_datum_diff), plus "_date" and "_comment".
// Ephemeral columns are never written. A compacted file is the schema and
// one record holding every row ("compacting database online").
//
// Open loads a file (replaying the records in order, applying diffs, with
// the commit-time checks Open vSwitch's replay runs) and hooks the
// database's BeforeCommit, so that:
//   - a transaction is acknowledged only after its record is written to the
//     file, and fsynced first when it asked for durability ("commit" with
//     "durable": true) or Options.Sync is set;
//   - a write that fails fails the transaction with an "I/O error" and
//     changes nothing (the file is truncated back to its last good record);
//   - a torn or corrupt tail found on open (an incomplete record, a bad
//     checksum, a record that does not decode) is truncated with a logged
//     warning, keeping everything before it (as Open vSwitch does); the
//     server still starts. When good records are dropped with it (damage
//     in the middle of the log, or a record that does not decode), a copy
//     of the dropped bytes is kept as NAME.dropped-OFFSET;
//   - the log is compacted as ovsdb-server 3.1 does it (over 10 MB and
//     twice its size after the last compaction, at least 100 records, at
//     most once per 10 minutes; after a day any commit), also right after
//     Open when the file already grew that much (in the background, so a
//     daemon killed before its first 10 minutes does not replay an ever
//     longer log at every start), and on Compact (the ovsdb-server/compact
//     command), by writing NAME.tmp, fsyncing it, renaming it over the file
//     and fsyncing the directory; a failed automatic compaction is tried
//     again a tenth of the interval later, not at every commit;
//   - a NAME that is a symbolic link (Debian's /etc/openvswitch/conf.db →
//     /var/lib/openvswitch/conf.db) is followed, as Open vSwitch's
//     follow_symlinks does, before anything is created, locked or replaced:
//     Create through a link whose target does not exist yet creates the
//     target, and compaction renames over the target, so the link stays a
//     link; the lock file and NAME.tmp are beside the target;
//   - Options.Schema converts a file with another version of the schema at
//     open (Convert: like ovsdb-tool convert), after backing it up;
//   - Storage.Convert converts the open database while it is served (the
//     "convert" method of ovsdb-server): the file is rewritten atomically
//     as the new schema and a snapshot, and the converted database replaces
//     the old one, whose commits fail from then on.
//
// Open vSwitch's lock file ".NAME.~lock~" is held (an open-file-description
// lock, which also conflicts with ovsdb-server's POSIX lock) while a
// database is open, so neither two gvs servers nor gvs and ovsdb-server
// write one file at once. Load, ReadSchema and ReadRecords read without
// locking or changing anything, as ovsdb-tool's read-only commands do.
//
// Concurrency: a Storage is safe for concurrent use. Its record writing
// runs inside the database's commit path (with the database's write lock
// held), so records are written in commit order. A compaction takes a
// snapshot under the database's read lock (a list of immutable rows),
// writes the new file without any lock, then copies in the records
// committed meanwhile and swaps files holding only the storage's own
// mutex, so commits wait only for that short swap. Lock order: a
// compaction's mutex, then the database's lock, then the storage's mutex.
// Storage.Convert holds the compaction mutex and the old database's read
// lock throughout, so no commit lands between its snapshot and the new file.
// Close waits for a running compaction, then makes later commits fail.
// A Log (the record layer) is not safe for concurrent use: its Storage
// serialises it.
package storage
