package mac

import (
	"sync"
	"testing"
	"time"
)

func TestTableSeqAndLearnResults(t *testing.T) {
	tb := NewTable(2, time.Minute)
	s0 := tb.Seq()
	if r := tb.Learn(1, mac(1), 5, epoch); r != Learned {
		t.Fatalf("first learn: %v", r)
	}
	s1 := tb.Seq()
	if s1 == s0 {
		t.Fatal("a new entry must change Seq")
	}
	if r := tb.Learn(1, mac(1), 5, epoch.Add(time.Second)); r != Refreshed || tb.Seq() != s1 {
		t.Fatalf("refresh: %v, seq moved %v", r, tb.Seq() != s1)
	}
	if r := tb.Learn(1, mac(1), 6, epoch); r != Moved || tb.Seq() == s1 {
		t.Fatalf("move: %v", r)
	}
	if p, ok := tb.Lookup(1, mac(1)); !ok || p != 6 {
		t.Fatalf("lookup after move: %d %v", p, ok)
	}
	if _, ok := tb.Lookup(2, mac(1)); ok {
		t.Fatal("VLANs must not share entries")
	}
	tb.Learn(1, mac(2), 6, epoch)
	s2 := tb.Seq()
	tb.Learn(1, mac(3), 7, epoch) // full: evicts from port 6
	if tb.Seq() == s2 || tb.Stats().Evicted != 1 {
		t.Fatalf("eviction: seq moved %v, stats %+v", tb.Seq() != s2, tb.Stats())
	}
}

func TestTableExpireAndRefresh(t *testing.T) {
	tb := NewTable(0, time.Minute)
	tb.Learn(0, mac(1), 1, epoch)
	tb.Learn(0, mac(2), 2, epoch)
	// Traffic through installed flows (credited by the revalidator)
	// keeps mac(1) alive; an old credit does not make it older.
	tb.Refresh(0, mac(1), 1, epoch.Add(50*time.Second))
	tb.Refresh(0, mac(1), 1, epoch.Add(10*time.Second))
	if n := tb.Expire(epoch.Add(70 * time.Second)); n != 1 {
		t.Fatalf("expired %d, want 1", n)
	}
	if _, ok := tb.Lookup(0, mac(1)); !ok {
		t.Fatal("refreshed entry expired")
	}
	if _, ok := tb.Lookup(0, mac(2)); ok {
		t.Fatal("idle entry kept")
	}
	if s := tb.Stats(); s.Expired != 1 || s.Entries != 1 {
		t.Fatalf("stats %+v", s)
	}
	// Traffic from a port the address is not learned on moves it there,
	// unless the address moved after that traffic.
	tb.Refresh(0, mac(1), 4, epoch.Add(45*time.Second))
	if p, _ := tb.Lookup(0, mac(1)); p != 1 {
		t.Fatalf("an older credit moved the address to %d", p)
	}
	s0 := tb.Seq()
	tb.Refresh(0, mac(1), 4, epoch.Add(60*time.Second))
	if p, _ := tb.Lookup(0, mac(1)); p != 4 || tb.Seq() == s0 || tb.Stats().Moved != 1 {
		t.Fatalf("refresh from another port: on %d, stats %+v", p, tb.Stats())
	}
	tb.FlushPort(4)
	if s := tb.Stats(); s.Entries != 0 {
		t.Fatalf("after FlushPort: %+v", s)
	}
	tb.Learn(0, mac(3), 1, epoch)
	tb.Flush()
	if s := tb.Stats(); s.Entries != 0 || s.Learned != 3 {
		t.Fatalf("after Flush the totals carry on: %+v", s)
	}
	tb.Learn(0, mac(4), 1, epoch)
	tb.Learn(0, mac(5), 2, epoch)
	tb.SetLimits(1, time.Minute)
	if s := tb.Stats(); s.Entries != 1 || s.Max != 1 {
		t.Fatalf("after shrinking: %+v", s)
	}
}

// TestTableConcurrent: translations learn and look up while the bridge
// ages and flushes (run with -race).
func TestTableConcurrent(t *testing.T) {
	tb := NewTable(64, time.Minute)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				tb.Learn(uint16(g), srcMAC(i%100), uint32(i%5), epoch.Add(time.Duration(i)))
				tb.Lookup(uint16(g), srcMAC(i%50))
			}
		}()
	}
	for range 50 {
		tb.Expire(epoch)
		tb.Entries(epoch)
		tb.FlushPort(3)
	}
	wg.Wait()
	tb.mu.Lock()
	checkTable(t, tb.t)
	tb.mu.Unlock()
}

func TestVLANPortModes(t *testing.T) {
	cases := []struct {
		cfg           PortConfig
		in            uint16 // VID received (0: untagged)
		vlan          uint16
		ok            bool
		outVLAN, want uint16 // OutputTCI(outVLAN, pcp 0)
	}{
		{PortConfig{Tag: 10}, 0, 10, true, 10, 0},
		{PortConfig{Tag: 10}, 10, 0, false, 10, 0},
		{PortConfig{Trunks: []uint16{20, 30}}, 20, 20, true, 30, 30},
		{PortConfig{Trunks: []uint16{20, 30}}, 40, 0, false, 20, 20},
		{PortConfig{Tag: 5, VLANMode: VLANModeNativeUntagged}, 0, 5, true, 5, 0},
		{PortConfig{Tag: 5, VLANMode: VLANModeNativeTagged}, 0, 5, true, 5, 5},
		{PortConfig{Tag: 5, VLANMode: VLANModeNativeUntagged, Trunks: []uint16{7}}, 7, 7, true, 7, 7},
	}
	for i, c := range cases {
		p, err := NewVLANPort(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		vlan, ok := p.InputVLAN(c.in)
		if ok != c.ok || ok && vlan != c.vlan {
			t.Errorf("case %d: InputVLAN(%d) = %d,%v want %d,%v", i, c.in, vlan, ok, c.vlan, c.ok)
		}
		if got := p.OutputTCI(c.outVLAN, 0); got != c.want {
			t.Errorf("case %d: OutputTCI(%d) = %d want %d", i, c.outVLAN, got, c.want)
		}
	}
	if _, err := NewVLANPort(PortConfig{Tag: 5000}); err == nil {
		t.Error("tag 5000 accepted")
	}
	if _, err := NewVLANPort(PortConfig{VLANMode: "bogus"}); err == nil {
		t.Error("bad vlan_mode accepted")
	}
	var trunkAll *VLANPort
	if v, ok := trunkAll.InputVLAN(9); !ok || v != 9 || !trunkAll.Includes(4000) {
		t.Error("nil VLANPort is not a trunk of every VLAN")
	}
}
