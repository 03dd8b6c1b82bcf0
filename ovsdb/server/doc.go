// Package server is the OVSDB JSON-RPC server core (RFC 7047 plus Open
// vSwitch's extensions, as described in ovsdb-server(7)): it serves
// databases from package db to sessions on punix:, ptcp: and pssl:
// remotes (opened through package pstream: bound exactly as given, with
// Open vSwitch's log lines and socket modes) or on connections handed to
// ServeConn.
//
// Methods: list_dbs, get_schema, transact (with blocked "wait" transactions
// re-run after every commit and at their deadline, and the "cancel"
// notification), monitor, monitor_cond, monitor_cond_since (standalone
// databases keep no commit history, as in Open vSwitch: the reply and
// update3 carry the all-zero transaction id and a reconnecting client gets
// the full state; a server built with a history length resumes instead),
// monitor_cond_change, monitor_cancel,
// lock, steal, unlock (with "locked" and "stolen" notifications), echo,
// set_db_change_aware, get_server_id and convert (online schema
// conversion: the converted database replaces the old one atomically,
// change-aware sessions get "monitor_canceled" for its monitors, the other
// sessions are disconnected). The server also serves the read-only _Server
// database with one Database row per served database.
//
// The server does not own storage: SetConverter installs how "convert"
// converts a database durably (cmd/internal/ovsdbd rewrites the file
// through storage.Storage.Convert); without one it converts in memory.
//
// Goroutines: each listener has an accept goroutine. Each session has
// three: a reader that decodes messages, a loop that handles them one at a
// time (and re-runs its blocked transactions and sends inactivity probes on
// TCP and SSL sessions), and a writer that drains the session's outgoing
// queue. Queuing never blocks. While more than 1 MiB of a session's output
// is unwritten its loop takes no new request (a client that does not read
// its replies slows only itself, as with ovsdb-server); a session whose
// backlog still passes 64 MiB (monitor updates for a client that stopped
// reading) is dropped, so such a client can stall neither the server nor
// other clients. Input is bounded across sessions too: a session reads up
// to LargeMessageThreshold of one message freely, and past it only while
// holding one of the server's large-message slots (budget.go), which it
// keeps until the message is handled; a holder that receives nothing for
// the stall limit is dropped, and memory is returned to the system after
// each message of FreeMemoryThreshold or more. Commits reach monitors through the
// db's subscriber callback, which queues the notifications in commit order
// before Transact returns; the transact reply is queued after, so a client
// sees its updates before its reply. Row updates are encoded straight from
// the committed rows into bytes (members in the order json.Marshal sorted
// them, so the output is unchanged), and each reply is encoded once into
// the buffer that is queued.
//
// Public methods of Server may be called from any goroutine.
//
// Lock order (a lock may be taken while holding those to its left, never
// the other way round):
//
//	Server.convertMu -> served.gate (exclusive: converting or removing it)
//	                 -> the converter's and the db's locks, Server.mu,
//	                    served.mu, _Server's writeMu (each as below)
//	served.gate (shared: a client transaction) -> db write lock
//	db write lock -> served.mu (one database's monitor registry and replica)
//	              -> session.mu (a session's monitor map) -> session.qmu (its queue)
//	db write lock -> lockTable.mu (TxnEnv.HasLock) -> session.qmu
//	served.writeMu (_Server upkeep) -> Server.mu, and -> db write lock
//
// Server.mu guards the sets of databases, remotes and sessions; it is held
// only briefly and never while taking a lock other than those listed.
//
// For ovsdb-server's control commands: Reconnect drops every session,
// DisableMonitorCond makes monitor_cond and monitor_cond_since unknown
// methods, MemoryUsage counts what memory/show reports, Schema looks a
// served schema up.
//
// Beyond the fixed API, RemoveDatabase stops serving a database the way
// ovsdb-server/remove-db does, SetConverter is described above, and Stats
// returns activity counters (sessions, monitors, transactions by outcome,
// commit durations) that sessions update with atomic adds; package metrics
// reads them on scrape.
package server
