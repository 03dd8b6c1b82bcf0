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
// Not yet built: Open vSwitch's prefix tries on IP addresses and ports,
// which let a failed lookup unwildcard only the prefix bits that told it
// apart; here a subtable whose L3 stage is examined contributes all of
// its L3 mask bits.
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
// without allocating. Readers load immutable subtable lists and bucket
// lists through atomic pointers; the writer replaces them whole, as
// dpif's megaflow classifier does. A Rule belongs to at most one
// Classifier; its Match and Priority must not change once inserted.
package classifier
