// Package daemon is the plumbing gvs's binaries share with each other and
// mirror from Open vSwitch's daemons, so scripts and operators treat them
// the same way:
//
//   - options parsed like getopt_long (ParseArgs), with the daemon and
//     logging options of every Open vSwitch daemon (Options.DaemonOptions);
//   - OVS_RUNDIR, OVS_DBDIR and OVS_LOGDIR (DirsFromEnv);
//   - logging through log/slog in vlog's line format, to stderr and a log
//     file, with -v levels per module and destination as vlog has them
//     (LogHandler, VerboseSpec);
//   - pidfiles with Open vSwitch's locking protocol, which ovs-appctl -t
//     relies on (Pidfile);
//   - --detach without fork: the process re-executes itself and returns
//     only when the child serves (detach.go);
//   - --monitor: a monitor process restarts the daemon after a crash
//     signal (monitor.go);
//   - the control socket with exit, version, list-commands and vlog/*
//     commands, and termination by signal (Daemon).
//
// Contract: Start, Ready, Wait and Close (or Fatal) are called in that
// order from main's goroutine. The Logger and the control server may be
// used from any goroutine. The package keeps no global state; the one
// process-wide effect besides the pidfile is the signal handling installed
// by Start.
package daemon
