package xlate

import (
	"encoding/binary"
	"fmt"

	"gvs/ofproto/mf"
	"gvs/packet"
)

// maxLivenessRecursion bounds watch_group chains, as Open vSwitch's
// MAX_LIVENESS_RECURSION.
const maxLivenessRecursion = 32

// group translates output to group id; false means the group does not
// exist and the current action list stops (Open vSwitch's
// xlate_group_action).
func (ctx *context) group(id uint32) bool {
	g := ctx.br.Group(ctx.version, id)
	if g == nil {
		if ctx.trace != nil {
			ctx.warn(fmt.Sprintf("output to nonexistent group %d", id))
		}
		return false
	}
	if !ctx.resourceCheck() {
		return true
	}
	wasInGroup := ctx.inGroup
	ctx.inGroup = true
	buckets := g.Buckets()
	switch g.GroupType() {
	case GroupAll, GroupIndirect:
		for i := range buckets {
			ctx.bucket(g, &buckets[i])
		}
		ctx.res.Cache.Groups = append(ctx.res.Cache.Groups, GroupHit{Group: g, Bucket: -1})
	case GroupSelect:
		i := -1
		if m, _, _ := g.Selection(); m == SelectDPHash && ctx.hashed() {
			i = ctx.dpHashBucket(buckets)
		} else {
			i = ctx.selectBucket(g, buckets)
		}
		if i >= 0 {
			if ctx.trace != nil {
				ctx.detail(fmt.Sprintf("using bucket %d", buckets[i].ID))
			}
			ctx.bucket(g, &buckets[i])
			ctx.res.Cache.Groups = append(ctx.res.Cache.Groups, GroupHit{Group: g, Bucket: i})
		} else {
			ctx.detail("no live bucket")
		}
	case GroupFastFailover:
		i := -1
		for j := range buckets {
			if ctx.bucketAlive(g.GroupType(), &buckets[j], 0) {
				i = j
				break
			}
		}
		if i >= 0 {
			if ctx.trace != nil {
				ctx.detail(fmt.Sprintf("using bucket %d", buckets[i].ID))
			}
			ctx.bucket(g, &buckets[i])
			ctx.res.Cache.Groups = append(ctx.res.Cache.Groups, GroupHit{Group: g, Bucket: i})
		} else {
			ctx.detail("no live bucket")
		}
	}
	ctx.inGroup = wasInGroup
	return true
}

// bucket runs a bucket's actions (an action set) on a copy of the flow:
// later actions see the flow as it was before the group (Open vSwitch's
// xlate_group_bucket).
func (ctx *context) bucket(g Group, b *Bucket) {
	var saved *[]*traceNode
	if ctx.trace != nil {
		saved = ctx.trace.enter(nodeBucket, fmt.Sprintf("bucket %d", b.ID))
	}
	oldFlow := ctx.flow
	list := actionSetList(b.Actions, nil)
	ctx.depth++
	ctx.doActions(list, false)
	ctx.depth--
	if ctx.freezing {
		ctx.finishFreeze() // within the bucket, as Open vSwitch's
	}
	ctx.flow = oldFlow
	ctx.trace.leave(saved)
	// A bucket that exits does not end the translation after the group.
	ctx.exit = ctx.res.Error != nil
}

// bucketAlive is Open vSwitch's bucket_is_alive.
func (ctx *context) bucketAlive(t GroupType, b *Bucket, depth int) bool {
	if depth >= maxLivenessRecursion {
		ctx.errorMsg(fmt.Sprintf("bucket chaining exceeded %d links", maxLivenessRecursion))
		return false
	}
	if t == GroupSelect && b.Weight == 0 {
		return false
	}
	hasPort := b.WatchPort != mf.PortNone && b.WatchPort != 0xffffffff
	hasGroup := b.WatchGroup != GroupAny
	if !hasPort && !hasGroup {
		return true
	}
	if hasPort {
		if p := ctx.br.Port(b.WatchPort); p != nil && p.Live {
			return true
		}
	}
	return hasGroup && ctx.groupAlive(b.WatchGroup, depth+1)
}

func (ctx *context) groupAlive(id uint32, depth int) bool {
	g := ctx.br.Group(ctx.version, id)
	if g == nil {
		return false
	}
	bs := g.Buckets()
	for i := range bs {
		if ctx.bucketAlive(g.GroupType(), &bs[i], depth) {
			return true
		}
	}
	return false
}

