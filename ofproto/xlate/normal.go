package xlate

import (
	"fmt"
	"net"
	"time"

	"gvs/ofproto/mac"
	"gvs/ofproto/mf"
	"gvs/packet"
)

// The NORMAL action, after Open vSwitch's xlate_normal: VLAN admission,
// source learning, then output to the learned port or flooding within the
// VLAN, never back out of the input port. Every decision depends on
// in_port, the outer VLAN tag and the two MAC addresses, so those are
// what it adds to the wildcards.

func isMulticast(mac [6]byte) bool { return mac[0]&1 != 0 }

// isReserved reports 01:80:c2:00:00:00 to 01:80:c2:00:00:0f (BPDUs, LACP,
// 802.1X, LLDP...), which a bridge must not forward.
func isReserved(mac [6]byte) bool {
	return mac[0] == 0x01 && mac[1] == 0x80 && mac[2] == 0xc2 && mac[3] == 0 && mac[4] == 0 && mac[5]&0xf0 == 0
}

var allOnesMAC = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

func (ctx *context) normal() {
	f := &ctx.flow
	m := &ctx.wc.Masks
	m.SrcMAC, m.DstMAC = allOnesMAC, allOnesMAC
	m.VLANs[0] = packet.VLANTag{TPID: 0xffff, TCI: 0xffff}
	m.InPort = ^uint32(0)

	// A packet-out from the controller (in_port CONTROLLER or NONE) comes
	// from no port: any VLAN, no learning (Open vSwitch's
	// ofpp_none_bundle).
	in := ctx.br.Port(f.InPort)
	fromController := in == nil && (f.InPort == mf.PortController || f.InPort == mf.PortNone)
	if in == nil && !fromController {
		ctx.warn("no input bundle, dropping")
		return
	}
	var vid uint16
	if f.VLANs[0].Present() {
		vid = f.VLANs[0].VID()
	}
	vlan, inPort := vid, f.InPort
	if !fromController {
		var ok bool
		if vlan, ok = in.VLAN.InputVLAN(vid); !ok {
			ctx.warn("disallowed VLAN VID for this input port, dropping")
			return
		}
		if !ctx.cfg.ForwardBPDU && isReserved(f.DstMAC) {
			ctx.detail("packet has reserved destination MAC, dropping")
			return
		}
	}
	// Open vSwitch asks whether the packet is a gratuitous ARP before
	// learning; the question alone un-wildcards the ARP fields it reads.
	ctx.gratuitousARP()
	macs := ctx.br.MACs()
	ctx.res.Cache.UsesMACs = true
	ctx.notePeerMACs(macs)
	if !fromController && !isMulticast(f.SrcMAC) {
		l := MACLearning{VLAN: vlan, MAC: f.SrcMAC, Port: inPort}
		if ctx.br != ctx.in.Bridge {
			l.Table = macs
		}
		ctx.res.Cache.Normal = append(ctx.res.Cache.Normal, l)
		if ctx.in.SideEffects && macs != nil {
			if macs.Learn(vlan, f.SrcMAC, inPort, ctx.now()) != mac.Refreshed && ctx.trace != nil {
				ctx.detail(fmt.Sprintf("learned that %s is on port %s in VLAN %d", net.HardwareAddr(f.SrcMAC[:]), in.Name, vlan))
			}
		}
	}
	if !isMulticast(f.DstMAC) && macs != nil {
		if no, ok := macs.Lookup(vlan, f.DstMAC); ok {
			switch p := ctx.br.Port(no); {
			case no == inPort:
				ctx.detail("learned port is input port, dropping")
			case p == nil || !p.VLAN.Includes(vlan):
				ctx.warn("learned port is unknown, dropping")
			default:
				ctx.detail("forwarding to learned port")
				ctx.outputNormal(p, vlan)
			}
			return
		}
	}
	ctx.detail("no learned MAC for destination, flooding")
	for _, p := range ctx.br.Ports() {
		if p.OFPort != inPort && p.Config&PortNoFlood == 0 && p.VLAN.Includes(vlan) {
			ctx.outputNormal(p, vlan)
		}
	}
}

// gratuitousARP is Open vSwitch's is_gratuitous_arp, with its effect on
// the wildcards: an ARP reply, or a request whose sender and target
// addresses are equal, broadcast (a VM announcing itself after
// migration). gvs's MAC table has no gratuitous-ARP lock, so only the
// wildcards use it so far.
func (ctx *context) gratuitousARP() bool {
	f, m := &ctx.flow, &ctx.wc.Masks
	if f.EtherType != packet.EtherTypeARP {
		return false
	}
	m.DstMAC = allOnesMAC
	if f.DstMAC != [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} {
		return false
	}
	m.ARPOp |= 0x00ff // nw_proto holds the opcode's low byte
	switch f.ARPOp & 0xff {
	case 2: // ARP_OP_REPLY
		return true
	case 1: // ARP_OP_REQUEST
		m.SrcIPv4, m.DstIPv4 = [4]byte{0xff, 0xff, 0xff, 0xff}, [4]byte{0xff, 0xff, 0xff, 0xff}
		return f.SrcIPv4 == f.DstIPv4
	}
	return false
}

// outputNormal outputs to p with the outer tag p wants for vlan, leaving
// the flow's tags as they were (Open vSwitch's output_normal).
func (ctx *context) outputNormal(p *Port, vlan uint16) {
	f := &ctx.flow
	saved := f.VLANs
	tci := p.VLAN.OutputTCI(vlan, f.VLANs[0].PCP())
	switch {
	case tci == 0 && f.VLANs[0].Present():
		popVLAN(f)
	case tci != 0 && !f.VLANs[0].Present():
		pushVLAN(f, packet.EtherTypeVLAN, tci)
	case tci != 0:
		f.VLANs[0].TCI = tci
	}
	ctx.outputPort(p.OFPort)
	f.VLANs = saved
}

// popVLAN removes the outer tag of f.
func popVLAN(f *mf.Flow) {
	copy(f.VLANs[:], f.VLANs[1:])
	f.VLANs[len(f.VLANs)-1] = packet.VLANTag{}
}

// pushVLAN adds an outer tag to f; a tag pushed out of the key's room is
// lost, as Open vSwitch's flow_push_vlan_uninit.
func pushVLAN(f *mf.Flow, tpid, tci uint16) {
	copy(f.VLANs[1:], f.VLANs[:len(f.VLANs)-1])
	f.VLANs[0] = packet.VLANTag{TPID: tpid, TCI: tci}
}

func (ctx *context) now() time.Time {
	if ctx.cfg.Now != nil {
		return ctx.cfg.Now()
	}
	return time.Now()
}
