package ipf

import (
	"encoding/binary"

	"gvs/packet"
)

// reassemble writes the packet l's sorted, complete fragments make into
// rb, with the metadata of cur (the fragment that completed the set),
// and parses it. It reports false when the packet would exceed 64 KiB of
// IP or rb's room.
func (l *fragList) reassemble(rb *packet.Buffer, cur *packet.Buffer) bool {
	rb.Reset()
	first := &l.frags[0]
	last := &l.frags[len(l.frags)-1]
	l3 := int(first.meta.Offsets.L3)
	// The head: L2, the IP header and (IPv6) the unfragmentable
	// extension headers, without the fragment header.
	head := first.dataOff
	if l.v6 {
		head = l.fragHdrOff
	}
	ipLen := head - l3 + last.last + 1
	if l.v6 {
		if ipLen-packet.IPv6HeaderLen > ipPacketMax {
			return false
		}
	} else if ipLen > ipPacketMax {
		return false
	}
	size := head + last.last + 1
	if size > len(rb.Room()) {
		return false
	}
	rb.SetLen(size)
	d := rb.Data()
	copy(d, first.data[:head])
	for i := range l.frags {
		h := &l.frags[i]
		copy(d[head+h.first:], h.data[h.dataOff:])
	}
	if l.v6 {
		d[l.prevNextOff] = first.data[l.fragHdrOff] // the fragment header's next header
		binary.BigEndian.PutUint16(d[l3+4:], uint16(ipLen-packet.IPv6HeaderLen))
	} else {
		binary.BigEndian.PutUint16(d[l3+2:], uint16(ipLen))
		// Clear MF and the offset (both zero for the whole packet), keep DF.
		d[l3+6] &= 0x40
		d[l3+7] = 0
		ihl := int(d[l3]&0x0f) * 4
		c := packet.IPv4HeaderChecksum(d[l3 : l3+ihl])
		d[l3+10], d[l3+11] = byte(c>>8), byte(c)
	}
	rb.Meta = cur.Meta
	rb.HasVnet = false
	rb.Vnet = packet.VnetHdr{}
	rb.Key = cur.Key
	rb.Parse()
	return true
}
