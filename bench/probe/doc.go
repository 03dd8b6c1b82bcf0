// Package probe holds the benchmark's own traffic tools, run inside a
// network namespace as hidden sub-commands of the benchmark binary
// (`ip netns exec NS gvs-bench _ping ...`): an ICMP pinger, a
// request/response client and server, a new-flow sender (one per sender
// namespace, several at once, each walking the same port tuples from its
// own address) and receiver (on every address of its namespace), a tx
// checksum offload switch (what `ethtool -K DEV tx off` does) and a
// layer-2 forwarding check over many ports (_l2check: a raw frame from
// each port's peer to a sink, no IP involved).
//
// Each sub-command is a plain process: it parses its flags, does one job
// bounded in time and writes one JSON object to standard output. Servers
// print "ready" on a line of its own once listening and stop when standard
// input closes.
package probe
