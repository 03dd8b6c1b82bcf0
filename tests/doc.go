// Package tests is gvs's end-to-end suite: it runs the real Debian Open
// vSwitch tools (ovs-vsctl, ovsdb-client, ovsdb-tool, ovs-appctl and the
// Python IDL) against gvs-ovsdb-server and against Debian's own
// ovsdb-server in the same run, and requires the same stdout, stderr and
// exit status from both after normalisation (normalize_test.go lists every
// normalisation and why it is legitimate).
//
// The package holds only tests. TestMain builds gvs-ovsdb-server once into a
// private temporary directory; every test starts its own servers, each in a
// private directory with OVS_RUNDIR, OVS_DBDIR and OVS_LOGDIR pointing there,
// so nothing touches /var/run/openvswitch and no packaged service is used.
// A test whose Debian tool is missing is skipped with the missing path.
//
// Run it with `go test ./tests/` (about 20 s; -v names every compared
// step) and the benchmarks with `go test -run NONE -bench . ./tests/`.
//
// Environment:
//
//	GVS_E2E_SELFCHECK=1  run Debian's ovsdb-server on both sides; this
//	                     validates the harness and its normalisations (any
//	                     difference then is a harness bug, not a server bug).
//
// Benchmarks (bench_test.go) compare transaction throughput and monitor
// update latency of both servers; they make no timed assertions.
package tests
