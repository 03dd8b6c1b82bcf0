package connmgr

import (
	"bytes"
	"fmt"
	"time"

	"gvs/ofproto/ofp"
)

// deliver sends one asynchronous event to the connections that want it
// (connmgr_send_async_msg, connmgr_send_flow_removed,
// connmgr_send_port_status, ofmonitor_report).
func (m *Manager) deliver(ev *event) {
	switch {
	case ev.pin != nil:
		m.sendPacketIn(ev.pin, ev.ctrlID)
	case ev.fr != nil:
		for _, c := range m.sortedConns() {
			if !c.receivesAsync(AsyncFlowRemoved, ev.fr.Reason) {
				continue
			}
			fr := *ev.fr
			fr.NX = c.version == OF10 && c.state.flowFormat == ofp.FlowFormatNXM
			m.sendAsync(c, &fr)
		}
	case ev.port != nil:
		for _, c := range m.sortedConns() {
			if !c.receivesAsync(AsyncPortStatus, ev.reason) {
				continue
			}
			if ev.origin.Conn == c.id && c.version < OF15 {
				continue
			}
			b, err := ofp.Encode(c.version, 0, &ofp.PortStatus{Reason: ev.reason, Desc: *ev.port})
			if err != nil {
				m.log.Error(fmt.Sprintf("%s: cannot encode port status: %v", c.name, err))
				continue
			}
			if ev.reason == ofp.PortReasonModify && ev.old != nil {
				if ob, err := ofp.Encode(c.version, 0, &ofp.PortStatus{Reason: ev.reason, Desc: *ev.old}); err == nil && bytes.Equal(ob, b) {
					continue
				}
			}
			c.send(b)
		}
	case ev.fc != nil:
		m.reportFlowChange(ev.fc, ev.origin)
	}
}

// sortedConns lists the connections in the order they were made, so that
// every connection sees asynchronous messages in one order.
func (m *Manager) sortedConns() []*ofconn {
	out := make([]*ofconn, 0, len(m.conns))
	for _, c := range m.conns {
		out = append(out, c)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].id < out[j-1].id; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func (m *Manager) sendAsync(c *ofconn, msg ofp.Msg) {
	b, err := ofp.Encode(c.version, 0, msg)
	if err != nil {
		m.log.Error(fmt.Sprintf("%s: cannot encode asynchronous message: %v", c.name, err))
		return
	}
	c.send(b)
}

// sendPacketIn is connmgr_send_async_msg for a packet-in: to the
// connections with the packet-in's controller id whose async config
// takes its reason, in each one's packet-in format, the reason as its
// version knows it.
func (m *Manager) sendPacketIn(pin *ofp.PacketIn, controllerID uint16) {
	for _, c := range m.sortedConns() {
		if c.state.controller != controllerID || !c.receivesAsync(AsyncPacketIn, pin.Reason) {
			continue
		}
		p := *pin
		p.Format = c.state.pinFormat
		p.Reason = wireReason(pin.Reason, c.version)
		p.BufferID = ofp.BufferNone
		if p.TotalLen == 0 {
			p.TotalLen = uint32(len(p.Packet))
		}
		b, err := ofp.Encode(c.version, 0, &p)
		if err != nil {
			m.log.Error(fmt.Sprintf("%s: cannot encode packet-in: %v", c.name, err))
			continue
		}
		isMiss := 0
		if pin.Reason == ReasonNoMatch || pin.Reason == ReasonExplicitMiss || pin.Reason == ReasonImplicitMiss {
			isMiss = 1
		}
		if ps := c.sched[isMiss]; ps != nil && !ps.send(pin.Metadata.Flow.InPort, b, m.now()) {
			m.armPinTimer(ps.wait())
			continue
		}
		m.queuePacketIn(c, b)
	}
}

func (m *Manager) queuePacketIn(c *ofconn, b []byte) {
	if !c.sendPacketIn(b, c.svc.config().QueueSize) {
		m.pinDropped++
		m.log.Info(fmt.Sprintf("%s: dropping packet-in due to queue overflow", c.name))
	}
}

// setRateLimit is ofconn_set_rate_limit: the connection's packet-in
// schedulers follow its service's controller_rate_limit and burst.
func (m *Manager) setRateLimit(c *ofconn) {
	cfg := c.svc.config()
	for i := range c.sched {
		switch {
		case cfg.RateLimit <= 0:
			for _, b := range c.sched[i].drain() {
				m.queuePacketIn(c, b)
			}
			c.sched[i] = nil
		case c.sched[i] == nil:
			c.sched[i] = newPinsched(cfg.RateLimit, cfg.BurstLimit, m.now())
		default:
			c.sched[i].setLimits(cfg.RateLimit, cfg.BurstLimit)
		}
	}
}

// armPinTimer makes the dispatcher run the schedulers within d.
func (m *Manager) armPinTimer(d time.Duration) {
	at := time.Now().Add(d)
	if m.pinC != nil && !at.Before(m.pinAt) {
		return
	}
	if m.pinTimer == nil {
		m.pinTimer = time.NewTimer(d)
	} else {
		m.pinTimer.Reset(d)
	}
	m.pinC, m.pinAt = m.pinTimer.C, at
}

// runPinscheds sends the queued packet-ins the rate limits allow now.
func (m *Manager) runPinscheds() {
	now := m.now()
	var next time.Duration
	for _, c := range m.sortedConns() {
		for _, ps := range c.sched {
			if ps == nil {
				continue
			}
			for _, b := range ps.run(now) {
				m.queuePacketIn(c, b)
			}
			if w := ps.wait(); w > 0 && (next == 0 || w < next) {
				next = w
			}
		}
	}
	if next > 0 {
		m.armPinTimer(next)
	}
}

// wireReason is Open vSwitch's encode_packet_in_reason: the OpenFlow 1.4
// refinements of "action" are "action" before 1.4; an explicit miss (a
// table-miss flow sending to the controller) is "action" before 1.3 and
// "no match" since; an implicit miss is "no match".
func wireReason(r uint8, version uint8) uint8 {
	switch r {
	case ReasonActionSet, ReasonGroup, ReasonPacketOut:
		if version < OF14 {
			return ReasonAction
		}
	case ReasonExplicitMiss:
		if version < OF13 {
			return ReasonAction
		}
		return ReasonNoMatch
	case ReasonImplicitMiss:
		return ReasonNoMatch
	}
	return r
}
