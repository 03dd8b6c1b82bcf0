package dpif

import (
	"gvs/dpif/conntrack"
)

// newTracker makes the datapath's own tracker, started, with the function
// that closes it.
func newTracker(cfg conntrack.Config) (conntrack.Conntrack, func()) {
	t := conntrack.New(cfg)
	t.Start()
	return t, t.Close
}
