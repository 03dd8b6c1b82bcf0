// Package measure runs and parses the external measurements (iperf3),
// splits UDP loss between the path and the receiving host's sockets (from
// the receiver namespace's /proc/net/snmp), accounts CPU time from /proc,
// detects load from outside the benchmark, and summarises repeated
// samples.
//
// Everything here is safe for use by one goroutine at a time; nothing
// keeps global state.
package measure
