// Package jsonrpc is the JSON-RPC 1.0 framing that OVSDB (RFC 7047) and
// Open vSwitch's unixctl control sockets speak: a stream of JSON objects with
// no delimiter between them.
//
// Contract: a Reader is used by one goroutine; a Writer serialises its own
// callers, so any goroutine may call Writer.Write. Neither knows anything about
// OVSDB methods; the ovsdb server and the unixctl server build on both.
package jsonrpc
