package upcall

import (
	"time"

	"gvs/ofproto/xlate"
)

// The bridge's clock (xlate.Config.Now) may run ahead of real time:
// ovs-appctl time/warp moves it, and rule timeouts and MAC aging read it.
// Statistics credited to rules must carry its time, or a warp would age a
// rule its traffic just used; the datapath stamps flows in real time.

// bridgeNow is the bridge's clock now.
func bridgeNow(br xlate.Bridge) time.Time {
	if c := br.Config(); c != nil && c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// bridgeTime converts a real time from the datapath to the bridge's clock
// (a zero time stays zero).
func bridgeTime(br xlate.Bridge, real time.Time) time.Time {
	c := br.Config()
	if real.IsZero() || c == nil || c.Now == nil {
		return real
	}
	return real.Add(c.Now().Sub(time.Now()))
}
