package upcall_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gvs/dpif"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/upcall"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
	"gvs/packet"
)

// newDP is a datapath without ports: flows are installed with Put, as
// the PMDs' upcalls would.
func newDP(t testing.TB) *dpif.Datapath {
	dp, err := dpif.New(dpif.Config{PMDs: 1, PoolBuffers: 64, FrameSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dp.Close() })
	return dp
}

// TestRevalidationProperty: random flow tables change under installed
// megaflows; after a revalidation round every packet that hits an
// installed flow gets the actions a fresh translation gives it.
func TestRevalidationProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pick := rng.IntN
	dp := newDP(t)
	h := upcall.New(dp, upcall.Config{RevalidateInterval: time.Hour})
	defer h.Close()
	br := xlatetest.NewBridge("br0")
	ports := upcall.Ports{}
	for i := uint32(1); i <= 3; i++ {
		p := &xlate.Port{OFPort: i, DPPort: 10 + i, Live: true}
		br.AddPort(p)
		ports[10+i] = upcall.Binding{Bridge: br, Port: p}
	}
	h.SetPorts(ports)

	randPacket := func() packet.Key {
		var k packet.Key
		k.InPort = uint32(11 + pick(3))
		k.EtherType = packet.EtherTypeIPv4
		k.SrcMAC, k.DstMAC = mac(byte(1+pick(3))), mac(byte(1+pick(3)))
		k.SrcIPv4, k.DstIPv4 = [4]byte{198, 18, 0, byte(pick(4))}, [4]byte{198, 18, 1, byte(pick(4))}
		k.IPProto, k.IPTTL, k.DstPort = 17, 64, uint16(53+pick(2))
		return k
	}
	randRule := func() *xlatetest.Rule {
		var m mf.Match
		w := &m.Wildcards.Masks
		if pick(2) == 0 {
			m.Flow.InPort, w.InPort = uint32(1+pick(3)), ^uint32(0)
		}
		if pick(2) == 0 {
			m.Flow.EtherType, w.EtherType = packet.EtherTypeIPv4, 0xffff
			m.Flow.DstIPv4, w.DstIPv4 = [4]byte{198, 18, 1, byte(pick(4))}, [4]byte{255, 255, 255, 255}
		}
		var acts []xlate.Action
		switch pick(4) {
		case 0:
			acts = []xlate.Action{&ofpact.Output{Port: mf.PortNormal}}
		case 1:
			acts = []xlate.Action{&ofpact.SetIPv4Src{Addr: [4]byte{198, 18, 9, byte(pick(3))}}, &ofpact.Output{Port: uint32(1 + pick(3))}}
		default:
			acts = []xlate.Action{&ofpact.Output{Port: uint32(1 + pick(3))}}
		}
		return &xlatetest.Rule{Prio: uint16(pick(3)), M: m, Acts: acts}
	}
	install := func(k packet.Key) {
		u := dpif.Upcall{Key: &k}
		switch h.Upcall(&u) {
		case dpif.UpcallInstall:
			dp.Put(dpif.FlowSpec{Key: k, Mask: u.Mask, Actions: u.Actions})
		}
	}
	tr := xlate.NewTranslator()
	fresh := func(k packet.Key) string {
		f := mf.Flow{Key: k}
		f.InPort = k.InPort - 10
		return tr.Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: f}).Actions.String()
	}
	checked := 0
	for round := range 200 {
		if round%20 == 0 {
			br.ClearTable(0)
		}
		for range 1 + pick(2) {
			br.AddRule(randRule())
		}
		for range 20 {
			k := randPacket()
			if _, ok := dp.Lookup(&k); !ok {
				install(k)
			}
		}
		h.Changed()
		h.Revalidate()
		for range 50 {
			k := randPacket()
			e, ok := dp.Lookup(&k)
			if !ok {
				continue
			}
			if got, want := e.Actions.String(), fresh(k); got != want {
				t.Fatalf("round %d: installed %s, translation %s (flow mask %+v)", round, got, want, e.Mask)
			}
			checked++
		}
	}
	if checked < 2000 {
		t.Fatalf("only %d packets hit installed flows", checked)
	}
}

// BenchmarkUpcallNormal: the handler's work for one miss through a NORMAL
// pipeline with a new source address each time (learning, translation,
// the megaflow answer), on the PMD.
func BenchmarkUpcallNormal(b *testing.B) {
	dp := newDP(b)
	h := upcall.New(dp, upcall.Config{RevalidateInterval: time.Hour})
	defer h.Close()
	br := xlatetest.NewBridge("br0")
	ports := upcall.Ports{}
	for i := uint32(1); i <= 4; i++ {
		p := &xlate.Port{OFPort: i, DPPort: 10 + i, Live: true}
		br.AddPort(p)
		ports[10+i] = upcall.Binding{Bridge: br, Port: p}
	}
	h.SetPorts(ports)
	br.AddRule(&xlatetest.Rule{Acts: []xlate.Action{&ofpact.Output{Port: mf.PortNormal}}})
	var k packet.Key
	k.InPort, k.EtherType, k.DstMAC = 11, packet.EtherTypeIPv4, mac(9)
	u := dpif.Upcall{Key: &k}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k.SrcMAC = [6]byte{2, 1, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
		if h.Upcall(&u) != dpif.UpcallInstall {
			b.Fatal("not installed")
		}
	}
}

