package ofproto

// RunTimers runs every bridge's timers (flow expiry, MAC aging) now, by
// each bridge's clock, without waiting for their next tick: ovs-appctl
// time/warp calls it after moving the clock, so that what the warp aged
// out is gone when the command returns.
func (s *Switch) RunTimers() {
	s.mu.Lock()
	bridges := make([]*Bridge, 0, len(s.bridges))
	for _, b := range s.bridges {
		bridges = append(bridges, b)
	}
	s.mu.Unlock()
	for _, b := range bridges {
		b.RunTimers(b.now())
	}
}
