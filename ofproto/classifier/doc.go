// Package classifier is the OpenFlow rule classifier, after Open
// vSwitch's lib/classifier.c: rules with a match (mf.Match) and a
// priority, looked up by flow (mf.Flow) to find the highest-priority rule
// that matches, reporting in a mf.Wildcards the bits the lookup had to
// examine so that translation can build a megaflow no wider than what the
// decision depended on.
//
// # Structure
//
// Tuple space search: rules with the same mask share a subtable, a hash
// table on the masked flow. Rules with the same mask and the same masked
// flow share a bucket, ordered by priority (highest first). Subtables are
// searched in descending order of the highest priority they hold, and the
// search stops as soon as no remaining subtable can beat the best match
// found, so the subtables not searched add nothing to the wildcards.
//
// Staged lookup: a subtable's mask is split into four stages (metadata,
// L2, L3, L4: packet.Key's field order, with mf.Flow's pipeline fields in
// the metadata stage). For every stage but the last, the subtable keeps
// the set of hashes of its rules' values up to that stage; a lookup that
// finds its flow's hash missing from a stage's set stops there, and only
// the mask bits of the stages it examined go into the wildcards. A packet
// to an unknown IP destination thus does not unwildcard the L4 ports of a
// subtable whose rules all name other destinations.
//
// Prefix tries (Open vSwitch's Flow_Table prefixes; by default nw_dst and
// nw_src, as its ofproto): for each prefix field the classifier keeps a
// binary trie of the prefixes its rules match on that field, counted once
// per rule whose subtable's mask on the field is a CIDR prefix. Before a
// subtable's stage holding the field, a lookup with wildcards walks the
// trie once (then remembers the answer for the other subtables): if no
// rule prefix of the subtable's length matches the packet, no rule of the
// subtable can, and the lookup skips it, adding only the leading bits of
// the field the trie had to read to tell (plus the stages before), not
// the subtable's whole mask. A packet to 198.18.0.1 against a rule on
// nw_dst=10.0.0.0/16 then makes a megaflow on nw_dst=128.0.0.0/1. A trie
// holds invisible rules too until they are removed: a superset costs
// precision, never correctness. Each subtable whose mask has L4 port bits
// also keeps a trie of its rules' masked ports (Open vSwitch's ports
// trie): a lookup that misses in its final stage adds only the leading
// port bits that told the packet apart (tp_dst=0x1000/0xf000 for port 5201
// against a rule on port 80) and the final stage's other bits.
//
// Conjunctive matches (OpenFlow conjunction(id,k/n)): a rule with
// Conjunctions set is a clause of a conjunction, a "soft" match. When the
// highest-priority matches are soft, the lookup checks whether every
// clause 0..n-1 of a conjunction matched at one priority; if so it sets
// the flow's conj_id and looks up again (as Open vSwitch's
// classifier_lookup__ does), and the rule matching conj_id=id is the
// result.
//
// # Versions
//
// Every rule is visible from the version it was inserted in until the
// version it is made invisible in (MakeInvisible); a lookup sees the rules
// visible in the version it is given. A bundle of changes inserts and
// hides rules at version N+1 while lookups still use N; publishing N+1 (the
// caller's job) makes all of them visible at once, so no lookup sees half
// a bundle. Invisible rules stay in place until Collect removes them: the
// first Collect after MakeInvisible hands them to the next, which removes
// them, so a rule stays at least one Collect interval after it was hidden
// and a lookup that started at the old version still finds it.
//
// # Goroutines
//
// One writer at a time (the caller serialises Insert, MakeInvisible,
// Remove, Collect and the iteration methods, e.g. under ofproto's table
// mutex); any number of concurrent readers call Lookup without locks and
// without allocating. The tries are changed in place by the writer: a
// node is linked in whole with one atomic store, rule counts are atomic,
// a node's prefix never changes once linked (as Open vSwitch's RCU tries),
// so a reader sees each trie before or after each change. Readers load immutable subtable lists and bucket
// lists through atomic pointers; the writer replaces them whole, as
// dpif's megaflow classifier does. A Rule belongs to at most one
// Classifier; its Match and Priority must not change once inserted.
package classifier
