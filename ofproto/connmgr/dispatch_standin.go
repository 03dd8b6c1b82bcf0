package connmgr

// STAND-IN until ofproto/ofp is on main: the dispatcher answers barriers
// and refuses every other request with OFPBRC_BAD_TYPE; asynchronous
// events are not delivered.

type bundle struct{}
type flowMonitor struct{}

func (m *Manager) expireBundles(c *ofconn) {}

func (m *Manager) deliver(ev *event) {}

func (m *Manager) handleMessage(c *ofconn, b []byte) {
	h := parseHeader(b)
	switch {
	case c.version == OF10 && h.Type == 18, c.version > OF10 && h.Type == 20:
		c.send(encodeEcho(c.version, h.Type+1, h.XID, nil))
	default:
		c.send(encodeRawError(c.version, h.XID, errTypeBadRequest, 1, errorData(b)))
	}
}