// selectBucket picks a select group's bucket by a hash of the flow: the
// live bucket with the highest hash(bucket id, flow hash) x weight (Open
// vSwitch's group_best_live_bucket), so a flow keeps its bucket while the
// others come and go. The fields hashed are unwildcarded.
func (ctx *context) selectBucket(g Group, bs []Bucket) int {
	method, fields, basis := g.Selection()
	var h uint64
	if method == SelectHash && fields != nil {
		h = ctx.hashFields(fields, basis)
	} else {
		h = ctx.hashSymmetricL4(basis)
	}
	best, bestScore := -1, uint64(0)
	for i := range bs {
		if !ctx.bucketAlive(GroupSelect, &bs[i], 0) {
			continue
		}
		score := (mix64(uint64(bs[i].ID)^h) & 0xffff) * uint64(bs[i].Weight)
		if best < 0 || score >= bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// hashSymmetricL4 hashes the flow's Ethernet addresses, EtherType, VLAN
// ID, IP addresses, protocol and L4 ports so that both directions of a
// connection hash alike (Open vSwitch's flow_hash_symmetric_l4), and
// unwildcards them.
func (ctx *context) hashSymmetricL4(basis uint64) uint64 {
	f, m := &ctx.flow, &ctx.wc.Masks
	m.SrcMAC, m.DstMAC, m.EtherType = allOnesMAC, allOnesMAC, 0xffff
	m.VLANs[0].TCI |= 0x0fff
	m.VLANs[0].TPID = 0xffff
	h := basis ^ uint64(f.EtherType) ^ uint64(f.VLANs[0].VID())<<16
	h ^= macWord(f.SrcMAC) ^ macWord(f.DstMAC)
	switch f.EtherType {
	case packet.EtherTypeIPv4:
		m.SrcIPv4, m.DstIPv4, m.IPProto = [4]byte{255, 255, 255, 255}, [4]byte{255, 255, 255, 255}, 0xff
		h ^= uint64(binary.BigEndian.Uint32(f.SrcIPv4[:])) ^ uint64(binary.BigEndian.Uint32(f.DstIPv4[:]))
	case packet.EtherTypeIPv6:
		m.SrcIPv6, m.DstIPv6, m.IPProto = allOnes16, allOnes16, 0xff
		for i := 0; i < 16; i += 8 {
			h ^= binary.BigEndian.Uint64(f.SrcIPv6[i:]) ^ binary.BigEndian.Uint64(f.DstIPv6[i:])
		}
	default:
		return mix64(h)
	}
	h ^= uint64(f.IPProto) << 40
	if ctx.hasL4Ports() {
		m.SrcPort, m.DstPort = 0xffff, 0xffff
		h ^= uint64(f.SrcPort)<<24 ^ uint64(f.DstPort)<<24
	}
	return mix64(h)
}

var allOnes16 = [16]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}

// hashFields hashes the flow's bits under fields (a select group's
// selection_method=hash fields), and unwildcards them.
func (ctx *context) hashFields(fields *mf.Wildcards, basis uint64) uint64 {
	ctx.wc.Or(fields)
	fw, mw := ctx.flow.Words(), fields.Masks.Words()
	h := basis
	for i := range fw {
		h = mix64(h ^ fw[i]&mw[i])
	}
	return h
}

func macWord(m [6]byte) uint64 {
	return uint64(m[0])<<40 | uint64(m[1])<<32 | uint64(m[2])<<24 | uint64(m[3])<<16 | uint64(m[4])<<8 | uint64(m[5])
}

// mix64 is splitmix64's finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// dpHashMask is how many dp_hash bits select a bucket (Open vSwitch
// sizes its hash map to the buckets; a fixed 8 bits spreads weights to
// within 1/256).
const dpHashMask = 0xff

// needsDPHash: group id is a select group by dp_hash and this pass has
// no hash yet (Open vSwitch's dp_hash 0 means "not computed").
func (ctx *context) needsDPHash(id uint32) bool {
	if ctx.in.Recirc == nil || ctx.hashed() {
		return false
	}
	g := ctx.br.Group(ctx.version, id)
	if g == nil || g.GroupType() != GroupSelect {
		return false
	}
	m, _, _ := g.Selection()
	return m == SelectDPHash
}

// hashed: this pass resumes a freeze for dp_hash, so the flow's DPHash is
// the datapath's hash of the packet. (Open vSwitch tests dp_hash != 0;
// a megaflow's masked key may hold 0 in the bits it matches, so the
// frozen state says it instead.)
func (ctx *context) hashed() bool { return ctx.in.Frozen != nil && ctx.in.Frozen.Hashed }

// dpHashBucket picks the live bucket for the packet's dp_hash: the
// buckets own shares of the hash space in proportion to their weights.
func (ctx *context) dpHashBucket(bs []Bucket) int {
	ctx.wc.Masks.DPHash |= dpHashMask
	h := uint64(ctx.flow.DPHash & dpHashMask)
	best, bestScore := -1, uint64(0)
	for i := range bs {
		if !ctx.bucketAlive(GroupSelect, &bs[i], 0) {
			continue
		}
		score := (mix64(uint64(bs[i].ID)<<8|h) & 0xffff) * uint64(bs[i].Weight)
		if best < 0 || score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}
