package tnlroute

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Aging limits, Open vSwitch's NEIGH_ENTRY_DEFAULT_IDLE_TIME_MS and
// NEIGH_ENTRY_MAX_AGING_TIME_S.
const (
	DefaultAging    = 15 * time.Minute
	MaxAgingSeconds = 3600
)

// Neighbor is one neighbour cache entry as tnl/neigh/show lists it.
type Neighbor struct {
	Bridge string
	IP     [16]byte // v4-mapped for IPv4
	MAC    [6]byte
	Stale  bool // expired, not yet removed
}

type neighKey struct {
	bridge string
	ip     [16]byte
}

type neighEntry struct {
	mac     [6]byte
	expires atomic.Int64 // clock reading (ns) after which the entry is stale
}

// Cache is the tunnel neighbour cache. Use NewCache.
type Cache struct {
	now   func() int64 // monotonic nanoseconds
	aging atomic.Int64 // nanoseconds

	table atomic.Pointer[map[neighKey]*neighEntry] // immutable once published
	seq   atomic.Uint64

	mu sync.Mutex // writers; a leaf
}

// NewCache returns an empty cache with the default aging. now is the
// clock in nanoseconds (nil: a monotonic clock).
func NewCache(now func() int64) *Cache {
	if now == nil {
		start := time.Now()
		now = func() int64 { return int64(time.Since(start)) }
	}
	c := &Cache{now: now}
	c.aging.Store(int64(DefaultAging))
	empty := map[neighKey]*neighEntry{}
	c.table.Store(&empty)
	return c
}

// Seq counts changes (Open vSwitch's tnl_conf_seq): flows that used a
// neighbour are revalidated when it moves.
func (c *Cache) Seq() uint64 { return c.seq.Load() }

// Lookup returns the MAC of ip on bridge, refreshing the entry's expiry
// as Open vSwitch's tnl_neigh_lookup does. No lock, no allocation.
func (c *Cache) Lookup(bridge string, ip [16]byte) ([6]byte, bool) {
	e := (*c.table.Load())[neighKey{bridge, ip}]
	if e == nil {
		return [6]byte{}, false
	}
	now := c.now()
	exp := e.expires.Load()
	if exp <= now {
		return [6]byte{}, false
	}
	// Refreshed only when it moves by more than refreshGranularity:
	// lookups from many handlers do not all write the entry's line.
	if next := now + c.aging.Load(); next-exp > int64(refreshGranularity) {
		e.expires.Store(next)
	}
	return e.mac, true
}

// refreshGranularity is how far behind a lookup's refresh of an entry's
// expiry may lag: an idle entry expires at most this much before Open
// vSwitch's would.
const refreshGranularity = 100 * time.Millisecond

// Set adds or refreshes an entry (tnl/neigh/set, snooping).
func (c *Cache) Set(bridge string, ip [16]byte, mac [6]byte) {
	bridge = truncName(bridge)
	k := neighKey{bridge, ip}
	if e := (*c.table.Load())[k]; e != nil && e.mac == mac && e.expires.Load() > c.now() {
		// The common case on the packet path: nothing to publish.
		e.expires.Store(c.now() + c.aging.Load())
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.table.Load()
	if e := old[k]; e != nil && e.mac == mac && e.expires.Load() > c.now() {
		e.expires.Store(c.now() + c.aging.Load())
		return
	}
	next := make(map[neighKey]*neighEntry, len(old)+1)
	for k2, e2 := range old {
		next[k2] = e2
	}
	e := &neighEntry{mac: mac}
	e.expires.Store(c.now() + c.aging.Load())
	next[k] = e
	c.publishLocked(next)
}

func (c *Cache) publishLocked(m map[neighKey]*neighEntry) {
	c.table.Store(&m)
	c.seq.Add(1)
}

// deleteLocked publishes the table without the entries drop selects,
// when there are any.
func (c *Cache) deleteWhere(drop func(neighKey, *neighEntry) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.table.Load()
	var next map[neighKey]*neighEntry
	for k, e := range old {
		if drop(k, e) {
			if next == nil {
				next = make(map[neighKey]*neighEntry, len(old))
				for k2, e2 := range old {
					next[k2] = e2
				}
			}
			delete(next, k)
		}
	}
	if next != nil {
		c.publishLocked(next)
	}
}

// Flush removes every entry (tnl/neigh/flush).
func (c *Cache) Flush() { c.deleteWhere(func(neighKey, *neighEntry) bool { return true }) }

// FlushBridge removes a bridge's entries (the bridge went away).
func (c *Cache) FlushBridge(bridge string) {
	c.deleteWhere(func(k neighKey, _ *neighEntry) bool { return k.bridge == bridge })
}

// Expire removes the expired entries (tnl_neigh_cache_run).
func (c *Cache) Expire() {
	now := c.now()
	c.deleteWhere(func(_ neighKey, e *neighEntry) bool { return e.expires.Load() <= now })
}

// Run expires entries every interval until ctx ends.
func (c *Cache) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.Expire()
		}
	}
}

// Aging returns the aging time.
func (c *Cache) Aging() time.Duration { return time.Duration(c.aging.Load()) }

// SetAging sets the aging time and, as Open vSwitch does, shortens every
// entry's remaining life to at most the new time.
func (c *Cache) SetAging(d time.Duration) {
	c.aging.Store(int64(d))
	limit := c.now() + int64(d)
	for _, e := range *c.table.Load() {
		for {
			cur := e.expires.Load()
			if limit >= cur || e.expires.CompareAndSwap(cur, limit) {
				break
			}
		}
	}
}

// Entries lists the cache, sorted by bridge and address.
func (c *Cache) Entries() []Neighbor {
	now := c.now()
	m := *c.table.Load()
	out := make([]Neighbor, 0, len(m))
	for k, e := range m {
		out = append(out, Neighbor{Bridge: k.bridge, IP: k.ip, MAC: e.mac, Stale: e.expires.Load() <= now})
	}
	slices.SortFunc(out, func(a, b Neighbor) int {
		if c := strings.Compare(a.Bridge, b.Bridge); c != 0 {
			return c
		}
		return slices.Compare(a.IP[:], b.IP[:])
	})
	return out
}
