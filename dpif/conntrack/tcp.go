package conntrack

import "encoding/binary"

// TCP states of one peer, numbered as Open vSwitch's CT_DPIF_TCPS_*
// (the order matters: the tracker compares them).
const (
	tcpClosed uint8 = iota
	tcpListen
	tcpSynSent
	tcpSynRecv
	tcpEstablished
	tcpCloseWait
	tcpFinWait1
	tcpClosing
	tcpLastAck
	tcpFinWait2
	tcpTimeWait
)

var tcpStateNames = [...]string{
	"CLOSED", "LISTEN", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "CLOSE_WAIT",
	"FIN_WAIT_1", "CLOSING", "LAST_ACK", "FIN_WAIT_2", "TIME_WAIT",
}

// tcpPeer is what the tracker knows of one end (pf's tcp_peer).
type tcpPeer struct {
	seqlo  uint32 // highest sequence number sent
	seqhi  uint32 // highest the other end acknowledged plus its window
	maxWin uint16 // largest window seen, unscaled
	wscale uint8  // window scale, wscaleFlag when negotiated
	state  uint8
}

const (
	tcpMaxWScale   = 14
	wscaleFlag     = 0x80
	wscaleUnknown  = 0x40
	wscaleMask     = 0x0f
	maxAckWindow   = 0xffff + 1500 // one reassembled fragment of slack
	tcpFIN, tcpSYN = 0x01, 0x02
	tcpRST, tcpPSH = 0x04, 0x08
	tcpACK, tcpURG = 0x10, 0x20
)

// Timeout classes (Open vSwitch's CT_TM_*), indexes into a policy.
const (
	tmTCPFirstPacket = iota
	tmTCPOpening
	tmTCPEstablished
	tmTCPClosing
	tmTCPFinWait
	tmTCPClosed
	tmOtherFirst
	tmOtherMultiple
	tmOtherBidir
	tmICMPFirst
	tmICMPReply
	numTimeouts
)

func seqLT(a, b uint32) bool  { return int32(a-b) < 0 }
func seqLEQ(a, b uint32) bool { return int32(a-b) <= 0 }
func seqGT(a, b uint32) bool  { return int32(a-b) > 0 }
func seqGEQ(a, b uint32) bool { return int32(a-b) >= 0 }

// tcpInvalidFlags rejects flag combinations no stack sends (pf's
// normalisation checks, as Open vSwitch applies them).
func tcpInvalidFlags(f uint16) bool {
	if f&tcpSYN != 0 {
		if f&(tcpRST|tcpFIN) != 0 {
			return true
		}
	} else if f&(tcpACK|tcpRST) == 0 {
		return true
	}
	if f&tcpACK == 0 && f&(tcpFIN|tcpPSH|tcpURG) != 0 {
		return true
	}
	return false
}

// tcpWScale returns the window scale option of a SYN, with wscaleFlag
// when present.
func tcpWScale(tcp []byte) uint8 {
	hlen := int(tcp[12]>>4) * 4
	opt := tcp[20:min(hlen, len(tcp))]
	var ws uint8
	for len(opt) >= 3 {
		switch opt[0] {
		case 0: // end of options
			return ws
		case 1: // no-op
			opt = opt[1:]
			continue
		case 3: // window scale
			ws = min(opt[2], tcpMaxWScale) | wscaleFlag
		}
		l := int(opt[1])
		if l < 2 {
			l = 2
		}
		if l > len(opt) {
			return ws
		}
		opt = opt[l:]
	}
	return ws
}

// tcpSegment is what the TCP tracker reads of a packet.
type tcpSegment struct {
	hdr     []byte // the TCP header and on
	payload uint32 // payload bytes
}

func (s *tcpSegment) flags() uint16 { return binary.BigEndian.Uint16(s.hdr[12:]) & 0x0fff }
func (s *tcpSegment) seq() uint32   { return binary.BigEndian.Uint32(s.hdr[4:]) }
func (s *tcpSegment) ack() uint32   { return binary.BigEndian.Uint32(s.hdr[8:]) }
func (s *tcpSegment) win() uint16   { return binary.BigEndian.Uint16(s.hdr[14:]) }

