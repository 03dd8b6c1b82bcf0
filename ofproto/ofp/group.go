package ofp

import (
	"encoding/binary"

	"gvs/ofproto/mf"

	"gvs/ofproto/ofperr"
)

// Group types (OFPGT11_*) and commands (OFPGC11_*, OFPGC15_*).
const (
	GroupTypeAll          uint8 = 0
	GroupTypeSelect       uint8 = 1
	GroupTypeIndirect     uint8 = 2
	GroupTypeFastFailover uint8 = 3

	GroupAdd          uint16 = 0
	GroupModify       uint16 = 1
	GroupDelete       uint16 = 2
	GroupInsertBucket uint16 = 3 // 1.5
	GroupRemoveBucket uint16 = 5 // 1.5
	GroupAddOrMod     uint16 = 0x8000

	// Bucket ids (OFPG15_BUCKET_*).
	BucketMax   uint32 = 0xffffff00
	BucketFirst uint32 = 0xfffffffd
	BucketLast  uint32 = 0xfffffffe
	BucketAll   uint32 = 0xffffffff
)

// Bucket is a group bucket (ofputil_bucket). WatchPort is in the 16-bit
// port space (mf.PortNone for none); WatchGroup GroupAny for none. In
// 1.1-1.4 bucket ids are not sent: decoding numbers them 0, 1, ...
type Bucket struct {
	BucketID   uint32
	Weight     uint16
	WatchPort  uint32
	WatchGroup uint32
	Actions    []Action
}

// GroupProps are a group's properties: Open vSwitch's (Netronome)
// selection method extension for select groups, "hash" or "dp_hash", its
// parameter (the hash basis), and for "hash" the fields hashed.
type GroupProps struct {
	SelectionMethod      string
	SelectionMethodParam uint64
	Fields               []GroupField
}

// GroupField is a field a "hash" select group hashes, with the bits used
// (all-ones for the whole field), e.g. fields(ip_dst=255.255.255.0).
type GroupField struct {
	Field *mf.Field
	Mask  mf.Value
}

const (
	ntrSelectionMethod = 1 // NTRT_SELECTION_METHOD
	ntrCompatVendor    = 0x00001540
)

// GroupMod (OFPT_GROUP_MOD; NXT_GROUP_MOD in 1.0, which has 1.5's form).
type GroupMod struct {
	Command         uint16
	Type            uint8
	GroupID         uint32
	CommandBucketID uint32 // 1.5: for insert/remove bucket; else BucketAll
	Buckets         []Bucket
	Props           GroupProps
}

func (*GroupMod) raw(v uint8) (Raw, error) {
	return pick(v, rawNXGroupMod, raw11GroupMod, raw15GroupMod)
}

func (m *GroupMod) appendBody(b []byte, v uint8) ([]byte, error) {
	if v >= Version11 && v <= Version14 {
		if m.Command == GroupInsertBucket || m.Command == GroupRemoveBucket {
			// 1.1-1.4 cannot say it: Open vSwitch sends a MODIFY with
			// the group's resulting buckets instead (the caller's job).
			return b, ofperr.OFPGMFC_BAD_COMMAND
		}
		b = put16(b, m.Command)
		b = put8(b, m.Type)
		b = pad(b, 1)
		b = put32(b, m.GroupID)
		return appendBuckets11(b, m.Buckets, v), nil
	}
	start := len(b)
	b = put16(b, m.Command)
	b = put8(b, m.Type)
	b = pad(b, 1)
	b = put32(b, m.GroupID)
	b = put16(b, 0)
	b = pad(b, 2)
	b = put32(b, m.CommandBucketID)
	bstart := len(b)
	b = appendBuckets15(b, m.Buckets, m.Type, v)
	binary.BigEndian.PutUint16(b[start+8:], uint16(len(b)-bstart))
	return appendGroupProps(b, &m.Props, v), nil
}

