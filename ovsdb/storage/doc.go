// Package storage keeps OVSDB databases on disk in Open vSwitch's standalone
// format (Documentation/ref/ovsdb.5.rst), so that ovsdb-tool and
// ovsdb-server read what gvs writes and the other way round.
//
// Log is the record layer: "OVSDB JSON <length> <sha1>" headers, a torn or
// corrupt tail truncated with a warning when the file is opened (never a
// silently lost acknowledged record: a record is acknowledged only after it
// was written, and after fsync when durable), atomic rewrite for compaction,
// and Open vSwitch's ".NAME.~lock~" lock file.
//
// Concurrency: a Log belongs to one goroutine at a time; the database's
// commit path (which is serialised) owns it.
package storage
