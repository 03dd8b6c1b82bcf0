// Package xlate is OpenFlow translation, after Open vSwitch's
// ofproto-dpif-xlate: it walks a bridge's rule tables for a flow,
// following resubmit, goto_table, groups, clone and the action set, and
// produces what the datapath caches (a megaflow: the wildcards of every
// bit any lookup or action consulted, and datapath actions) or a
// slow-path decision, together with the rules and groups it hit (the
// xlate cache, for statistics), NORMAL's MAC learning, learned flows and
// packet-ins.
//
// The NORMAL action is one action here (normal.go): it learns the source
// and outputs to the learned port or floods within the VLAN, adding the
// bits it consulted (in_port, the outer VLAN tag, both MAC addresses) to
// the wildcards.
//
// # Datapath actions
//
// Actions that change the flow change the translation's working copy; the
// difference from the flow the datapath last saw is committed as
// datapath set actions when it matters (before an output, a
// recirculation, a userspace action), as Open vSwitch's
// commit_odp_actions: per key attribute, only the fields that changed,
// masked by what the megaflow matches. Pipeline state (metadata,
// registers) never reaches the datapath.
//
// # Conntrack
//
// ct and nat translate as Open vSwitch's compose_conntrack_action
// (conntrack.go): the flow's pending changes are committed, the nested
// actions fill a conntrack.Request, and a datapath ct action carries it.
// With table=N the translation forks: a frozen state (marked
// Conntracked) resumes at table N when the datapath recirculates the
// packet with the tracker's ct fields, while this translation goes on
// with the packet untracked. The megaflow holds a ct field only where a
// lookup (or ct_clear, or a freeze) read it. ofproto/trace follows each
// such recirculation (TraceText, TraceOptions.CTNext).
//
// # Patch ports
//
// A Port with Patch set has no datapath port: output to it continues the
// translation in the peer bridge (patch.go, Open vSwitch's
// patch_port_output), whose lookups, rules, groups, meters and MAC table
// are used until the crossing returns; the flow, stack, action set and
// conntrack state of the calling bridge are restored afterwards, and the
// peer's exit and errors do not propagate. The xlate cache records each
// crossing (Cache.Patches: the ports' counters) and the peer bridges' MAC
// tables NORMAL consulted (Cache.PeerMACs, whose change counts the
// revalidator watches). A frozen state records the bridge it was frozen
// in; resuming it translates in that bridge (thawBridge) even when the
// packet's input port belongs to another.
//
// # Open vSwitch's behaviour
//
// Where it shows (datapath actions, megaflows, ofproto/trace text), the
// behaviour is Open vSwitch 3.1's, and the tests compare it with Debian's
// ovs-vswitchd: see docs/openflow-translation.md.
//
// # Frozen states
//
// What a datapath flow cannot carry (the pipeline's registers and
// metadata, the actions left to run) is frozen into a RecircTable entry
// whose id the datapath actions name: a controller action's userspace
// cookie, or a recirculation. Equal states share an id, so translating a
// flow again yields the same datapath actions.
//
// # Goroutines and ownership
//
// A Translator is one goroutine's reusable scratch space: Translate must
// not be called concurrently on the same Translator, and the Result it
// returns is valid until the next call. Translators for the same bridge
// run concurrently: everything they read from the Bridge is immutable or
// synchronised by the Bridge (see the Bridge interface), and the only
// shared state they write is the MAC table (its own lock) when
// Input.SideEffects is set.
package xlate
