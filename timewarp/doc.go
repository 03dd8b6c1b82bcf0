// Package timewarp is the daemon's monotonic clock that ovs-appctl
// time/stop and time/warp control, as Open vSwitch's lib/timeval.c has
// them for its test suites (registered only with --enable-dummy): rule
// timeouts and MAC aging read it, so a test can age flows and MAC entries
// without waiting.
//
// A Clock is real time until Stop or Warp is first called; then it is
// the real time (or, once stopped, the time it was stopped at) plus the
// sum of every warp. Wall-clock readings (log times, durations printed
// against the real clock) are not affected, as in Open vSwitch.
//
// Goroutines: Now is safe from any goroutine and takes no lock until the
// clock was first stopped or warped; Stop and Warp serialise on the
// clock's mutex, a leaf lock.
package timewarp
