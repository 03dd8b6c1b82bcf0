package upcall

import "gvs/ofproto/xlate"

// Bridge is what the upcall layer needs from a bridge beyond translation:
// the side effects of translating a packet. Helper "core" implements it
// in package ofproto.
type Bridge interface {
	xlate.Bridge
	// SendPacketIn hands a packet-in to the bridge's controller
	// connections (its async sink). It must not block. The packet-in is
	// the bridge's to keep (its Packet is a copy).
	SendPacketIn(pi *xlate.PacketIn)
	// Learn adds the flow a learn action produced, or refreshes it (its
	// timeouts restart) if it exists; errors are the bridge's to log.
	// f is valid during the call only (its Actions and Match may be
	// kept: they are not reused).
	Learn(f *xlate.LearnedFlow) error
}

// Binding is what one datapath port belongs to.
type Binding struct {
	Bridge Bridge
	Port   *xlate.Port
}

// Ports maps datapath port numbers to their bridge and OpenFlow port.
// The bridge layer builds a new map on every port change and publishes it
// with Handler.SetPorts; nobody modifies a published map.
type Ports map[uint32]Binding
