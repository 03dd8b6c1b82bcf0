package connmgr

// event is one asynchronous message the bridge reported, waiting for the
// dispatcher.
type event struct {
	pin    *PacketIn
	fr     *FlowRemoved
	ps     *PortDesc
	reason uint8
	fu     *FlowUpdate
	origin Origin
}

// maxQueuedPacketIns bounds the packet-ins waiting for the dispatcher;
// beyond it they are dropped (each connection's own queue is bounded by
// controller_queue_size as well).
const maxQueuedPacketIns = 1024

func (m *Manager) queue(ev event) {
	m.evMu.Lock()
	if ev.pin != nil {
		n := 0
		for i := range m.events {
			if m.events[i].pin != nil {
				n++
			}
		}
		if n >= maxQueuedPacketIns {
			m.pinDropped++
			m.evMu.Unlock()
			return
		}
	}
	m.events = append(m.events, ev)
	m.evMu.Unlock()
	select {
	case m.evKick <- struct{}{}:
	default:
	}
}

// PacketIn implements Events.
func (m *Manager) PacketIn(pin *PacketIn) { m.queue(event{pin: pin}) }

// FlowRemoved implements Events.
func (m *Manager) FlowRemoved(fr *FlowRemoved) { m.queue(event{fr: fr}) }

// PortStatus implements Events.
func (m *Manager) PortStatus(reason uint8, desc *PortDesc) {
	m.queue(event{ps: desc, reason: reason})
}

// FlowMonitor implements Events.
func (m *Manager) FlowMonitor(u *FlowUpdate, o Origin) { m.queue(event{fu: u, origin: o}) }

// drainEvents delivers the queued events, in order, on the dispatcher.
func (m *Manager) drainEvents() {
	for {
		m.evMu.Lock()
		evs := m.events
		m.events = nil
		m.evMu.Unlock()
		if len(evs) == 0 {
			return
		}
		for i := range evs {
			m.deliver(&evs[i])
		}
	}
}
