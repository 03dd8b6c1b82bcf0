package tnlroute

import (
	"net/netip"
	"strconv"
)

// Addresses are kept as Open vSwitch keeps them, 16 bytes with IPv4 as
// v4-mapped IPv6 (::ffff:a.b.c.d), so one table and one cache hold both
// families.

var v4Prefix = [12]byte{10: 0xff, 11: 0xff}

func mapped4(a [4]byte) [16]byte {
	var m [16]byte
	copy(m[:12], v4Prefix[:])
	copy(m[12:], a[:])
	return m
}

func isMapped(a *[16]byte) bool { return [12]byte(a[:12]) == v4Prefix }

func isZero(a *[16]byte) bool { return *a == [16]byte{} }

// prefixMask returns the mask of the first plen bits.
func prefixMask(plen uint8) [16]byte {
	var m [16]byte
	for i := 0; i < 16; i++ {
		switch bits := int(plen) - 8*i; {
		case bits >= 8:
			m[i] = 0xff
		case bits > 0:
			m[i] = byte(0xff << (8 - bits))
		}
	}
	return m
}

func and16(a, m *[16]byte) [16]byte {
	var r [16]byte
	for i := range r {
		r[i] = a[i] & m[i]
	}
	return r
}

// To16 returns a in the table's 16-byte form (IPv4 v4-mapped).
func To16(a netip.Addr) [16]byte { return a.As16() }

// FromTo16 returns the netip form of a 16-byte address: IPv4 for a
// v4-mapped one, the zero Addr for all zeros.
func From16(a [16]byte) netip.Addr {
	if isZero(&a) {
		return netip.Addr{}
	}
	return netip.AddrFrom16(a).Unmap()
}

// FormatAddr formats a as Open vSwitch's ipv6_format_mapped does: a
// v4-mapped address in dotted quad, any other as glibc's inet_ntop
// writes IPv6 (so :: for all zeros).
func FormatAddr(a [16]byte) string {
	if isMapped(&a) {
		return netip.AddrFrom4([4]byte(a[12:])).String()
	}
	return inetNtop6(a)
}

// inetNtop6 is glibc's inet_ntop(AF_INET6): the longest run of two or
// more zero words (the first of equal runs) becomes "::", and an address
// whose first six words are zero (IPv4-compatible), or first five zero
// and the sixth ffff, ends in dotted quad.
func inetNtop6(a [16]byte) string {
	var w [8]uint16
	for i := range w {
		w[i] = uint16(a[2*i])<<8 | uint16(a[2*i+1])
	}
	bestBase, bestLen, curBase, curLen := -1, 0, -1, 0
	for i := 0; i < 8; i++ {
		if w[i] == 0 {
			if curBase == -1 {
				curBase, curLen = i, 1
			} else {
				curLen++
			}
		} else if curBase != -1 {
			if bestBase == -1 || curLen > bestLen {
				bestBase, bestLen = curBase, curLen
			}
			curBase = -1
		}
	}
	if curBase != -1 && (bestBase == -1 || curLen > bestLen) {
		bestBase, bestLen = curBase, curLen
	}
	if bestBase != -1 && bestLen < 2 {
		bestBase = -1
	}
	buf := make([]byte, 0, 46)
	for i := 0; i < 8; i++ {
		if bestBase != -1 && i >= bestBase && i < bestBase+bestLen {
			if i == bestBase {
				buf = append(buf, ':')
			}
			continue
		}
		if i != 0 {
			buf = append(buf, ':')
		}
		if i == 6 && bestBase == 0 && (bestLen == 6 || (bestLen == 5 && w[5] == 0xffff)) {
			buf = netip.AddrFrom4([4]byte(a[12:])).AppendTo(buf)
			break
		}
		buf = strconv.AppendUint(buf, uint64(w[i]), 16)
	}
	if bestBase != -1 && bestBase+bestLen == 8 {
		buf = append(buf, ':')
	}
	return string(buf)
}
