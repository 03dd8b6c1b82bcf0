package dummy

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
)

// Registrar is where commands go: unixctl.Server's Register.
type Registrar interface {
	Register(name, usage string, minArgs, maxArgs int, fn func(args []string) (string, error))
}

// RegisterCommands registers Open vSwitch's netdev-dummy/* commands on s
// (as ovs-vswitchd --enable-dummy does), acting on r's devices, with
// their usage strings, replies and error texts:
//
//	netdev-dummy/receive NAME [--qid N] PACKET|FLOW [--len N]...
//	netdev-dummy/set-admin-state [NAME] up|down
//	netdev-dummy/conn-state [NAME]
//	netdev-dummy/ip4addr NAME ADDR/PREFIX   (answers ARP requests for ADDR)
//	netdev-dummy/ip6addr NAME ADDR
func (r *Registry) RegisterCommands(s Registrar) {
	s.Register("netdev-dummy/receive", "name [--qid queue_id] packet|flow [--len packet_len]", 2, 1<<16, r.receive)
	s.Register("netdev-dummy/set-admin-state", "[netdev] up|down", 1, 2, r.setAdminState)
	s.Register("netdev-dummy/conn-state", "[netdev]", 0, 1, r.connState)
	s.Register("netdev-dummy/ip4addr", "[netdev] ipaddr/mask-prefix-len", 2, 2, r.ip4addr)
	s.Register("netdev-dummy/ip6addr", "[netdev] ip6addr", 2, 2, r.ip6addr)
}

// ReceiveArgs turns netdev-dummy/receive's PACKET arguments (after the
// device name and --qid) into frames: hex of a frame, else a datapath
// flow, optionally followed by --len N.
func ReceiveArgs(args []string) ([][]byte, error) {
	var frames [][]byte
	for i := 0; i < len(args); i++ {
		if frame, err := FrameFromHex(args[i]); err == nil {
			frames = append(frames, frame)
			continue
		}
		size := 0
		flow := args[i]
		if i+2 < len(args) && args[i+1] == "--len" {
			n, _ := strconv.Atoi(args[i+2])
			if n < MinFrameLen {
				return nil, errors.New("too small packet len")
			}
			size = n
			i += 2
		}
		frame, err := ComposeFrame(flow, size)
		if err != nil {
			return nil, err
		}
		frames = append(frames, frame)
	}
	return frames, nil
}

func (r *Registry) receive(args []string) (string, error) {
	d := r.Lookup(args[0])
	if d == nil {
		return "", errors.New("no such dummy netdev")
	}
	args = args[1:]
	q := 0
	if len(args) > 1 && args[0] == "--qid" {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 0 || n >= d.NumRxQueues() {
			return "", ErrNoQueue
		}
		q = n
		args = args[2:]
	}
	frames, err := ReceiveArgs(args)
	if err != nil {
		return "", err
	}
	for _, f := range frames {
		if err := d.Receive(q, f); err != nil {
			return "", err
		}
	}
	return "", nil
}

func (r *Registry) setAdminState(args []string) (string, error) {
	var up bool
	switch strings.ToLower(args[len(args)-1]) {
	case "up":
		up = true
	case "down":
	default:
		return "", errors.New("Invalid Admin State")
	}
	if len(args) == 2 {
		d := r.Lookup(args[0])
		if d == nil {
			return "", errors.New("Unknown Dummy Interface")
		}
		d.SetAdminState(up)
		return "OK", nil
	}
	for _, d := range r.Devices() {
		d.SetAdminState(up)
	}
	return "OK", nil
}

// connState reports options:stream connections: for one device, or every
// device that has one.
func (r *Registry) connState(args []string) (string, error) {
	if len(args) == 1 {
		state := "unknown"
		if d := r.Lookup(args[0]); d != nil {
			state = d.ConnState()
		}
		return args[0] + ": " + state + "\n", nil
	}
	var b strings.Builder
	for _, d := range r.Devices() {
		if state := d.ConnState(); state != "unknown" {
			b.WriteString(d.Name() + ": " + state + "\n")
		}
	}
	return b.String(), nil
}

func (r *Registry) ip4addr(args []string) (string, error) {
	d := r.Lookup(args[0])
	if d == nil {
		return "", errors.New("Unknown Dummy Interface")
	}
	p, err := netip.ParsePrefix(args[1])
	if err != nil {
		a, aerr := netip.ParseAddr(args[1])
		if aerr != nil || !a.Is4() {
			return "", errors.New(args[1] + ": invalid IP address")
		}
		p = netip.PrefixFrom(a, 32)
	}
	if !p.Addr().Is4() {
		return "", errors.New(args[1] + ": invalid IP address")
	}
	d.addIPv4(p.Addr().As4())
	d.setInAddr(p)
	return "OK", nil
}

func (r *Registry) ip6addr(args []string) (string, error) {
	d := r.Lookup(args[0])
	if d == nil {
		return "", errors.New("Unknown Dummy Interface")
	}
	a, err := netip.ParseAddr(args[1])
	bits := 128
	if err != nil {
		p, perr := netip.ParsePrefix(args[1])
		a, err, bits = p.Addr(), perr, p.Bits()
	}
	if err != nil || !a.Is6() {
		return "", errors.New(args[1] + ": invalid IPv6 address")
	}
	d.setInAddr(netip.PrefixFrom(a, bits))
	return "OK", nil
}
