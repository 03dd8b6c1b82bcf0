package pipeline

import (
	"gvs/ofproto/ofperr"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"gvs/ofproto/mf"
	"gvs/ofproto/xlate"
)

// GroupType is a group's type (OFPGT11_*).
type GroupType uint8

const (
	GroupTypeAll          GroupType = 0
	GroupTypeSelect       GroupType = 1
	GroupTypeIndirect     GroupType = 2
	GroupTypeFastFailover GroupType = 3
)

// GroupCommand is a group mod command (OFPGC*), with its OpenFlow value.
type GroupCommand uint16

const (
	GroupAdd          GroupCommand = 0
	GroupModify       GroupCommand = 1
	GroupDelete       GroupCommand = 2
	GroupInsertBucket GroupCommand = 3      // OpenFlow 1.5
	GroupRemoveBucket GroupCommand = 5      // OpenFlow 1.5 (4 is unused)
	GroupAddOrModify  GroupCommand = 0x8000 // Open vSwitch extension
)

// Special bucket ids (OFPG15_BUCKET_*).
const (
	BucketMax   uint32 = 0xffffff00
	BucketFirst uint32 = 0xfffffffd
	BucketLast  uint32 = 0xfffffffe
	BucketAll   uint32 = 0xffffffff
)

// Bucket is one bucket of a group: translation's own type, so a group
// hands its buckets to translation without copying.
type Bucket = xlate.Bucket

// bucketCounters are one bucket's statistics.
type bucketCounters struct{ packets, bytes atomic.Uint64 }

// GroupProps are a group's properties (struct ofputil_group_props): the
// select group's selection method, the fields the "hash" method hashes
// and the hash basis.
type GroupProps struct {
	SelectionMethod xlate.SelectionMethod
	MethodParam     uint64
	Fields          mf.Wildcards
	// FieldList are the fields in the order the group mod named them
	// (group descriptions print them so).
	FieldList []HashField
}

// HashField is one field a select group's hash method hashes, under Mask.
type HashField struct {
	Field *mf.Field
	Mask  mf.Value
}

// GroupMod is a decoded group mod (struct ofputil_group_mod).
type GroupMod struct {
	Command         GroupCommand
	Type            GroupType
	GroupID         uint32
	CommandBucketID uint32 // insert/remove bucket
	Buckets         []Bucket
	Props           GroupProps
}

// Group is a group table entry; immutable once committed, except the
// counters.
type Group struct {
	ID       uint32
	Type     GroupType
	Buckets  []Bucket
	Props    GroupProps
	Created  time.Time
	Modified time.Time

	addVersion    uint64
	removeVersion atomic.Uint64
	// older is the entry this one replaced, still seen by lookups at
	// older versions.
	older atomic.Pointer[Group]

	packets, bytes atomic.Uint64
	buckets        []bucketCounters
}

// VisibleIn reports whether lookups at version v see the group.
func (g *Group) VisibleIn(v uint64) bool {
	return g.addVersion <= v && v < g.removeVersion.Load()
}

// Credit adds datapath statistics to the group and, unless bucket is -1,
// to that bucket.
func (g *Group) Credit(bucket int, packets, bytes uint64) {
	g.packets.Add(packets)
	g.bytes.Add(bytes)
	if bucket >= 0 && bucket < len(g.buckets) {
		g.buckets[bucket].packets.Add(packets)
		g.buckets[bucket].bytes.Add(bytes)
	}
}

// BucketStats returns bucket i's counters.
func (g *Group) BucketStats(i int) (packets, bytes uint64) {
	return g.buckets[i].packets.Load(), g.buckets[i].bytes.Load()
}

// Stats returns the group's counters.
func (g *Group) Stats() (packets, bytes uint64) { return g.packets.Load(), g.bytes.Load() }

type groupMap struct{ m map[uint32]*Group }

// Group returns group id as lookups at version v see it, or nil. Safe from
// any goroutine.
func (p *Pipeline) Group(v uint64, id uint32) *Group { return p.groupAt(id, v) }

func (p *Pipeline) groupAt(id uint32, v uint64) *Group {
	for g := p.groups.Load().m[id]; g != nil; g = g.older.Load() {
		if g.VisibleIn(v) {
			return g
		}
	}
	return nil
}

// Groups returns the groups visible now, by id.
func (p *Pipeline) Groups() []*Group {
	v := p.Version()
	var out []*Group
	for id := range p.groups.Load().m {
		if g := p.groupAt(id, v); g != nil {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b *Group) int { return cmpU32(a.ID, b.ID) })
	return out
}

