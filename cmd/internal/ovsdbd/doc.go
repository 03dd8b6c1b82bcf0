// Package ovsdbd runs gvs's OVSDB server inside a daemon: it opens the
// database files (package storage: loaded from and written to Open
// vSwitch's standalone format, locked against a second server; created
// when missing or a dangling symbolic link, if Config says with which
// schema), starts the
// remotes, registers ovsdb-server's control commands (add-db, remove-db,
// add-remote, remove-remote, list-remotes, list-dbs, compact, reconnect,
// disable-monitor-cond, perf-counters-*, sync-status, memory/show...;
// commands.go), runs --run's command (run.go), lets the "convert" method rewrite a database's
// file (Storage.Convert, through Server.SetConverter) and serves until the
// daemon is told to exit, then closes the server before the files.
//
// Contract: Run is called once, from main's goroutine. The set of open
// files (fileSet) and of configured remotes are guarded: control commands
// run on the control server's goroutines.
package ovsdbd
