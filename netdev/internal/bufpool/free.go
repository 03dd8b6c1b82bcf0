// Package bufpool is a transitional alias for packet.Buffer.Free and
// packet.FreeBatch, kept only until every backend calls those directly.
package bufpool

import "gvs/packet"

// Free returns b to its pool (see packet.Buffer.Free).
func Free(b *packet.Buffer) { b.Free() }

// FreeBatch frees every buffer in batch and empties it.
func FreeBatch(batch *packet.Batch) { packet.FreeBatch(batch) }
