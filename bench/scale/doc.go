// Package scale is the benchmark's scale test: many veth ports on one
// bridge, changed the way a host with many containers changes them, for
// Open vSwitch and gvs in the same session.
//
// For each switch (Open vSwitch first, then gvs) one sweep: N ports added
// with one `ovs-vsctl add-port` call each (waiting for cur_cfg), every
// call's latency recorded; forwarding checked on every port; after a
// settling time, the RSS and idle CPU of all the switch's processes (and,
// for gvs, the receive-ring memory `ovs-appctl memory/show` reports); then
// the N ports removed one call each, and checked not to forward any more.
// Then, for Runs rounds with the switches interleaved round by round: B
// ports added in one transaction, checked, the switch restarted (`ovs-appctl
// exit`, started again; Open vSwitch's ovsdb-server stays up) until every
// port forwards again, and the B ports removed in one transaction.
//
// Forwarding is checked by the benchmark's _l2check probe in the host
// namespace (see bench/probe): a frame from every port's peer to a sink
// port, which a learning switch forwards to the sink only.
//
// Per-change latency is reported at 10, 100, 500 and 1,000 ports (those
// up to N, and N itself) as the median of the WindowWidth calls made
// nearest to that many ports, and plotted for every call.
//
// A Runner is used from one goroutine; it owns the switches it starts and
// stops each before starting the next. Pure parts (windowing, memory/show
// parsing, figures and targets) are plain functions.
package scale
