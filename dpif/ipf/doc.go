// Package ipf reassembles IP fragments for the connection tracker, as Open
// vSwitch's lib/ipf.c does for its userspace datapath: the tracker needs
// the L4 header of every packet, which only the first fragment carries.
// Fragments (IPv4 and IPv6) that reach a ct action are held per list key
// (source and destination address, IPv4 protocol, identification,
// EtherType, zone, recirc_id: Open vSwitch's ipf_list_key) until the set
// is complete; the reassembled packet is then run through the tracker,
// and what leaves the ct action are the original fragments, carrying the
// reassembled packet's conntrack fields and the header changes NAT made
// to it (addresses in every fragment, the first fragment's L4 bytes).
//
// # Calling it
//
// The datapath calls, on the goroutine that owns b, around the tracker:
//
//	v, r := f.Preprocess(b, zone)
//	switch v {
//	case ipf.Pass:        // run the tracker on b, go on with b
//	case ipf.Invalid:     // b's ct fields are set (+inv+trk, zone): skip the tracker, go on with b
//	case ipf.Held:        // the action is done with b: free it
//	case ipf.Reassembled: // free b; run the tracker on r.Packet, then
//		frags := f.Postprocess(r, pool, scratch[:0]) // go on with each of frags
//	}
//
// A packet that is not a fragment (b.Key.IPFrag clear, as Parse left it)
// costs one test and no allocation. Fragments are the slow path: they
// take the IPF's mutex (one per datapath, as Open vSwitch's ipf_lock);
// their copies, lists and reassembly buffers are reused, so a steady
// stream of fragmented packets allocates nothing once warm
// (BenchmarkReassemble).
//
// # Ownership
//
//   - Preprocess never keeps or frees the caller's buffer: a fragment it
//     holds is copied into memory of the IPF's own, so a PMD's pool is
//     never drained by fragments waiting for their siblings (up to
//     max-nfrags of them, for up to 15 s). Held and Reassembled tell the
//     caller that b has been consumed and may be freed.
//   - r (Reassembled) belongs to the caller from Preprocess until it is
//     handed to Postprocess, which must be called exactly once, on the
//     same goroutine, before the caller executes any further packet
//     through this ct action's nested work (the tracker may rewrite
//     r.Packet's bytes and Key; nothing else may keep a pointer to it).
//     Postprocess takes r back (its buffer is reused for a later
//     reassembly).
//   - Postprocess takes each fragment it emits from alloc (the caller's
//     pool) and appends it to out: those buffers are the caller's. A
//     fragment for which alloc has no buffer is dropped and counted
//     (Status.NoBuffer).
//   - A list whose reassembled packet is never handed back (a caller
//     bug) is purged, counted as Open vSwitch counts stuck lists.
//
// # Limits and counters
//
// Status reports what `ovs-appctl dpctl/ipf-get-status` prints, counted as
// lib/ipf.c counts: fragments accepted into a list; completed (sent after
// their set went through the tracker); expired (a list older than 15 s
// dropped by Expire, which Start's goroutine or the datapath calls);
// too small (a fragment other than the last one whose IP packet is
// shorter than min-frag); overlapped (a fragment that overlaps one held,
// duplicates included); purged (fragments of a list stuck 10 s past its
// expiry). Fragments of a disabled family, and fragments refused because
// max-nfrags are held or their list is at its longest, pass to the
// tracker unchanged (which marks a fragment +inv), as Open vSwitch does.
// Where gvs differs: an overlap is any shared byte (Open vSwitch checks
// only whether the new fragment's first or last byte lies inside a held
// one, so a fragment that covers a held one whole never completes and
// expires instead); expired lists are dropped rather than sent on +inv
// (Open vSwitch 3.1 sent them; later releases drop them, as gvs does);
// the reassembled IPv6 packet has its fragment header removed (Open
// vSwitch leaves an atomic fragment header, which gvs's parser would
// still call a fragment).
//
// # Goroutines
//
// Preprocess, Postprocess, the setters, Status and Dump may be called
// from any goroutine at once. The non-fragment path reads nothing shared.
// Setters and counters are atomics; lists are under the mutex. Start
// runs a goroutine that expires and purges lists every second until
// Close.
package ipf
