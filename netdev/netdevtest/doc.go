// Package netdevtest is a fake netdev.Device for unit tests of the
// datapath and everything above it: in-memory receive queues fed by
// Inject (or an endless Loop of frames, for benchmarks), transmit queues
// that capture copies of what was sent, a real PollFD (an eventfd
// readable while a receive queue holds frames), and counters.
//
// It honours the netdev contract, and checks the caller does too: Recv
// and Send on one queue from two goroutines at once, or after Close, is
// counted in Violations.
//
// # Ownership
//
// Recv takes buffers from the caller's pool and the caller owns them.
// Send copies each frame (unless Config.Discard) and returns every buffer
// to the pool it came from before returning, as the real backends do
// (packet.Buffer.Free);
// a buffer from packet.NewBuffer goes to the garbage collector. A double
// free panics.
//
// # Goroutines
//
// Inject, Loop, Sent, TakeSent, WaitSent and the counters may be called
// from any goroutine. Recv(q) and Send(q) follow the netdev contract (one
// goroutine per queue at a time). Nothing in Recv or Send allocates when
// Discard is set.
package netdevtest
