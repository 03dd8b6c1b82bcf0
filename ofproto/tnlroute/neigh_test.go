package tnlroute

import (
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"gvs/ofproto/mf"
	"gvs/packet"
)

type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() int64              { return c.ns.Load() }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func ip16(s string) [16]byte { return netip.MustParseAddr(s).As16() }

var (
	macA = [6]byte{0xf8, 0xbc, 0x12, 0x44, 0x34, 0xb6}
	macB = [6]byte{0xf8, 0xbc, 0x12, 0x44, 0x34, 0xb7}
)

func TestCacheAging(t *testing.T) {
	var clk fakeClock
	c := NewCache(clk.now)
	c.Set("br0", ip16("198.18.1.92"), macA)
	if m, ok := c.Lookup("br0", ip16("198.18.1.92")); !ok || m != macA {
		t.Fatalf("lookup: %x %v", m, ok)
	}
	if _, ok := c.Lookup("br1", ip16("198.18.1.92")); ok {
		t.Error("found on another bridge")
	}
	// A lookup refreshes the entry: in use, it never expires.
	for i := 0; i < 5; i++ {
		clk.advance(DefaultAging - time.Second)
		if _, ok := c.Lookup("br0", ip16("198.18.1.92")); !ok {
			t.Fatalf("expired while in use (round %d)", i)
		}
	}
	clk.advance(DefaultAging)
	if _, ok := c.Lookup("br0", ip16("198.18.1.92")); ok {
		t.Error("idle entry still answers")
	}
	if e := c.Entries(); len(e) != 1 || !e[0].Stale {
		t.Errorf("before expiry: %+v", e)
	}
	c.Expire()
	if e := c.Entries(); len(e) != 0 {
		t.Errorf("after expiry: %+v", e)
	}

	// Shortening the aging shortens the entries' lives too.
	c.Set("br0", ip16("2001:2::5"), macB)
	c.SetAging(5 * time.Second)
	clk.advance(5 * time.Second)
	c.Expire()
	if e := c.Entries(); len(e) != 0 {
		t.Errorf("aging 5: %+v", e)
	}
	if c.Aging() != 5*time.Second {
		t.Errorf("aging %v", c.Aging())
	}
	// A new MAC replaces the entry; flush empties.
	c.Set("br0", ip16("198.18.1.92"), macA)
	c.Set("br0", ip16("198.18.1.92"), macB)
	if m, _ := c.Lookup("br0", ip16("198.18.1.92")); m != macB {
		t.Errorf("replaced MAC: %x", m)
	}
	c.Set("br1", ip16("198.18.1.93"), macA)
	c.FlushBridge("br0")
	if e := c.Entries(); len(e) != 1 || e[0].Bridge != "br1" {
		t.Errorf("after FlushBridge: %+v", e)
	}
	c.Flush()
	if e := c.Entries(); len(e) != 0 {
		t.Errorf("after flush: %+v", e)
	}
}

func arpFlow(op uint16, sip, tip string, sha [6]byte) *mf.Flow {
	f := &mf.Flow{}
	f.EtherType = packet.EtherTypeARP
	f.ARPOp = op
	f.SrcIPv4 = netip.MustParseAddr(sip).As4()
	f.DstIPv4 = netip.MustParseAddr(tip).As4()
	f.ARPSHA = sha
	return f
}

func ndFlow(typ uint8, src, dst, target string, tll [6]byte) *mf.Flow {
	f := &mf.Flow{}
	f.EtherType = packet.EtherTypeIPv6
	f.IPProto = packet.ProtoICMPv6
	f.ICMPType = typ
	f.SrcIPv6 = ip16(src)
	f.DstIPv6 = ip16(dst)
	f.NDTarget = ip16(target)
	f.ARPTHA = tll
	return f
}

