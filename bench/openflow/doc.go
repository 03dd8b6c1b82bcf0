// Package openflow holds the pure parts of the benchmark's OpenFlow part
// (gvs-bench -only openflow): the OVN two-port pipeline rewritten for the
// benchmark's hosts, a generator of large realistic flow tables, and the
// parsing of what ovs-ofctl prints. The switches themselves are started by
// bench/setups; the measurements are driven by bench/cmd/gvs-bench.
//
// Nothing here keeps state between calls; every function may be used from
// any goroutine.
package openflow