func tcpValidNew(s *tcpSegment) bool {
	f := s.flags()
	if tcpInvalidFlags(f) {
		return false
	}
	// A SYN+ACK cannot open a connection: only a SYN (a new one) or a
	// segment of one already established.
	return f&(tcpSYN|tcpACK) != tcpSYN|tcpACK
}

// tcpNew initialises the peers from the first segment; returns the
// timeout class.
func tcpNew(c *conn, s *tcpSegment) int {
	f := s.flags()
	src, dst := &c.tcp[0], &c.tcp[1]
	src.seqlo = s.seq()
	src.seqhi = src.seqlo + s.payload + 1
	if f&tcpSYN != 0 {
		src.seqhi++
		src.wscale = tcpWScale(s.hdr)
	} else {
		src.wscale = wscaleUnknown
		dst.wscale = wscaleUnknown
	}
	src.maxWin = max(s.win(), 1)
	if src.wscale&wscaleMask != 0 {
		sws := src.wscale & wscaleMask
		src.maxWin = uint16((uint32(src.maxWin) + 1<<sws - 1) >> sws)
	}
	if f&tcpFIN != 0 {
		src.seqhi++
	}
	dst.seqhi = 1
	dst.maxWin = 1
	src.state = tcpSynSent
	dst.state = tcpClosed
	return tmTCPFirstPacket
}

