// Package pstream opens passive streams (listeners) the way Open vSwitch's
// pstream_open does for "ptcp:PORT[:IP]", "pssl:PORT[:IP]" and
// "punix:PATH": the address is bound exactly as given (an IPv4 address
// binds IPv4 only, "[IPv6]" IPv6 only, no address means 0.0.0.0), errors
// and the "listening on port" line are Open vSwitch's words under its
// module name socket_util, since scripts and Open vSwitch's own test suite
// read the port from that line, and unix sockets get mode 0770 less the
// umask.
//
// The package holds no state; its functions may be called from any
// goroutine.
package pstream