func appendBuckets11(b []byte, buckets []Bucket, v uint8) []byte {
	for i := range buckets {
		bk := &buckets[i]
		start := len(b)
		b = put16(b, 0)
		b = put16(b, bk.Weight)
		b = put32(b, PortTo11(bk.WatchPort))
		b = put32(b, bk.WatchGroup)
		b = pad(b, 4)
		b = appendActions(b, bk.Actions, v)
		setLen16(b, start, 0)
	}
	return b
}

func appendBuckets15(b []byte, buckets []Bucket, typ uint8, v uint8) []byte {
	for i := range buckets {
		bk := &buckets[i]
		start := len(b)
		b = put16(b, 0)
		b = put16(b, 0)
		b = put32(b, bk.BucketID)
		as := len(b)
		b = appendActions(b, bk.Actions, v)
		binary.BigEndian.PutUint16(b[start+2:], uint16(len(b)-as))
		if typ == GroupTypeSelect || bk.Weight != 0 {
			b = appendProp(b, 0, []byte{byte(bk.Weight >> 8), byte(bk.Weight), 0, 0}, 8)
		}
		if bk.WatchPort != 0xffff {
			b = appendProp(b, 1, u32Body(PortTo11(bk.WatchPort)), 8)
		}
		if bk.WatchGroup != GroupAny {
			b = appendProp(b, 2, u32Body(bk.WatchGroup), 8)
		}
		setLen16(b, start, 0)
	}
	return b
}

func appendGroupProps(b []byte, p *GroupProps, v uint8) []byte {
	if p.SelectionMethod == "" {
		return b
	}
	start := len(b)
	b = put16(b, 0xffff) // OFPGPT15_EXPERIMENTER
	b = put16(b, 0)
	b = put32(b, VendorNTR)
	b = put32(b, ntrSelectionMethod)
	b = pad(b, 4)
	b = putStr(b, p.SelectionMethod, 16)
	b = put64(b, p.SelectionMethodParam)
	for _, gf := range p.Fields {
		b = mf.AppendEntry(b, gf.Field, v, gf.Mask, nil)
	}
	setLen16(b, start, 2)
	return pad8(b, start)
}

func pullBuckets11(b []byte, v uint8) ([]Bucket, error) {
	var buckets []Bucket
	for id := uint32(0); len(b) > 0; id++ {
		if len(b) < 16 {
			return nil, ofperr.OFPGMFC_BAD_BUCKET
		}
		n := int(binary.BigEndian.Uint16(b))
		if n < 16 || n > len(b) {
			return nil, ofperr.OFPGMFC_BAD_BUCKET
		}
		r := reader{b: b[2:n]}
		bk := Bucket{BucketID: id, Weight: r.u16()}
		wp, err := PortFrom11(r.u32())
		if err != nil {
			return nil, ofperr.OFPGMFC_BAD_WATCH
		}
		bk.WatchPort = wp
		bk.WatchGroup = r.u32()
		r.skip(4)
		if bk.Actions, err = pullActions(r.rest(), v); err != nil {
			return nil, err
		}
		buckets = append(buckets, bk)
		b = b[n:]
	}
	return buckets, nil
}

