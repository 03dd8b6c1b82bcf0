//go:build !pending

package upcall

import "gvs/dpif"

// STAND-IN until dpif's userspace action is on main (userspace.go, built
// with the "pending" tag, replaces this file).
func (r *revalidator) sweepRecirc()                     {}
func (r *revalidator) noteRecircIDs(fe *dpif.FlowEntry) {}