// tcpUpdate runs a segment of an existing connection through the window
// and sequence checks (Guido van Rooij's algorithm as pf and Open vSwitch
// apply it). reply says which peer sent it; c.mu is held. tm is the
// timeout class to apply, or -1 to leave the expiry as it is.
func tcpUpdate(c *conn, s *tcpSegment, reply, liberal bool) (res updateResult, tm int) {
	sIdx, dIdx := 0, 1
	if reply {
		sIdx, dIdx = 1, 0
	}
	src, dst := &c.tcp[sIdx], &c.tcp[dIdx]
	f := s.flags()
	win := uint32(s.win())
	var sws, dws uint8

	if tcpInvalidFlags(f) {
		return updateInvalid, -1
	}
	if f&(tcpSYN|tcpACK) == tcpSYN {
		if dst.state >= tcpFinWait2 && src.state >= tcpFinWait2 {
			src.state, dst.state = tcpClosed, tcpClosed
			return updateNew, -1
		} else if src.state <= tcpSynSent {
			src.state = tcpSynSent
			return updateValidNew, tmTCPFirstPacket
		}
	}

	if src.wscale&wscaleFlag != 0 && dst.wscale&wscaleFlag != 0 && f&tcpSYN == 0 {
		sws, dws = src.wscale&wscaleMask, dst.wscale&wscaleMask
	} else if src.wscale&wscaleUnknown != 0 && dst.wscale&wscaleUnknown != 0 && f&tcpSYN == 0 {
		sws, dws = tcpMaxWScale, tcpMaxWScale
	}

	seq := s.seq()
	origSeq := seq
	ack := s.ack()
	end := seq + s.payload
	checkAckSkew := true
	if src.state < tcpSynSent {
		// First segment from this end.
		if f&tcpSYN != 0 {
			end++
			if dst.wscale&wscaleFlag != 0 {
				src.wscale = tcpWScale(s.hdr)
				if src.wscale&wscaleFlag != 0 {
					sws = src.wscale & wscaleMask
					win = (win + 1<<sws - 1) >> sws
					dws = dst.wscale & wscaleMask
				} else {
					dst.maxWin <<= dst.wscale & wscaleMask
					dst.wscale = 0
				}
			}
		}
		if f&tcpFIN != 0 {
			end++
		}
		src.seqlo = seq
		src.state = tcpSynSent
		if w := end + max(1, uint32(dst.maxWin)<<dws); src.seqhi == 1 || seqGEQ(w, src.seqhi) {
			src.seqhi = w
			checkAckSkew = false
		}
		if win > uint32(src.maxWin) {
			src.maxWin = uint16(win)
		}
	} else {
		if f&tcpSYN != 0 {
			end++
		}
		if f&tcpFIN != 0 {
			end++
		}
	}

	if f&tcpACK == 0 {
		ack = dst.seqlo
	} else if ack == 0 && f&(tcpACK|tcpRST) == tcpACK|tcpRST {
		ack = dst.seqlo
	}
	if seq == end {
		seq = src.seqlo
		end = seq
	}
	var ackskew int32
	if checkAckSkew {
		ackskew = int32(dst.seqlo - ack)
	}
	dmax := uint32(dst.maxWin) << dws
	if liberal || (seqGEQ(src.seqhi, end) &&
		seqGEQ(seq, src.seqlo-dmax) &&
		ackskew >= -maxAckWindow &&
		int64(ackskew) <= int64(maxAckWindow)<<sws &&
		(f&tcpRST == 0 || origSeq == src.seqlo || origSeq == src.seqlo+1 || origSeq+1 == src.seqlo)) {
		if uint32(src.maxWin) < win {
			src.maxWin = uint16(min(win, 0xffff))
		}
		if seqGT(end, src.seqlo) {
			src.seqlo = end
		}
		if seqGEQ(ack+win<<sws, dst.seqhi) {
			dst.seqhi = ack + max(win<<sws, 1)
		}
		if f&tcpSYN != 0 && src.state < tcpSynSent {
			src.state = tcpSynSent
		}
		if f&tcpFIN != 0 && src.state < tcpClosing {
			src.state = tcpClosing
		}
		if f&tcpACK != 0 {
			if dst.state == tcpSynSent {
				dst.state = tcpEstablished
			} else if dst.state == tcpClosing {
				dst.state = tcpFinWait2
			}
		}
		if f&tcpRST != 0 {
			src.state, dst.state = tcpTimeWait, tcpTimeWait
		}
		switch {
		case src.state >= tcpFinWait2 && dst.state >= tcpFinWait2:
			tm = tmTCPClosed
		case src.state >= tcpClosing && dst.state >= tcpClosing:
			tm = tmTCPFinWait
		case src.state < tcpEstablished || dst.state < tcpEstablished:
			tm = tmTCPOpening
		case src.state >= tcpClosing || dst.state >= tcpClosing:
			tm = tmTCPClosing
		default:
			tm = tmTCPEstablished
		}
		return updateValid, tm
	}
	if (dst.state < tcpSynSent || dst.state >= tcpFinWait2 || src.state >= tcpFinWait2) &&
		seqGEQ(src.seqhi+maxAckWindow, end) &&
		seqGEQ(seq, src.seqlo-maxAckWindow) {
		// Shotgunned SYNs, a connection picked up after it was
		// established, or stray segments right after a close: accepted,
		// but the timeout is left alone so a flood cannot keep the
		// connection alive.
		if uint32(src.maxWin) < win {
			src.maxWin = uint16(min(win, 0xffff))
		}
		if seqGT(end, src.seqlo) {
			src.seqlo = end
		}
		if seqGEQ(ack+win<<sws, dst.seqhi) {
			dst.seqhi = ack + max(win<<sws, 1)
		}
		if f&tcpFIN != 0 && src.state < tcpClosing {
			src.state = tcpClosing
		}
		if f&tcpRST != 0 {
			src.state, dst.state = tcpTimeWait, tcpTimeWait
		}
		return updateValid, -1
	}
	return updateInvalid, -1
}

// tcpStateName is the state dump-conntrack prints: the further of the
// two peers', with FIN_WAIT_2 shown as TIME_WAIT and SYN_RECV as
// ESTABLISHED, as Open vSwitch coalesces them.
func tcpStateName(orig, reply uint8) string {
	s := max(orig, reply)
	switch s {
	case tcpFinWait2:
		s = tcpTimeWait
	case tcpSynRecv:
		s = tcpEstablished
	}
	return tcpStateNames[s]
}
