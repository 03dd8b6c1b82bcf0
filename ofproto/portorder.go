package ofproto

import (
	"math/bits"

	"gvs/ofproto/mf"
	"gvs/ofproto/xlate"
)

// ovsPortOrder orders ports the way Open vSwitch's ofproto->ports hmap
// iterates them, which is the order of its port and queue statistics
// replies (ovs-ofctl prints those unsorted): buckets in index order, each
// bucket newest first, the hash being hash_ofp_port (generic murmur
// hash_int, as Debian builds it without SSE4.2). The hmap's history is
// not kept: ports are taken as added local port first, then by
// ascending number, as a bridge created with its ports is.
func ovsPortOrder(ports []*xlate.Port) []*xlate.Port {
	inserted := make([]*xlate.Port, 0, len(ports))
	for _, p := range ports {
		if p.OFPort == mf.PortLocal {
			inserted = append(inserted, p)
		}
	}
	for _, p := range ports {
		if p.OFPort != mf.PortLocal {
			inserted = append(inserted, p)
		}
	}
	var h portHmap
	for _, p := range inserted {
		h.insert(p)
	}
	out := make([]*xlate.Port, 0, len(ports))
	for _, b := range h.buckets {
		out = append(out, b...)
	}
	return out
}

// portHmap mimics lib/hmap.c's insertion, growth and iteration order.
type portHmap struct {
	buckets [][]*xlate.Port // each newest first
	mask    uint32
	n       uint32
}

func (h *portHmap) insert(p *xlate.Port) {
	if h.buckets == nil {
		h.buckets = make([][]*xlate.Port, 1)
	}
	h.push(p)
	h.n++
	if h.n/2 > h.mask {
		h.resize(hmapCalcMask(h.n))
	}
}

func (h *portHmap) push(p *xlate.Port) {
	i := hashOFPort(p.OFPort) & h.mask
	h.buckets[i] = append([]*xlate.Port{p}, h.buckets[i]...)
}

// resize rehashes as hmap's resize does: old buckets in order, each
// node pushed onto the head of its new bucket.
func (h *portHmap) resize(mask uint32) {
	old := h.buckets
	h.buckets, h.mask = make([][]*xlate.Port, mask+1), mask
	for _, b := range old {
		for _, p := range b {
			h.push(p)
		}
	}
}

// hmapCalcMask is hmap.c's calc_mask.
func hmapCalcMask(capacity uint32) uint32 {
	mask := capacity / 2
	mask |= mask >> 1
	mask |= mask >> 2
	mask |= mask >> 4
	mask |= mask >> 8
	mask |= mask >> 16
	mask |= (mask & 1) << 1
	return mask
}

// hashOFPort is hash_ofp_port: hash_int(port, 0), i.e. the murmur-based
// hash_2words(port, 0).
func hashOFPort(port uint32) uint32 {
	return mhashFinish(mhashAdd(mhashAdd(port, 0), 0) ^ 8)
}

func mhashAdd(hash, data uint32) uint32 {
	if data != 0 {
		data *= 0xcc9e2d51
		data = bits.RotateLeft32(data, 15)
		data *= 0x1b873593
		hash ^= data
	}
	hash = bits.RotateLeft32(hash, 13)
	return hash*5 + 0xe6546b64
}

func mhashFinish(hash uint32) uint32 {
	hash ^= hash >> 16
	hash *= 0x85ebca6b
	hash ^= hash >> 13
	hash *= 0xc2b2ae35
	hash ^= hash >> 16
	return hash
}
