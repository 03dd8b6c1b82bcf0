// Package mac is the NORMAL action's state, after Open vSwitch's
// lib/mac-learning and the VLAN part of ofproto-dpif-xlate: a bridge's
// MAC learning table (per-VLAN, aging, a size limit evicting fairly: the
// least recently used entry of the port holding the most entries) and a
// port's VLAN behaviour (Port columns tag, trunks, vlan_mode).
//
// # Goroutines and ownership
//
// Table is safe for concurrent use: translation (upcall handlers and the
// revalidator) looks up and learns, the bridge ages and flushes. Each
// method takes the table's own mutex; none calls out while holding it.
// Table.Seq changes whenever an entry is added, moved or removed, so the
// revalidator can tell that flows decided on an older table may be wrong.
// VLANPort is immutable after NewVLANPort: share it freely.
package mac