// GroupRefCount is how many rules use group id now (group stats'
// ref_count).
func (p *Pipeline) GroupRefCount(id uint32) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.groupRefs[id])
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// publishGroup makes g the newest entry for its id.
func (p *Pipeline) publishGroup(g *Group) {
	m := maps.Clone(p.groups.Load().m)
	if m == nil {
		m = map[uint32]*Group{}
	}
	m[g.ID] = g
	p.groups.Store(&groupMap{m})
}

// unpublishGroup drops g (newest for its id) and restores what it replaced.
func (p *Pipeline) unpublishGroup(g *Group) {
	m := maps.Clone(p.groups.Load().m)
	if o := g.older.Load(); o != nil {
		m[g.ID] = o
	} else {
		delete(m, g.ID)
	}
	p.groups.Store(&groupMap{m})
}

// GroupMod applies gm within the transaction (ofproto_group_mod_start).
func (t *Txn) GroupMod(gm *GroupMod) error {
	if t.ended {
		panic("pipeline: GroupMod on an ended transaction")
	}
	p := t.p
	switch gm.Command {
	case GroupAdd:
		return t.addGroup(gm)
	case GroupModify, GroupInsertBucket, GroupRemoveBucket:
		return t.modifyGroup(gm)
	case GroupAddOrModify:
		if p.groupAt(gm.GroupID, VersionMax) == nil {
			return t.addGroup(gm)
		}
		return t.modifyGroup(gm)
	case GroupDelete:
		t.deleteGroups(gm.GroupID)
		return nil
	default:
		return ofperr.OFPGMFC_BAD_COMMAND
	}
}

func (t *Txn) newGroup(gm *GroupMod) (*Group, error) {
	if gm.GroupID > GroupMax {
		return nil, ofperr.OFPGMFC_INVALID_GROUP
	}
	if gm.Type > GroupTypeFastFailover {
		return nil, ofperr.OFPGMFC_BAD_TYPE
	}
	now := t.p.now()
	g := &Group{
		ID: gm.GroupID, Type: gm.Type, Props: gm.Props,
		Created: now, Modified: now, addVersion: t.version,
	}
	g.Buckets = slices.Clone(gm.Buckets)
	g.removeVersion.Store(VersionNotRemoved)
	return g, nil
}

// checkBuckets: the buckets' own group actions must name groups that
// exist, and no group may reach itself (Open vSwitch limits the depth at
// translation; refusing a loop up front is kinder).
func (p *Pipeline) checkBuckets(g *Group) error {
	for _, b := range g.Buckets {
		if err := p.checkActions(b.Actions); err != nil {
			return err
		}
	}
	seen := map[uint32]bool{}
	var reaches func(*Group) bool
	reaches = func(x *Group) bool {
		for _, b := range x.Buckets {
			loop := false
			actionsGroups(b.Actions, func(id uint32) {
				if loop || id == g.ID {
					loop = true
					return
				}
				if !seen[id] {
					seen[id] = true
					if y := p.groupAt(id, VersionMax); y != nil && reaches(y) {
						loop = true
					}
				}
			})
			if loop {
				return true
			}
		}
		return false
	}
	if reaches(g) {
		return ofperr.OFPGMFC_LOOP
	}
	return nil
}

func (t *Txn) addGroup(gm *GroupMod) error {
	p := t.p
	if p.groupAt(gm.GroupID, VersionMax) != nil {
		return ofperr.OFPGMFC_GROUP_EXISTS
	}
	if int(gm.Type) < len(p.nGroups) && p.nGroups[gm.Type] >= p.cfg.MaxGroups {
		return ofperr.OFPGMFC_OUT_OF_GROUPS
	}
	g, err := t.newGroup(gm)
	if err != nil {
		return err
	}
	if err := p.checkBuckets(g); err != nil {
		return err
	}
	g.older.Store(p.groups.Load().m[g.ID])
	g.buckets = make([]bucketCounters, len(g.Buckets))
	p.publishGroup(g)
	p.nGroups[g.Type]++
	t.ops = append(t.ops, &txnOp{group: true, newGroup: g})
	return nil
}

func (t *Txn) modifyGroup(gm *GroupMod) error {
	p := t.p
	old := p.groupAt(gm.GroupID, VersionMax)
	if old == nil {
		return ofperr.OFPGMFC_UNKNOWN_GROUP
	}
	mod := *gm
	if gm.Command == GroupInsertBucket || gm.Command == GroupRemoveBucket {
		mod.Type, mod.Props = old.Type, old.Props
	}
	if old.Type != mod.Type && p.nGroups[mod.Type] >= p.cfg.MaxGroups {
		return ofperr.OFPGMFC_OUT_OF_GROUPS
	}
	g, err := t.newGroup(&mod)
	if err != nil {
		return err
	}
	switch gm.Command {
	case GroupInsertBucket:
		if g.Buckets, err = insertBuckets(old.Buckets, g.Buckets, gm.CommandBucketID); err != nil {
			return err
		}
	case GroupRemoveBucket:
		if g.Buckets, err = removeBucket(old.Buckets, gm.CommandBucketID); err != nil {
			return err
		}
	}
	if err := p.checkBuckets(g); err != nil {
		return err
	}
	g.Created = old.Created
	g.older.Store(p.groups.Load().m[g.ID])
	old.removeVersion.Store(t.version)
	g.buckets = make([]bucketCounters, len(g.Buckets))
	p.publishGroup(g)
	p.nGroups[old.Type]--
	p.nGroups[g.Type]++
	t.ops = append(t.ops, &txnOp{group: true, newGroup: g, oldGroups: []*Group{old}})
	return nil
}