func pullBuckets15(b []byte, typ uint8, v uint8) ([]Bucket, error) {
	var buckets []Bucket
	seen := map[uint32]bool{}
	for len(b) > 0 {
		if len(b) < 8 {
			return nil, ofperr.OFPGMFC_BAD_BUCKET
		}
		n := int(binary.BigEndian.Uint16(b))
		actsLen := int(binary.BigEndian.Uint16(b[2:]))
		if n < 8 || n > len(b) || actsLen > n-8 {
			return nil, ofperr.OFPGMFC_BAD_BUCKET
		}
		bk := Bucket{BucketID: binary.BigEndian.Uint32(b[4:]), WatchPort: 0xffff, WatchGroup: GroupAny}
		if typ == GroupTypeSelect {
			bk.Weight = 1
		}
		var err error
		if bk.Actions, err = pullActions(b[8:8+actsLen], v); err != nil {
			return nil, err
		}
		props, err := pullProps(b[8+actsLen:n], 8)
		if err != nil {
			return nil, err
		}
		watchPort := PortTo11(0xffff)
		for _, p := range props {
			switch p.Type {
			case 0:
				if len(p.Body) < 2 {
					return nil, ofperr.OFPBPC_BAD_LEN
				}
				bk.Weight = binary.BigEndian.Uint16(p.Body)
			case 1:
				if watchPort, err = propU32(p); err != nil {
					return nil, err
				}
			case 2:
				if bk.WatchGroup, err = propU32(p); err != nil {
					return nil, err
				}
			default:
				return nil, unknownProp(p)
			}
		}
		if bk.WatchPort, err = PortFrom11(watchPort); err != nil {
			return nil, ofperr.OFPGMFC_BAD_WATCH
		}
		if bk.BucketID > BucketMax || seen[bk.BucketID] {
			return nil, ofperr.OFPGMFC_BAD_BUCKET
		}
		seen[bk.BucketID] = true
		buckets = append(buckets, bk)
		b = b[n:]
	}
	return buckets, nil
}

func pullGroupProps(b []byte, typ uint8, command uint16) (GroupProps, error) {
	var gp GroupProps
	props, err := pullProps(b, 8)
	if err != nil {
		return gp, err
	}
	for _, p := range props {
		if p.Type != propExperimenter {
			return gp, unknownProp(p)
		}
		exp, expType := binary.BigEndian.Uint32(p.Body), binary.BigEndian.Uint32(p.Body[4:])
		if exp != VendorNTR && exp != ntrCompatVendor || expType != ntrSelectionMethod {
			return gp, unknownProp(p)
		}
		switch typ {
		case GroupTypeSelect:
		case GroupTypeAll, GroupTypeIndirect, GroupTypeFastFailover:
			return gp, ofperr.OFPBPC_BAD_VALUE
		default:
			return gp, ofperr.OFPGMFC_BAD_TYPE
		}
		switch command {
		case GroupAdd, GroupModify, GroupAddOrMod:
		case GroupDelete, GroupInsertBucket, GroupRemoveBucket:
			return gp, ofperr.OFPBPC_BAD_VALUE
		default:
			return gp, ofperr.OFPGMFC_BAD_COMMAND
		}
		if len(p.Body) < 36 {
			return gp, ofperr.OFPBPC_BAD_LEN
		}
		method := p.Body[12:28]
		end := 0
		for end < len(method) && method[end] != 0 {
			end++
		}
		if end == len(method) {
			return gp, ofperr.OFPBPC_BAD_VALUE
		}
		gp.SelectionMethod = string(method[:end])
		if gp.SelectionMethod != "hash" && gp.SelectionMethod != "dp_hash" {
			return gp, ofperr.OFPBPC_BAD_VALUE
		}
		gp.SelectionMethodParam = binary.BigEndian.Uint64(p.Body[28:])
		if fields := p.Body[36:]; len(fields) > 0 {
			if gp.SelectionMethod != "hash" {
				return gp, ofperr.OFPBPC_BAD_VALUE
			}
			seen := map[*mf.Field]bool{}
			for len(fields) > 0 {
				e, rest, err := mf.PullEntry(fields, false)
				if err != nil {
					return gp, err
				}
				if e.Field == nil {
					return gp, ofperr.OFPBMC_BAD_FIELD
				}
				if seen[e.Field] {
					return gp, ofperr.OFPBMC_DUP_FIELD
				}
				seen[e.Field] = true
				gp.Fields = append(gp.Fields, GroupField{Field: e.Field, Mask: e.Value})
				fields = rest
			}
		}
	}
	return gp, nil
}

