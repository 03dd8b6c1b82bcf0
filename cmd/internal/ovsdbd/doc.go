// Package ovsdbd runs gvs's OVSDB server inside a daemon: it loads the
// database files, starts the remotes, registers ovsdb-server's control
// commands and serves until the daemon is told to exit. Both
// gvs-ovsdb-server and gvs-vswitchd (which embeds the server) use it.
//
// Databases are served from memory: only each file's schema is read (see
// package dbfile) and nothing is written back, until the storage layer of a
// later issue lands. The daemon logs this at startup.
//
// Contract: Run is called once, from main's goroutine.
package ovsdbd
