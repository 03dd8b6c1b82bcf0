package connmgr

import "gvs/ofproto/ofp"

// event is one asynchronous message the bridge reported, waiting for the
// dispatcher.
type event struct {
	pin    *ofp.PacketIn
	ctrlID uint16 // the packet-in's controller id
	fr     *ofp.FlowRemoved
	port   *ofp.Port // port status: the new description
	old    *ofp.Port // port status: the old one, if any
	reason uint8
	fc     *FlowChange
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
	kick := !m.dispatching
	m.evMu.Unlock()
	if !kick {
		return // the dispatcher at work delivers it before it stops
	}
	select {
	case m.evKick <- struct{}{}:
	default:
	}
}

// PacketIn implements Events.
func (m *Manager) PacketIn(pin *ofp.PacketIn) { m.queue(event{pin: pin}) }

// PacketInTo implements Events.
func (m *Manager) PacketInTo(controllerID uint16, pin *ofp.PacketIn) {
	m.queue(event{pin: pin, ctrlID: controllerID})
}

// FlowRemoved implements Events.
func (m *Manager) FlowRemoved(fr *ofp.FlowRemoved) { m.queue(event{fr: fr}) }

// PortStatus implements Events.
func (m *Manager) PortStatus(reason uint8, desc *ofp.Port) {
	m.queue(event{port: desc, reason: reason})
}

// PortChanged implements Events.
func (m *Manager) PortChanged(reason uint8, old, desc *ofp.Port, o Origin) {
	m.queue(event{port: desc, old: old, reason: reason, origin: o})
}

// FlowMonitor implements Events.
func (m *Manager) FlowMonitor(u *ofp.FlowUpdate, o Origin) {
	m.queue(event{fc: &FlowChange{Update: *u}, origin: o})
}

// FlowChanged implements Events.
func (m *Manager) FlowChanged(fc *FlowChange, o Origin) { m.queue(event{fc: fc, origin: o}) }

// beginDispatch: from now until drainEvents finds the queue empty, queued
// events need no kick. Dispatcher lock held.
func (m *Manager) beginDispatch() {
	m.evMu.Lock()
	m.dispatching = true
	m.evMu.Unlock()
}

// drainEvents delivers the queued events, in order, on the dispatcher.
func (m *Manager) drainEvents() {
	for {
		m.evMu.Lock()
		evs := m.events
		m.events = nil
		if len(evs) == 0 {
			m.dispatching = false
			m.evMu.Unlock()
			return
		}
		m.evMu.Unlock()
		for i := range evs {
			m.deliver(&evs[i])
		}
		m.flushMonitorUpdates()
	}
}
