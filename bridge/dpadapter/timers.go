package dpadapter

// RunTimers runs the OpenFlow bridges' timers now (ovs-appctl time/warp,
// after moving Config.Now's clock).
func (d *Datapath) RunTimers() {
	d.mu.Lock()
	sw := d.sw
	d.mu.Unlock()
	if sw != nil {
		sw.RunTimers()
	}
}
