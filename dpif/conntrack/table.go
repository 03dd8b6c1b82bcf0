package conntrack

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// connKey is one direction of a connection as the table indexes it:
// Open vSwitch's struct conn_key. It is comparable with == and holds no
// padding, so it is hashed as words. IPv4 addresses take the first four
// bytes of src and dst. For ICMP echo, sport and dport both hold the
// identifier and stype/dtype the message type and the type of its
// answer (8 and 0 for a request, 0 and 8 for a reply), so the reply's
// key is the request's reversed.
type connKey struct {
	src, dst     [16]byte
	sport, dport uint16
	zone         uint16
	proto        uint8
	v6           bool
	stype, dtype uint8
	_            [6]byte // always zero: the key is hashed as six words
}

const keyWords = int(unsafe.Sizeof(connKey{})) / 8

var _ [unsafe.Sizeof(connKey{}) % 8]struct{} = [0]struct{}{}

// reverse returns the key of the other direction.
func (k connKey) reverse() connKey {
	k.src, k.dst = k.dst, k.src
	k.sport, k.dport = k.dport, k.sport
	k.stype, k.dtype = k.dtype, k.stype
	return k
}

func (k *connKey) hash(seed uint64) uint64 {
	const m1, m2 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	w := (*[keyWords]uint64)(unsafe.Pointer(k))
	h := seed ^ m2
	for i := 0; i+1 < keyWords; i += 2 {
		hi, lo := bits.Mul64(h^w[i]^m1, w[i+1]^m2)
		h ^= hi ^ lo
	}
	hi, lo := bits.Mul64(h^m1, h^m2)
	return hi ^ lo
}

// node is one key of a connection in a bucket's chain. Nodes are
// immutable but for next; the writer links a node in at the head of its
// chain and unlinks it by pointing its predecessor past it, so a reader
// standing on an unlinked node still walks on (the garbage collector
// frees it once no reader holds it: the RCU of Open vSwitch's cmap).
type node struct {
	key   connKey
	c     *conn
	reply bool
	next  atomic.Pointer[node]
}

// table is an open hash of chains. Readers load the table and walk
// chains without locks; every change is made by the tracker's writer
// (under Tracker.mu). Growing builds a new table of new nodes and
// publishes it: readers still on the old one find what it held, which
// lookups check against conn.dead.
type table struct {
	buckets []atomic.Pointer[node]
	mask    uint64
	seed    uint64
	n       int // nodes, writer only
}

func newTable(size int, seed uint64) *table {
	size = 1 << bits.Len(uint(max(size, 64)-1))
	return &table{buckets: make([]atomic.Pointer[node], size), mask: uint64(size - 1), seed: seed}
}

// lookup returns the live connection with key k and whether k is its
// reply key. It takes no lock and allocates nothing.
func (t *table) lookup(k *connKey, now int64) (*conn, bool) {
	h := k.hash(t.seed)
	for n := t.buckets[h&t.mask].Load(); n != nil; n = n.next.Load() {
		if n.key == *k {
			c := n.c
			if c.dead.Load() || c.expired(now) {
				continue
			}
			return c, n.reply
		}
	}
	return nil, false
}

// insert links a key of c; writer only.
func (t *table) insert(k connKey, c *conn, reply bool) {
	n := &node{key: k, c: c, reply: reply}
	b := &t.buckets[k.hash(t.seed)&t.mask]
	n.next.Store(b.Load())
	b.Store(n)
	t.n++
}

// remove unlinks the node of c with key k; writer only.
func (t *table) remove(k *connKey, c *conn) {
	b := &t.buckets[k.hash(t.seed)&t.mask]
	var prev *node
	for n := b.Load(); n != nil; n = n.next.Load() {
		if n.c == c && n.key == *k {
			if prev == nil {
				b.Store(n.next.Load())
			} else {
				prev.next.Store(n.next.Load())
			}
			t.n--
			return
		}
		prev = n
	}
}

// grown returns a table twice the size holding the same keys; writer only.
func (t *table) grown() *table {
	nt := newTable(len(t.buckets)*2, t.seed)
	for i := range t.buckets {
		for n := t.buckets[i].Load(); n != nil; n = n.next.Load() {
			nt.insert(n.key, n.c, n.reply)
		}
	}
	return nt
}

// forEach calls fn for each connection once (by its original key) until
// fn returns false. Safe concurrently with the writer: a connection
// added or removed meanwhile may or may not be seen.
func (t *table) forEach(fn func(*conn) bool) {
	for i := range t.buckets {
		for n := t.buckets[i].Load(); n != nil; n = n.next.Load() {
			if n.reply {
				continue
			}
			if !fn(n.c) {
				return
			}
		}
	}
}
