// Package packet holds frames and flow keys for the datapath's packet path:
// Buffer (a frame with headroom and metadata), Batch (32 buffers moving
// together), Pool (a per-PMD free list), Key and Parse (header fields for
// the flow caches and classifier), Internet checksum helpers and
// Segmenter (software GSO for frames leaving on a port that takes no
// virtio_net_hdr). It imports nothing else of gvs.
//
// # Goroutines
//
// Nothing here locks. A Pool belongs to one goroutine (a PMD): only that
// goroutine calls Get, Put, GetBatch, PutBatch, Clone and Stats; only
// Exhausted may be read from elsewhere (for metrics). A Buffer, a Batch
// and a Key belong to one goroutine at a time; handing one to another
// goroutine hands over ownership.
//
// # Ownership
//
//   - Pool.Get gives the caller a buffer; the owner must eventually hand it
//     on (Send) or Put it back to the pool it came from, on that pool's
//     goroutine. Put panics on a buffer from another pool and on a second
//     Put of the same buffer: both are ownership bugs.
//   - A Batch is caller-owned and fixed-size; it points to buffers but owns
//     nothing. Recv(queue, *Batch) appends buffers the caller then owns.
//     Send(queue, *Batch) takes ownership of every buffer in the batch,
//     even when it fails (it frees what it could not send and counts the
//     drops), and returns with the batch empty. No callee keeps a pointer
//     to a Batch after returning.
//   - Data, Room, Prepend and Pull return slices into the buffer: valid
//     while the caller owns the buffer and until the next call that moves
//     its window.
//
// # Allocation
//
// Parse, ParseOffsets, Key.Hash, Key.ApplyMask, Pool.Get and Put, Batch
// operations, VLAN push and pop, virtio_net_hdr encode and decode,
// Segmenter and the checksum functions never allocate; alloc_test.go and
// segment_test.go prove it with testing.AllocsPerRun; UpdateChecksum and
// UpdateSum (incremental checksum updates, RFC 1624) likewise. Only NewPool and
// NewBuffer allocate. Neither Parse nor Segmenter panics on any input
// (FuzzParse, FuzzSegment); a malformed frame yields a Status (or an
// error) that the caller counts, and a key holding what could be parsed.
//
// # Metadata and neighbour discovery
//
// A Key's first words are metadata (in_port, recirc_id, dp_hash,
// pkt_mark, skb_priority, conntrack and tunnel fields): Parse keeps
// them, Buffer.Reset (so Pool.Get) zeroes them, ClearMetadata zeroes all
// but InPort. Parse fills the ND fields of ICMPv6 neighbour solicitations
// and advertisements as Open vSwitch's flow_extract does: NDReserved
// (the word after the checksum), NDTarget, the source and target
// link-layer address options in ARPSHA and ARPTHA, and NDOptionsType
// (the first of those options' type).
//
// # Byte order
//
// Key fields holding protocol numbers, ports and tags are host integers;
// addresses are byte arrays in network order. VnetHdr encodes in
// little-endian, which is what Linux uses for AF_PACKET and tap on
// little-endian hosts.
package packet
