package connmgr

import (
	"fmt"
	"time"
)

// failOpenPriority is Open vSwitch's FAIL_OPEN_PRIORITY: above every
// OpenFlow priority, so the flow is hidden from OpenFlow.
const failOpenPriority = 0xf0f0f0

// failOpen is Open vSwitch's fail-open (fail_mode standalone with
// controllers): when no primary controller has been connected and
// admitted for three probe intervals, the bridge behaves as a learning
// switch through a hidden NORMAL flow, until one is.
type failOpen struct {
	active      bool
	lastDisconn time.Duration
}

// failOpenEnabled: fail-open exists with controllers in standalone mode.
func (m *Manager) failOpenEnabled() bool {
	return m.hasControllers() && !m.failSecure
}

// failureDuration is connmgr_failure_duration: the shortest time any
// primary controller has gone without an admitted connection (0 without
// controllers).
func (m *Manager) failureDuration() time.Duration {
	if !m.hasControllers() {
		return 0
	}
	now := m.now()
	d := time.Duration(1<<63 - 1)
	for _, s := range m.services {
		if s.active && s.config().Type == Primary {
			d = min(d, s.failureDuration(now))
		}
	}
	return d
}

// failOpenTrigger is three times the longest probe interval: time to
// probe, to wait for the answer and to reconnect.
func (m *Manager) failOpenTrigger() time.Duration {
	var p time.Duration
	for _, s := range m.services {
		if s.active && s.config().Type == Primary {
			p = max(p, s.config().ProbeInterval)
		}
	}
	if p == 0 {
		return time.Duration(1<<63 - 1)
	}
	return 3 * p
}

// failOpenRun is fail_open_run.
func (m *Manager) failOpenRun() {
	if !m.failOpenEnabled() {
		if m.failOpen.active {
			m.failOpen = failOpen{}
			m.br.DeleteFlow(nil, failOpenPriority)
		}
		return
	}
	d := m.failureDuration()
	if d < time.Second || d < m.failOpenTrigger() {
		return
	}
	secs := int(d / time.Second)
	switch {
	case !m.failOpen.active:
		m.log.Warn(fmt.Sprintf("Could not connect to controller (or switch failed controller's post-connection admission control policy) for %d seconds, failing open", secs))
		m.failOpen = failOpen{active: true, lastDisconn: d}
		m.flushFlows()
	case d > m.failOpen.lastDisconn+time.Minute:
		m.log.Info(fmt.Sprintf("Still in fail-open mode after %d seconds disconnected from controller", secs))
		m.failOpen.lastDisconn = d
	}
}

// failOpenMaybeRecover is fail_open_maybe_recover: an admitted controller
// ends fail-open.
func (m *Manager) failOpenMaybeRecover() {
	if m.failOpen.active && m.connected.Load() > 0 {
		m.log.Warn("No longer in fail-open mode")
		m.failOpen = failOpen{}
		m.br.DeleteFlow(nil, failOpenPriority)
	}
}