func TestSnoop(t *testing.T) {
	for _, c := range []struct {
		name  string
		flow  *mf.Flow
		learn bool
		ip    string
		mac   [6]byte
	}{
		{"arp reply", arpFlow(2, "198.18.1.92", "198.18.1.88", macA), true, "198.18.1.92", macA},
		{"garp request", arpFlow(1, "198.18.1.92", "198.18.1.92", macB), true, "198.18.1.92", macB},
		{"arp request", arpFlow(1, "198.18.1.92", "198.18.1.88", macA), false, "", macA},
		{"arp reply without sha", arpFlow(2, "198.18.1.92", "198.18.1.88", [6]byte{}), false, "", macA},
		{"na with tll", ndFlow(136, "2001:2::92", "2001:2::88", "2001:2::92", macA), true, "2001:2::92", macA},
		{"na without tll", ndFlow(136, "2001:2::92", "2001:2::88", "2001:2::92", [6]byte{}), false, "", macA},
		{"ns", ndFlow(135, "2001:2::92", "ff02::1:ff00:88", "2001:2::88", macA), false, "", macA},
		{"ipv4", func() *mf.Flow { f := &mf.Flow{}; f.EtherType = packet.EtherTypeIPv4; return f }(), false, "", macA},
	} {
		cache := NewCache(nil)
		var wc mf.Wildcards
		// ofproto/trace: decides the same, stores nothing.
		if got := cache.Snoop("br0", c.flow, &wc, false); got != c.learn || len(cache.Entries()) != 0 {
			t.Errorf("%s (no update): %v, entries %v", c.name, got, cache.Entries())
		}
		wc = mf.Wildcards{}
		if got := cache.Snoop("br0", c.flow, &wc, true); got != c.learn {
			t.Errorf("%s: learnt %v, want %v", c.name, got, c.learn)
			continue
		}
		if !c.learn {
			if n := len(cache.Entries()); n != 0 {
				t.Errorf("%s: %d entries", c.name, n)
			}
			continue
		}
		if m, ok := cache.Lookup("br0", ip16(c.ip)); !ok || m != c.mac {
			t.Errorf("%s: lookup %x %v", c.name, m, ok)
		}
		// What decided the learning is in the megaflow's mask.
		if c.flow.EtherType == packet.EtherTypeARP {
			if wc.Masks.SrcIPv4 != [4]byte{0xff, 0xff, 0xff, 0xff} || wc.Masks.ARPSHA != [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} {
				t.Errorf("%s: wildcards %+v", c.name, wc.Masks.Key)
			}
		} else if wc.Masks.NDTarget != allOnes16 || wc.Masks.ARPTHA != [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} || wc.Masks.ICMPType != 0xff {
			t.Errorf("%s: wildcards %+v", c.name, wc.Masks.Key)
		}
	}
}

func TestAddressedTo(t *testing.T) {
	if !AddressedTo(arpFlow(2, "198.18.1.92", "198.18.1.88", macA), ip16("198.18.1.88")) {
		t.Error("ARP reply to the bridge's address")
	}
	if AddressedTo(arpFlow(2, "198.18.1.92", "198.18.1.90", macA), ip16("198.18.1.88")) {
		t.Error("ARP reply to another address")
	}
	if !AddressedTo(ndFlow(136, "2001:2::92", "2001:2::88", "2001:2::92", macA), ip16("2001:2::88")) {
		t.Error("NA to the bridge's address")
	}
	if !AddressedTo(ndFlow(136, "2001:2::92", "ff02::1:ff00:88", "2001:2::92", macA), ip16("2001:2::88")) {
		t.Error("NA to the solicited-node group")
	}
	if AddressedTo(ndFlow(136, "2001:2::92", "ff02::1:ff00:89", "2001:2::92", macA), ip16("2001:2::88")) {
		t.Error("NA to another group")
	}
}

func TestNeighborPathAllocatesNothing(t *testing.T) {
	c := NewCache(nil)
	f := arpFlow(2, "198.18.1.92", "198.18.1.88", macA)
	var wc mf.Wildcards
	c.Snoop("br0", f, &wc, true)
	ip := ip16("198.18.1.92")
	if n := testing.AllocsPerRun(1000, func() {
		if _, ok := c.Lookup("br0", ip); !ok {
			panic("not found")
		}
		c.Snoop("br0", f, &wc, true) // a refresh: nothing to publish
	}); n != 0 {
		t.Errorf("Lookup+Snoop refresh allocate %.1f times", n)
	}
}

func BenchmarkNeighborLookup(b *testing.B) {
	c := NewCache(nil)
	for i := 0; i < 1000; i++ {
		c.Set("br-phy", mapped4([4]byte{198, 18, byte(i >> 8), byte(i)}), macA)
	}
	ip := mapped4([4]byte{198, 18, 1, 7})
	b.ReportAllocs()
	for b.Loop() {
		c.Lookup("br-phy", ip)
	}
}
