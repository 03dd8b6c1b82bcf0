// Package rawsock holds the low-level socket helpers the netdev backends
// share and golang.org/x/sys lacks: sendmmsg(2) with a reusable,
// allocation-free message array, and socket buffer sizing with the
// FORCE-then-plain fallback Open vSwitch uses.
//
// Nothing here locks: a MsgBatch belongs to one goroutine (the one sending
// on its queue); SetBuffers may be called from any goroutine.
package rawsock
