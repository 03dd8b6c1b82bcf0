// Package schema holds the Open_vSwitch database schema that gvs serves, a
// verbatim copy of Open vSwitch 3.1's vswitch.ovsschema (version 8.3.1), and
// the Go models generated from it by libovsdb's modelgen (package
// schema/vswitchd), for code that talks to the database through libovsdb's
// client.
//
// Contract: VSwitch returns a fresh copy of the schema's bytes on every call,
// so any goroutine may call it and callers may keep or change the result.
// The package has no other state.
//
// Regenerate the models with `make generate` (or `go generate ./schema`)
// after changing vswitch.ovsschema; a test fails while they are stale.
package schema
