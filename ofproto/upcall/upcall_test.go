package upcall_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gvs/dpif"
	"gvs/netdev/netdevtest"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/upcall"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
	"gvs/packet"
)

func mac(b byte) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, b} }

// frame builds an Ethernet/IPv4/UDP frame to 198.18.0.dstIP.
func frame(dst, src [6]byte, dstIP byte) []byte {
	f := append(append([]byte{}, dst[:]...), src[:]...)
	f = binary.BigEndian.AppendUint16(f, packet.EtherTypeIPv4)
	ip := []byte{0x45, 0, 0, 32, 0, 0, 0, 0, 64, packet.ProtoUDP, 0, 0, 198, 18, 0, 1, 198, 18, 0, dstIP}
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
	f = append(f, ip...)
	return append(f, 0x30, 0x39, 0x00, 0x35, 0, 12, 0, 0, 'g', 'v', 's', '!')
}

type fixture struct {
	t        *testing.T
	dp       *dpif.Datapath
	h        *upcall.Handler
	br       *xlatetest.Bridge
	devs     map[uint32]*netdevtest.Device // by OpenFlow port
	dpPort   map[uint32]uint32             // OpenFlow -> datapath
	injected uint64
}

// newFixture: a datapath with one PMD, the handler (revalidating only
// when the test says), and a bridge with n ports, OpenFlow ports 1..n.
func newFixture(t *testing.T, n int) *fixture {
	dp, err := dpif.New(dpif.Config{PMDs: 1, PoolBuffers: 512, FrameSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{t: t, dp: dp, br: xlatetest.NewBridge("br0"), devs: map[uint32]*netdevtest.Device{}, dpPort: map[uint32]uint32{}}
	fx.h = upcall.New(dp, upcall.Config{RevalidateInterval: time.Hour})
	dp.SetUpcallHandler(fx.h)
	t.Cleanup(func() { fx.h.Close(); dp.Close() })
	ports := upcall.Ports{}
	for i := uint32(1); i <= uint32(n); i++ {
		d := netdevtest.MustNew(netdevtest.Config{Name: "p" + string(rune('0'+i)), TxQueues: 4})
		no, err := dp.PortAdd(d, dpif.AutoPortNo)
		if err != nil {
			t.Fatal(err)
		}
		p := &xlate.Port{OFPort: i, DPPort: no, Name: d.Name(), Live: true}
		fx.br.AddPort(p)
		fx.devs[i], fx.dpPort[i] = d, no
		ports[no] = upcall.Binding{Bridge: fx.br, Port: p}
	}
	fx.h.SetPorts(ports)
	return fx
}

// send injects f on OpenFlow port in, waits for the datapath, and
// returns the OpenFlow ports that sent a frame.
func (fx *fixture) send(in uint32, f []byte) []uint32 {
	fx.t.Helper()
	for _, d := range fx.devs {
		d.TakeSent()
	}
	fx.devs[in].Inject(0, f)
	fx.injected++
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n uint64
		for _, s := range fx.dp.PMDStats() {
			n += s.Packets
		}
		if n >= fx.injected {
			break
		}
		if time.Now().After(deadline) {
			fx.t.Fatalf("datapath handled %d of %d packets", n, fx.injected)
		}
		time.Sleep(100 * time.Microsecond)
	}
	// The slow path runs on its own goroutine: give it a moment.
	time.Sleep(2 * time.Millisecond)
	var out []uint32
	for p := uint32(1); p <= uint32(len(fx.devs)); p++ {
		if len(fx.devs[p].TakeSent()) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// upcalls counts the handler's upcalls: counted before the answer, so a
// packet's effects are never seen before its upcall is (the PMDs publish
// their own counters later).
func (fx *fixture) upcalls() uint64 {
	return fx.h.Stats().Upcalls
}

func inPort(p uint32) mf.Match {
	var m mf.Match
	m.Flow.InPort, m.Wildcards.Masks.InPort = p, ^uint32(0)
	return m
}

func eq(a []uint32, b ...uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestInstallThenRevalidateFlowMod(t *testing.T) {
	fx := newFixture(t, 3)
	r := fx.br.AddRule(&xlatetest.Rule{Prio: 1, M: inPort(1), Acts: []xlate.Action{&ofpact.Output{Port: 2}}})
	f := frame(mac(2), mac(1), 2)
	if got := fx.send(1, f); !eq(got, 2) {
		t.Fatalf("first packet went to %v", got)
	}
	if got := fx.send(1, f); !eq(got, 2) {
		t.Fatalf("second packet went to %v", got)
	}
	if fx.upcalls() != 1 {
		t.Fatalf("%d upcalls, want 1 (the megaflow takes the second packet)", fx.upcalls())
	}
	if s := fx.h.Stats(); s.Upcalls != 1 || s.Installs != 1 {
		t.Fatalf("handler stats %+v", s)
	}
	flows := fx.dp.Dump()
	if len(flows) != 1 || flows[0].Mask.SrcMAC != ([6]byte{}) || flows[0].Mask.InPort != ^uint32(0) {
		t.Fatalf("megaflow %+v", flows)
	}
	// Statistics reach the rule through the revalidator.
	st := fx.h.Revalidate()
	if st.Flows != 1 || r.Packets.Load() != 2 {
		t.Fatalf("round %+v; rule credited %d packets, want 2", st, r.Packets.Load())
	}
	// A flow mod: the installed flow's actions change in place.
	fx.br.ClearTable(0)
	r2 := fx.br.AddRule(&xlatetest.Rule{Prio: 1, M: inPort(1), Acts: []xlate.Action{&ofpact.Output{Port: 3}}})
	fx.h.Changed()
	st = fx.h.Revalidate()
	if st.Modified != 1 || st.Deleted != 0 {
		t.Fatalf("after the flow mod: %+v", st)
	}
	if got := fx.send(1, f); !eq(got, 3) {
		t.Fatalf("after revalidation the packet went to %v", got)
	}
	if fx.upcalls() != 1 {
		t.Fatalf("revalidation should have fixed the flow without an upcall")
	}
	fx.h.Revalidate()
	if r2.Packets.Load() != 1 || r.Packets.Load() != 2 {
		t.Fatalf("credits: old rule %d, new rule %d", r.Packets.Load(), r2.Packets.Load())
	}
	// A rule that needs a field the megaflow does not match: the flow is
	// deleted, and the next packet upcalls.
	var m mf.Match
	m.Flow.EtherType, m.Wildcards.Masks.EtherType = packet.EtherTypeIPv4, 0xffff
	m.Flow.DstIPv4, m.Wildcards.Masks.DstIPv4 = [4]byte{198, 18, 0, 9}, [4]byte{255, 255, 255, 255}
	fx.br.AddRule(&xlatetest.Rule{Prio: 9, M: m, Acts: []xlate.Action{&ofpact.Output{Port: 2}}})
	fx.h.Changed()
	if st = fx.h.Revalidate(); st.Deleted != 1 {
		t.Fatalf("a flow with too narrow a mask survived: %+v", st)
	}
	if got := fx.send(1, f); !eq(got, 3) {
		t.Fatalf("packet to .2 went to %v", got)
	}
	if got := fx.send(1, frame(mac(2), mac(1), 9)); !eq(got, 2) {
		t.Fatalf("packet to .9 went to %v", got)
	}
}

func TestNormalLearningRevalidates(t *testing.T) {
	fx := newFixture(t, 3)
	fx.br.AddRule(&xlatetest.Rule{Acts: []xlate.Action{&ofpact.Output{Port: mf.PortNormal}}})
	if got := fx.send(1, frame(mac(0xb), mac(0xa), 2)); !eq(got, 2, 3) {
		t.Fatalf("unknown destination: %v", got)
	}
	// b answers from port 2: learned; the flow a->b that flooded is
	// revalidated to go to port 2 only.
	if got := fx.send(2, frame(mac(0xa), mac(0xb), 2)); !eq(got, 1) {
		t.Fatalf("reply: %v", got)
	}
	fx.h.Revalidate()
	before := fx.upcalls()
	if got := fx.send(1, frame(mac(0xb), mac(0xa), 2)); !eq(got, 2) {
		t.Fatalf("after learning: %v", got)
	}
	if fx.upcalls() != before {
		t.Fatalf("the revalidated flow should take the packet")
	}
	// Aging: traffic through installed flows keeps the entries alive.
	macs := fx.br.MACs()
	fx.h.Revalidate()
	if _, ok := macs.Lookup(0, mac(0xa)); !ok {
		t.Fatal("a forgotten")
	}
}

func TestLearnAndControllerGoSlowPath(t *testing.T) {
	fx := newFixture(t, 3)
	reg := mf.FieldByName("eth_dst")
	src := mf.FieldByName("eth_src")
	learn := &ofpact.Learn{TableID: 1, Priority: 10, Specs: []ofpact.LearnSpec{
		{SrcType: ofpact.LearnSrcField, DstType: ofpact.LearnDstMatch, NBits: 48, Src: mf.WholeField(src), Dst: mf.WholeField(reg)},
		{SrcType: ofpact.LearnSrcField, DstType: ofpact.LearnDstOutput, NBits: 16, Src: mf.WholeField(mf.FieldByName("in_port"))},
	}}
	fx.br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{learn, &ofpact.Resubmit{InPort: mf.PortInPort, TableID: 1}}})
	fx.br.AddRule(&xlatetest.Rule{Table: 1, Prio: 0, Acts: []xlate.Action{&ofpact.Output{Port: mf.PortFlood}}})
	if got := fx.send(1, frame(mac(0xb), mac(0xa), 2)); !eq(got, 2, 3) {
		t.Fatalf("first packet: %v", got)
	}
	fx.br.LearnedMu.Lock()
	n := len(fx.br.Learned)
	fx.br.LearnedMu.Unlock()
	if n != 1 {
		t.Fatalf("%d learned flows, want 1", n)
	}
	// The learned flow (dl_dst=a -> output:1) takes the reply.
	fx.h.Revalidate()
	if got := fx.send(2, frame(mac(0xa), mac(0xb), 2)); !eq(got, 1) {
		t.Fatalf("reply through the learned flow: %v", got)
	}

	// A controller action: the packet-in reaches the bridge.
	fx.br.AddRule(&xlatetest.Rule{Prio: 50, M: inPort(3), Acts: []xlate.Action{&ofpact.Controller{MaxLen: 0xffff, Reason: ofpact.ReasonAction, Userdata: []byte{1, 2}}}})
	fx.h.Changed()
	fx.h.Revalidate()
	fx.send(3, frame(mac(0xa), mac(0xc), 2))
	before := fx.upcalls()
	fx.send(3, frame(mac(0xa), mac(0xc), 2))
	if fx.upcalls() != before {
		t.Fatalf("the controller flow is not cached")
	}
	cached := false
	for _, fe := range fx.dp.Dump() {
		for _, a := range fe.Actions {
			if a.Kind == dpif.ActUserspace && a.Userspace.Type == dpif.CookieController {
				cached = true
			}
		}
	}
	if !cached {
		t.Fatalf("no userspace(controller) action installed: %+v", fx.dp.Dump())
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		fx.br.LearnedMu.Lock()
		pis := append([]xlate.PacketIn(nil), fx.br.PacketIns...)
		fx.br.LearnedMu.Unlock()
		if len(pis) == 2 {
			if pis[0].Reason != xlate.ReasonAction || pis[0].Flow.InPort != 3 || len(pis[0].Packet) != 46 || string(pis[0].Userdata) != "\x01\x02" {
				t.Fatalf("packet-in %+v", pis[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d packet-ins", len(pis))
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPacketOut(t *testing.T) {
	fx := newFixture(t, 3)
	fx.br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.Output{Port: 3}}})
	for _, d := range fx.devs {
		d.TakeSent()
	}
	f := frame(mac(2), mac(1), 2)
	if err := fx.h.PacketOut(fx.dp, fx.br, mf.PortController, f, []xlate.Action{&ofpact.Output{Port: 2}}); err != nil {
		t.Fatal(err)
	}
	// output:TABLE runs the packet through the tables.
	if err := fx.h.PacketOut(fx.dp, fx.br, mf.PortController, f, []xlate.Action{&ofpact.Output{Port: mf.PortTable}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		n2, n3 := len(fx.devs[2].Sent()), len(fx.devs[3].Sent())
		if n2 == 1 && n3 == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("port 2 sent %d, port 3 sent %d; want 1 each", n2, n3)
		}
		time.Sleep(time.Millisecond)
	}
	if err := fx.h.PacketOut(fx.dp, fx.br, 1, f[:10], nil); err != upcall.ErrShortPacket {
		t.Fatalf("short packet: %v", err)
	}
}

// udpFrame is frame with UDP source port sport.
func udpFrame(sport uint16) []byte {
	f := frame(mac(2), mac(1), 2)
	binary.BigEndian.PutUint16(f[34:], sport)
	return f
}

func TestSelectGroupByDPHash(t *testing.T) {
	fx := newFixture(t, 4)
	var bs []xlate.Bucket
	for p := uint32(2); p <= 4; p++ {
		bs = append(bs, xlate.Bucket{ID: p, Weight: 10, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: []xlate.Action{&ofpact.Output{Port: p}}})
	}
	fx.br.SetGroup(&xlatetest.Group{ID: 7, Type: xlate.GroupSelect, Method: xlate.SelectDPHash, B: bs})
	fx.br.AddRule(&xlatetest.Rule{Prio: 1, M: inPort(1), Acts: []xlate.Action{&ofpact.Group{ID: 7}}})
	seen := map[uint32]int{}
	for i := 0; i < 60; i++ {
		out := fx.send(1, udpFrame(uint16(2000+i)))
		if len(out) != 1 {
			t.Fatalf("packet %d went to %v", i, out)
		}
		seen[out[0]]++
		// The same flow keeps its bucket.
		if again := fx.send(1, udpFrame(uint16(2000+i))); !eq(again, out[0]) {
			t.Fatalf("flow %d moved from %d to %v", i, out[0], again)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("dp_hash spread: %v", seen)
	}
	// One first-pass megaflow for every flow: it does not match L4 ports.
	first := 0
	for _, fe := range fx.dp.Dump() {
		if fe.Key.RecircID == 0 {
			first++
			if fe.Mask.SrcPort != 0 {
				t.Fatalf("first pass matches the source port: %+v", fe.Mask)
			}
		}
	}
	if first != 1 {
		t.Fatalf("%d first-pass megaflows, want 1", first)
	}
	// A flow does not count the packet whose upcall installed it.
	var second, firstPk, secondFlows uint64
	for _, fe := range fx.dp.Dump() {
		if fe.Key.RecircID != 0 {
			second += fe.Stats.Packets
			secondFlows++
		} else {
			firstPk += fe.Stats.Packets
		}
	}
	if firstPk != 120-1 || second != 120-secondFlows {
		t.Fatalf("datapath: first pass %d packets, second pass %d in %d flows; want 119 and %d", firstPk, second, secondFlows, 120-secondFlows)
	}
	if st := fx.h.Revalidate(); st.Deleted != 0 {
		t.Fatalf("revalidation deleted dp_hash flows: %+v", st)
	}
	if g := fx.br.Group(0, 7).(*xlatetest.Group); g.Packets.Load() != 120 {
		t.Fatalf("group credited %d packets, want 120", g.Packets.Load())
	}
}

// icmpFrame builds an Ethernet/IPv4/ICMP echo request.
func icmpFrame(dst, src [6]byte, sip, dip [4]byte) []byte {
	f := append(append([]byte{}, dst[:]...), src[:]...)
	f = binary.BigEndian.AppendUint16(f, packet.EtherTypeIPv4)
	ip := []byte{0x45, 0, 0, 28, 0, 0, 0, 0, 64, 1, 0, 0}
	ip = append(append(ip, sip[:]...), dip[:]...)
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
	f = append(f, ip...)
	return append(f, 8, 0, 0xf7, 0xff, 0, 0, 0, 0)
}

// TestOVNPipelineOnDatapath: the recorded OVN two-port pipeline on a real
// datapath: a ping crosses some 40 tables once, then its megaflow takes
// the next packets; OVN's ARP responder answers an ARP request back out
// of the port it came from (on the slow path, as Open vSwitch does for
// ARP rewrites).
func TestOVNPipelineOnDatapath(t *testing.T) {
	fx := newFixture(t, 2)
	f, err := os.Open(filepath.Join("..", "..", "tests", "testdata", "ovn-two-port.flows"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := xlatetest.LoadFlows(fx.br, f)
	f.Close()
	if err != nil || n < 140 {
		t.Fatalf("loaded %d flows: %v", n, err)
	}
	xlatetest.UseClassifier(fx.br)
	fx.h.Changed()
	mac1, mac2 := [6]byte{0, 0, 0, 0, 1, 1}, [6]byte{0, 0, 0, 0, 1, 2}
	ip1, ip2 := [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}
	ping := icmpFrame(mac2, mac1, ip1, ip2)
	if got := fx.send(1, ping); !eq(got, 2) {
		t.Fatalf("ping went to %v", got)
	}
	before := fx.upcalls()
	for range 5 {
		if got := fx.send(1, ping); !eq(got, 2) {
			t.Fatalf("ping went to %v", got)
		}
	}
	if fx.upcalls() != before {
		t.Fatalf("%d more upcalls: the megaflow does not take the pings", fx.upcalls()-before)
	}
	if got := fx.send(2, icmpFrame(mac1, mac2, ip2, ip1)); !eq(got, 1) {
		t.Fatalf("reply went to %v", got)
	}
	// ARP request for 198.18.0.2 from port 1: OVN answers it.
	arp := append(append([]byte{}, broadcast[:]...), mac1[:]...)
	arp = binary.BigEndian.AppendUint16(arp, packet.EtherTypeARP)
	arp = append(arp, 0, 1, 8, 0, 6, 4, 0, 1)
	arp = append(append(append(append(arp, mac1[:]...), ip1[:]...), 0, 0, 0, 0, 0, 0), ip2[:]...)
	replies := func() int {
		n := 0
		for _, s := range fx.devs[1].Sent() {
			var k packet.Key
			packet.Parse(s.Data, &k)
			if k.EtherType == packet.EtherTypeARP && k.ARPOp == 2 && k.SrcIPv4 == ip2 && k.SrcMAC == mac2 && k.DstMAC == mac1 {
				n++
			}
		}
		return n
	}
	fx.devs[1].TakeSent()
	fx.devs[1].Inject(0, arp)
	fx.injected++
	waitFor(t, "ARP reply", func() bool { return replies() == 1 })
	// The flow is cached with a slow-path action (as Open vSwitch does
	// for ARP rewrites): the next request is answered without an upcall.
	before = fx.upcalls()
	fx.devs[1].Inject(0, arp)
	fx.injected++
	waitFor(t, "second ARP reply", func() bool { return replies() == 2 })
	if fx.upcalls() != before {
		t.Fatalf("the slow-pathed flow was not cached")
	}
	slow := false
	for _, fe := range fx.dp.Dump() {
		if strings.Contains(fe.Actions.String(), "slow_path(action)") {
			slow = true
		}
	}
	if !slow {
		t.Fatalf("no slow_path flow installed: %v", fx.dp.Dump())
	}
	if st := fx.h.Revalidate(); st.Deleted != 0 || st.Modified != 0 {
		t.Fatalf("revalidation changed the flows: %+v", st)
	}
}

func TestPacketOutSpecMetadata(t *testing.T) {
	fx := newFixture(t, 3)
	var m mf.Match
	m.Flow.Regs[3], m.Wildcards.Masks.Regs[3] = 7, ^uint32(0)
	fx.br.AddRule(&xlatetest.Rule{Prio: 10, M: m, Acts: []xlate.Action{&ofpact.Output{Port: 3}}})
	fx.br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.Output{Port: 2}}})
	for _, d := range fx.devs {
		d.TakeSent()
	}
	var meta mf.Flow
	meta.Regs[3] = 7
	err := fx.h.PacketOutSpec(fx.dp, fx.br, upcall.PacketOutSpec{InPort: mf.PortController, Frame: frame(mac(2), mac(1), 2),
		Actions: []xlate.Action{&ofpact.Output{Port: mf.PortTable}}, Meta: &meta})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "output by reg3", func() bool { return len(fx.devs[3].Sent()) == 1 })
	if n := len(fx.devs[2].Sent()); n != 0 {
		t.Fatalf("port 2 sent %d", n)
	}
}
