// Package unixctl is the server side of Open vSwitch's control socket, the
// one `ovs-appctl` talks to: JSON-RPC 1.0 over a Unix socket, where a
// request's method is a command name and its params are the command's
// arguments as strings, and the reply's result (or error) is plain text.
// Error texts are Open vSwitch 3.1's, so ovs-appctl prints the same messages
// and exits with the same status as it does against the real daemons.
//
// Contract: Register may be called from any goroutine, before or after
// Listen. A command's function runs on the goroutine of the connection that
// sent it; requests on one connection are handled one at a time and answered
// in order, but different connections run concurrently, so functions must be
// safe for concurrent use. A function must not call Close itself (Close waits
// for running commands): to stop a daemon from an "exit" command, signal the
// goroutine that owns the daemon and return.
//
// Close stops accepting, lets commands already running finish and send their
// replies, then closes every connection and removes the socket file.
//
// Lock order: Server.mu is never held while a command runs.
package unixctl