// insertBuckets is copy_buckets_for_insert_bucket: the new buckets go after
// the bucket with id at (or first, or last); bucket ids stay unique.
func insertBuckets(old, add []Bucket, at uint32) ([]Bucket, error) {
	pos := len(old)
	switch at {
	case BucketFirst:
		pos = 0
	case BucketLast:
	default:
		if at > BucketMax {
			return nil, ofperr.OFPGMFC_UNKNOWN_BUCKET
		}
		i := slices.IndexFunc(old, func(b Bucket) bool { return b.ID == at })
		if i < 0 {
			return nil, ofperr.OFPGMFC_UNKNOWN_BUCKET
		}
		pos = i + 1
	}
	seen := map[uint32]bool{}
	for _, b := range old {
		seen[b.ID] = true
	}
	for _, b := range add {
		if seen[b.ID] {
			return nil, ofperr.OFPGMFC_BUCKET_EXISTS
		}
		seen[b.ID] = true
	}
	out := make([]Bucket, 0, len(old)+len(add))
	out = append(out, old[:pos]...)
	out = append(out, add...)
	return append(out, old[pos:]...), nil
}

// removeBucket is copy_buckets_for_remove_bucket.
func removeBucket(old []Bucket, id uint32) ([]Bucket, error) {
	skip := -1
	switch id {
	case BucketAll:
		return nil, nil
	case BucketFirst:
		if len(old) > 0 {
			skip = 0
		}
	case BucketLast:
		skip = len(old) - 1
	default:
		skip = slices.IndexFunc(old, func(b Bucket) bool { return b.ID == id })
		if skip < 0 {
			return nil, ofperr.OFPGMFC_UNKNOWN_BUCKET
		}
	}
	var out []Bucket
	for i, b := range old {
		if i != skip {
			out = append(out, b)
		}
	}
	return out, nil
}

// deleteGroups is delete_groups_start: the group (or all) and the rules
// that use it become invisible at the transaction's version.
func (t *Txn) deleteGroups(id uint32) {
	p := t.p
	var groups []*Group
	if id == GroupAll {
		for gid := range p.groups.Load().m {
			if g := p.groupAt(gid, VersionMax); g != nil {
				groups = append(groups, g)
			}
		}
		slices.SortFunc(groups, func(a, b *Group) int { return cmpU32(a.ID, b.ID) })
	} else if g := p.groupAt(id, VersionMax); g != nil {
		groups = append(groups, g)
	}
	for _, g := range groups {
		var rules []*Rule
		for r := range p.groupRefs[g.ID] {
			rules = append(rules, r)
		}
		slices.SortFunc(rules, ruleOrder)
		t.deleteRulesStart(rules, RemovedGroupDelete)
		g.removeVersion.Store(t.version)
		p.nGroups[g.Type]--
		t.ops = append(t.ops, &txnOp{group: true, oldGroups: []*Group{g}})
	}
}

// ruleOrder orders rules by table, then priority (high first), for
// reproducible reports.
func ruleOrder(a, b *Rule) int {
	if a.TableID != b.TableID {
		return int(a.TableID) - int(b.TableID)
	}
	return b.Priority - a.Priority
}

func (p *Pipeline) revertGroupOp(op *txnOp) {
	if op.newGroup != nil {
		p.unpublishGroup(op.newGroup)
		p.nGroups[op.newGroup.Type]--
	}
	for _, g := range op.oldGroups {
		g.removeVersion.Store(VersionNotRemoved)
		p.nGroups[g.Type]++
	}
}

// finishGroupOp forgets the group entries an earlier transaction removed:
// the ones this transaction removed stay for lookups still running at the
// previous version.
func (p *Pipeline) finishGroupOp(op *txnOp, now time.Time) bool {
	v := p.Version()
	m := p.groups.Load().m
	if len(op.oldGroups) > 0 {
		next := maps.Clone(m)
		for id, g := range next {
			if g.removeVersion.Load() < v {
				delete(next, id)
			} else if o := g.older.Load(); o != nil && o.removeVersion.Load() < v {
				g.older.Store(nil)
			}
		}
		p.groups.Store(&groupMap{next})
	}
	return true
}