// checkGroupMod is Open vSwitch's ofputil_check_group_mod.
func checkGroupMod(m *GroupMod) error {
	switch m.Type {
	case GroupTypeIndirect:
		if m.Command != GroupDelete && len(m.Buckets) != 1 {
			return ofperr.OFPGMFC_INVALID_GROUP
		}
	case GroupTypeAll, GroupTypeSelect, GroupTypeFastFailover:
	default:
		return ofperr.OFPGMFC_BAD_TYPE
	}
	switch m.Command {
	case GroupAdd, GroupModify, GroupAddOrMod, GroupDelete, GroupInsertBucket:
	case GroupRemoveBucket:
		if len(m.Buckets) != 0 {
			return ofperr.OFPGMFC_BAD_BUCKET
		}
	default:
		return ofperr.OFPGMFC_BAD_COMMAND
	}
	for i := range m.Buckets {
		bk := &m.Buckets[i]
		if bk.Weight != 0 && m.Type != GroupTypeSelect && m.Command != GroupInsertBucket {
			return ofperr.OFPGMFC_INVALID_GROUP
		}
		live := bk.WatchPort != 0xffff || bk.WatchGroup != GroupAny
		switch m.Type {
		case GroupTypeAll, GroupTypeIndirect:
			if live {
				return ofperr.OFPGMFC_WATCH_UNSUPPORTED
			}
		case GroupTypeFastFailover:
			if !live {
				return ofperr.OFPGMFC_INVALID_GROUP
			}
		}
	}
	return nil
}