// TestConcurrentUpcallsAndRevalidation: upcalls on several goroutines (as
// on several PMDs) while the tables change and the revalidator runs; run
// with -race.
func TestConcurrentUpcallsAndRevalidation(t *testing.T) {
	dp := newDP(t)
	h := upcall.New(dp, upcall.Config{RevalidateInterval: time.Millisecond})
	defer h.Close()
	br := xlatetest.NewBridge("br0")
	ports := upcall.Ports{}
	for i := uint32(1); i <= 3; i++ {
		p := &xlate.Port{OFPort: i, DPPort: 10 + i, Live: true}
		br.AddPort(p)
		ports[10+i] = upcall.Binding{Bridge: br, Port: p}
	}
	h.SetPorts(ports)
	br.AddRule(&xlatetest.Rule{Acts: []xlate.Action{&ofpact.Output{Port: mf.PortNormal}}})
	br.AddRule(&xlatetest.Rule{Prio: 5, M: inPort(3), Acts: []xlate.Action{
		&ofpact.Controller{MaxLen: 128, Reason: ofpact.ReasonAction}, &ofpact.Output{Port: 1}}})
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var k packet.Key
			u := dpif.Upcall{Key: &k}
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				k = packet.Key{InPort: uint32(11 + (i+g)%3), EtherType: packet.EtherTypeIPv4}
				k.SrcMAC, k.DstMAC = mac(byte(i%7)), mac(byte((i+g)%7))
				if h.Upcall(&u) == dpif.UpcallInstall {
					dp.Put(dpif.FlowSpec{Key: k, Mask: u.Mask, Actions: u.Actions})
				}
			}
		}()
	}
	// Until the upcalls have installed flows and a round has seen some
	// (the upcall goroutines may all start after the first rounds).
	for i := 0; i < 50 || (h.Stats().Installs < 500 || h.Stats().Revalidated == 0) && i < 20000; i++ {
		br.AddRule(&xlatetest.Rule{Prio: uint16(10 + i%3), M: inPort(uint32(1 + i%3)), Acts: []xlate.Action{&ofpact.Output{Port: uint32(1 + (i+1)%3)}}})
		h.Changed()
		h.Revalidate()
		if i%10 == 0 {
			br.ClearTable(0)
			br.AddRule(&xlatetest.Rule{Acts: []xlate.Action{&ofpact.Output{Port: mf.PortNormal}}})
		}
	}
	close(done)
	wg.Wait()
	if s := h.Stats(); s.Rounds == 0 || s.Revalidated == 0 {
		t.Fatalf("handler stats %+v", s)
	}
}

// BenchmarkUpcallOVN: the handler's work for one new TCP connection
// through the recorded OVN two-port pipeline (41 tables), on the PMD.
func BenchmarkUpcallOVN(b *testing.B) {
	dp := newDP(b)
	h := upcall.New(dp, upcall.Config{RevalidateInterval: time.Hour})
	defer h.Close()
	br := xlatetest.NewBridge("br-int")
	ports := upcall.Ports{}
	for i := uint32(1); i <= 2; i++ {
		p := &xlate.Port{OFPort: i, DPPort: 10 + i, Live: true}
		br.AddPort(p)
		ports[10+i] = upcall.Binding{Bridge: br, Port: p}
	}
	h.SetPorts(ports)
	f, err := os.Open(filepath.Join("..", "..", "tests", "testdata", "ovn-two-port.flows"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := xlatetest.LoadFlows(br, f); err != nil {
		b.Fatal(err)
	}
	f.Close()
	xlatetest.UseClassifier(br)
	var k packet.Key
	k.InPort, k.EtherType = 11, packet.EtherTypeIPv4
	k.SrcMAC, k.DstMAC = [6]byte{0, 0, 0, 0, 1, 1}, [6]byte{0, 0, 0, 0, 1, 2}
	k.SrcIPv4, k.DstIPv4 = [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}
	k.IPProto, k.IPTTL, k.DstPort = 6, 64, 5201
	u := dpif.Upcall{Key: &k}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k.SrcPort = uint16(i)
		if r := h.Upcall(&u); r != dpif.UpcallInstall {
			b.Fatalf("upcall result %d", r)
		}
	}
}
