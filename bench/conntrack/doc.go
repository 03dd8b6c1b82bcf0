// Package conntrack holds the pure parts of the benchmark's conntrack part
// (gvs-bench -only conntrack): the flow tables the switches load (the
// classic stateful firewall through ct, and the same forwarding without
// ct), and the parsing of what the switches report about their connection
// tables. The switches are started by bench/setups, the traffic is driven
// by bench/cmd/gvs-bench and its probes (bench/probe: _conn-server,
// _conn-client, _conn-hold).
//
// Nothing here keeps state; every function may be used from any goroutine.
package conntrack