func decodeGroupMod(h *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &GroupMod{Command: r.u16(), Type: r.u8()}
	r.skip(1)
	m.GroupID = r.u32()
	v := h.Version
	var err error
	if h.Raw == raw11GroupMod {
		m.CommandBucketID = BucketAll
		if m.Buckets, err = pullBuckets11(r.rest(), v); err != nil {
			return nil, err
		}
		if v >= Version13 && m.Command == GroupDelete && len(m.Buckets) != 0 {
			return nil, ofperr.OFPGMFC_INVALID_GROUP
		}
	} else {
		blen := int(r.u16())
		r.skip(2)
		m.CommandBucketID = r.u32()
		ok := false
		switch m.Command {
		case GroupRemoveBucket, GroupInsertBucket:
			ok = m.CommandBucketID <= BucketMax || m.CommandBucketID == BucketFirst || m.CommandBucketID == BucketLast ||
				m.Command == GroupRemoveBucket && m.CommandBucketID == BucketAll
		default:
			ok = m.CommandBucketID == BucketAll
		}
		if !ok {
			return nil, ofperr.OFPGMFC_BAD_BUCKET
		}
		if blen > r.len() {
			return nil, ofperr.OFPBRC_BAD_LEN
		}
		if m.Buckets, err = pullBuckets15(r.take(blen), m.Type, v); err != nil {
			return nil, err
		}
		if m.Props, err = pullGroupProps(r.rest(), m.Type, m.Command); err != nil {
			return nil, err
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if err := checkGroupMod(m); err != nil {
		return nil, err
	}
	return m, nil
}

// GroupDescRequest (OFPST_GROUP_DESC; GroupID only in 1.5 and NXST 1.0,
// GroupAll otherwise).
type GroupDescRequest struct {
	Multipart
	GroupID uint32
}

func (*GroupDescRequest) raw(v uint8) (Raw, error) {
	return pick(v, rawNXGroupDescRequest, raw11GroupDescRequest, raw15GroupDescRequest)
}

func (m *GroupDescRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	if v == Version10 || v >= Version15 {
		b = put32(b, m.GroupID)
		b = pad(b, 4)
	}
	return b, nil
}

// GroupDesc is one group in a group description reply.
type GroupDesc struct {
	Type    uint8
	GroupID uint32
	Buckets []Bucket
	Props   GroupProps
}

// GroupDescReply (OFPST_GROUP_DESC reply).
type GroupDescReply struct {
	Multipart
	Groups []GroupDesc
}

func (*GroupDescReply) raw(v uint8) (Raw, error) {
	return pick(v, rawNXGroupDescReply, raw11GroupDescReply)
}
func (m *GroupDescReply) entries() int { return len(m.Groups) }
func (m *GroupDescReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *GroupDescReply) part(i, j int) Msg { return &GroupDescReply{Groups: m.Groups[i:j]} }

func (m *GroupDescReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	g := &m.Groups[i]
	start := len(b)
	b = put16(b, 0)
	b = put8(b, g.Type)
	b = pad(b, 1)
	b = put32(b, g.GroupID)
	if v >= Version11 && v <= Version14 {
		b = appendBuckets11(b, g.Buckets, v)
	} else {
		b = put16(b, 0)
		b = pad(b, 6)
		bs := len(b)
		b = appendBuckets15(b, g.Buckets, g.Type, v)
		binary.BigEndian.PutUint16(b[start+8:], uint16(len(b)-bs))
		b = appendGroupProps(b, &g.Props, v)
	}
	setLen16(b, start, 0)
	return b, nil
}

func pullGroupDescReply(m *GroupDescReply, h *Header, r *reader) error {
	v := h.Version
	for r.len() > 0 {
		if r.len() < 8 {
			return ofperr.OFPBRC_BAD_LEN
		}
		n := int(binary.BigEndian.Uint16(r.b))
		if n < 8 || n > r.len() {
			return ofperr.OFPBRC_BAD_LEN
		}
		e := reader{b: r.take(n)}
		e.skip(2)
		g := GroupDesc{Type: e.u8()}
		e.skip(1)
		g.GroupID = e.u32()
		var err error
		if v >= Version11 && v <= Version14 {
			g.Buckets, err = pullBuckets11(e.rest(), v)
		} else {
			blen := int(e.u16())
			e.skip(6)
			if e.err != nil || blen > e.len() {
				return ofperr.OFPBRC_BAD_LEN
			}
			g.Buckets, err = pullBuckets15(e.take(blen), g.Type, v)
			if err == nil {
				g.Props, err = pullGroupProps(e.rest(), g.Type, GroupAdd)
			}
		}
		if err != nil {
			return err
		}
		m.Groups = append(m.Groups, g)
	}
	return nil
}

// GroupStatsRequest (OFPST_GROUP; GroupAll for every group).
type GroupStatsRequest struct {
	Multipart
	GroupID uint32
}

func (*GroupStatsRequest) raw(v uint8) (Raw, error) {
	return pick(v, rawNXGroupStatsRequest, raw11GroupStatsRequest)
}
func (m *GroupStatsRequest) appendBody(b []byte, _ uint8) ([]byte, error) {
	return pad(put32(b, m.GroupID), 4), nil
}

// GroupStats is one group's counters; bucket counters in bucket order.
type GroupStats struct {
	GroupID      uint32
	RefCount     uint32
	PacketCount  uint64
	ByteCount    uint64
	DurationSec  uint32
	DurationNsec uint32
	Buckets      []BucketCounter
}

// BucketCounter counts one bucket's traffic.
type BucketCounter struct {
	PacketCount uint64
	ByteCount   uint64
}

// GroupStatsReply (OFPST_GROUP reply).
type GroupStatsReply struct {
	Multipart
	Stats []GroupStats
}

func (*GroupStatsReply) raw(v uint8) (Raw, error) {
	return pick(v, rawNXGroupStatsReply, raw11GroupStatsReply, raw13GroupStatsReply)
}
func (m *GroupStatsReply) entries() int { return len(m.Stats) }
func (m *GroupStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *GroupStatsReply) part(i, j int) Msg { return &GroupStatsReply{Stats: m.Stats[i:j]} }

func (m *GroupStatsReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	g := &m.Stats[i]
	start := len(b)
	b = put16(b, 0)
	b = pad(b, 2)
	b = put32(b, g.GroupID)
	b = put32(b, g.RefCount)
	b = pad(b, 4)
	b = put64(b, unknownToZero(g.PacketCount))
	b = put64(b, unknownToZero(g.ByteCount))
	if v != Version11 && v != Version12 {
		b = put32(b, g.DurationSec)
		b = put32(b, g.DurationNsec)
	}
	for _, c := range g.Buckets {
		b = put64(b, unknownToZero(c.PacketCount))
		b = put64(b, unknownToZero(c.ByteCount))
	}
	setLen16(b, start, 0)
	return b, nil
}

func pullGroupStatsReply(m *GroupStatsReply, h *Header, r *reader) error {
	fixed := 40
	if h.Version == Version11 || h.Version == Version12 {
		fixed = 32
	}
	for r.len() > 0 {
		if r.len() < 2 {
			return ofperr.OFPBRC_BAD_LEN
		}
		n := int(binary.BigEndian.Uint16(r.b))
		if n < fixed || n > r.len() || (n-fixed)%16 != 0 {
			return ofperr.OFPBRC_BAD_LEN
		}
		e := reader{b: r.take(n)}
		e.skip(4)
		g := GroupStats{GroupID: e.u32(), RefCount: e.u32()}
		e.skip(4)
		g.PacketCount, g.ByteCount = e.u64(), e.u64()
		if fixed == 40 {
			g.DurationSec, g.DurationNsec = e.u32(), e.u32()
		}
		for e.len() > 0 {
			g.Buckets = append(g.Buckets, BucketCounter{e.u64(), e.u64()})
		}
		m.Stats = append(m.Stats, g)
	}
	return nil
}

// GroupFeaturesRequest and GroupFeaturesReply (OFPST_GROUP_FEATURES).
// Actions are per group type, in the version's action bitmap.
type GroupFeaturesRequest struct{ Multipart }
type GroupFeaturesReply struct {
	Multipart
	Types        uint32
	Capabilities uint32
	MaxGroups    [4]uint32
	Actions      [4]uint32
}

func (*GroupFeaturesRequest) raw(v uint8) (Raw, error) {
	return pick(v, rawNXGroupFeaturesRequest, raw12GroupFeaturesRequest)
}
func (*GroupFeaturesRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }
func (*GroupFeaturesReply) raw(v uint8) (Raw, error) {
	return pick(v, rawNXGroupFeaturesReply, raw12GroupFeaturesReply)
}
func (m *GroupFeaturesReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = put32(b, m.Types)
	b = put32(b, m.Capabilities)
	for _, x := range m.MaxGroups {
		b = put32(b, x)
	}
	for _, x := range m.Actions {
		b = put32(b, x)
	}
	return b, nil
}

func init() {
	register(decodeGroupMod, rawNXGroupMod, raw11GroupMod, raw15GroupMod)
	register(decoderFor(func(m *GroupDescRequest, h *Header, r *reader) error {
		m.GroupID = GroupAll
		if h.Raw != raw11GroupDescRequest {
			m.GroupID = r.u32()
			r.skip(4)
		}
		return nil
	}), rawNXGroupDescRequest, raw11GroupDescRequest, raw15GroupDescRequest)
	register(decoderFor(pullGroupDescReply), rawNXGroupDescReply, raw11GroupDescReply)
	register(decoderFor(func(m *GroupStatsRequest, _ *Header, r *reader) error {
		m.GroupID = r.u32()
		r.skip(4)
		return nil
	}), rawNXGroupStatsRequest, raw11GroupStatsRequest)
	register(decoderFor(pullGroupStatsReply), rawNXGroupStatsReply, raw11GroupStatsReply, raw13GroupStatsReply)
	register(decoderFor(func(*GroupFeaturesRequest, *Header, *reader) error { return nil }),
		rawNXGroupFeaturesRequest, raw12GroupFeaturesRequest)
	register(decoderFor(func(m *GroupFeaturesReply, _ *Header, r *reader) error {
		m.Types, m.Capabilities = r.u32(), r.u32()
		for i := range m.MaxGroups {
			m.MaxGroups[i] = r.u32()
		}
		for i := range m.Actions {
			m.Actions[i] = r.u32()
		}
		return nil
	}), rawNXGroupFeaturesReply, raw12GroupFeaturesReply)
}
