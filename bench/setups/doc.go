// Package setups holds the switches the benchmark compares, each behind the
// Setup interface: a direct veth pair (the box's limit), the Linux bridge,
// Debian's Open vSwitch netdev datapath in several configurations, and gvs.
//
// A Setup is started on a topo.Topo whose namespaces exist and stopped
// before the next setup starts; Start returns only once a ping passes
// through the switch. A setup that cannot run here (software missing, a
// feature refused, gvs not forwarding yet) returns a *SkipError, which the
// runner reports as "skipped: reason" and never as a failure. Setups are
// used from one goroutine.
//
// Daemons are started privately: their own database, run, log and control
// files in a temporary directory, stopped by their own pid, never the
// packaged service.
package setups
