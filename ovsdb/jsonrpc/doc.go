// Package jsonrpc is the JSON-RPC 1.0 framing that OVSDB (RFC 7047) and
// Open vSwitch's unixctl control sockets speak: a stream of JSON objects with
// no delimiter between them.
//
// Decoding and encoding go through gvs/ovsdb/internal/fastjson, not
// encoding/json's reflection: a Reader frames each object with a light scan
// and validates and splits it in one pass, and falls back to encoding/json
// only for input it rejects, so the errors are encoding/json's as before;
// Message.AppendJSON writes the same bytes json.Marshal did.
//
// Contract: a Reader is used by one goroutine; a Writer serialises its own
// callers, so any goroutine may call Writer.Write. Neither knows anything about
// OVSDB methods; the ovsdb server and the unixctl server build on both.
package jsonrpc
