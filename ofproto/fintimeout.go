package ofproto

import "gvs/ofproto/xlate"

var _ xlate.FinTimeoutRule = xrule{}

// ReduceTimeouts implements xlate.FinTimeoutRule: fin_timeout lowers the
// rule's timeouts when its flows see a TCP FIN or RST.
func (x xrule) ReduceTimeouts(idle, hard uint16) { x.r.ReduceTimeouts(idle, hard) }
