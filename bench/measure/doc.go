// Package measure runs and parses the external measurements (iperf3),
// accounts CPU time from /proc, detects load from outside the benchmark,
// and summarises repeated samples.
//
// Everything here is safe for use by one goroutine at a time; nothing
// keeps global state.
package measure
