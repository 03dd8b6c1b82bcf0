// Package ovsdbbench measures an OVSDB server the way ovs-vsctl loads it:
// transactions per second of back-to-back add-port/del-port transactions,
// and monitor latency (from sending a transaction until a second session
// that monitors Bridge and Port receives the update). It runs the same
// workload against Debian's ovsdb-server and gvs-ovsdb-server, each with a
// fresh database created by ovsdb-tool in a private directory.
//
// A Server and its clients are used from one goroutine; each client has
// one reader goroutine of its own that answers echo requests.
package ovsdbbench
