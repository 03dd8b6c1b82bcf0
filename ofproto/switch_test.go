package ofproto

import (
	"testing"
	"time"

	"gvs/dpif"
	"gvs/netdev/netdevtest"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/pipeline"
	"gvs/ofproto/xlate"
)

// translates reports whether translation turns actions into datapath
// actions in this build (ofproto/xlate's action translation may still be
// behind a build tag).
func translates() bool {
	b := NewBridge("probe", BridgeConfig{})
	b.AddPorts([]PortSpec{{Name: "p", DPPort: 1}})
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: b, Version: b.Version(),
		Actions: []xlate.Action{&ofpact.Output{Port: 1}}, PacketOut: true})
	return len(res.Actions) > 0
}

type switchFixture struct {
	sw   *Switch
	br   *Bridge
	devs []*netdevtest.Device
}

func newSwitchFixture(t *testing.T) *switchFixture {
	t.Helper()
	if !translates() {
		t.Skip("translation of actions is not built (ofproto/xlate's pending files)")
	}
	dp, err := dpif.New(dpif.Config{PMDs: 1, PoolBuffers: 512, FrameSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	sw := New(dp, nil)
	t.Cleanup(func() { sw.Close(); dp.Close() })
	br, err := sw.AddBridge("br0", BridgeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	f := &switchFixture{sw: sw, br: br}
	for i, name := range []string{"p1", "p2"} {
		d := netdevtest.MustNew(netdevtest.Config{Name: name, RxQueues: 1, TxQueues: 2})
		no, err := dp.PortAdd(d, dpif.AutoPortNo)
		if err != nil {
			t.Fatal(err)
		}
		if _, errs := br.AddPorts([]PortSpec{{Name: name, DPPort: no, Request: i + 1}}); errs[0] != nil {
			t.Fatal(errs[0])
		}
		f.devs = append(f.devs, d)
	}
	return f
}

// send injects a frame on port in (1-based) and returns how many frames
// each port sent within a short wait.
func (f *switchFixture) send(t *testing.T, in int, frame []byte) [2]int {
	t.Helper()
	for _, d := range f.devs {
		d.TakeSent()
	}
	if err := f.devs[in-1].Inject(0, frame); err != nil {
		t.Fatal(err)
	}
	var got [2]int
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		got = [2]int{len(f.devs[0].Sent()), len(f.devs[1].Sent())}
		if got[0]+got[1] > 0 {
			time.Sleep(20 * time.Millisecond)
			return [2]int{len(f.devs[0].Sent()), len(f.devs[1].Sent())}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return got
}

// TestSwitchPipeline: a standalone bridge switches through its default
// flow; secure mode drops; a flow mod's output takes over (the revalidator
// fixes installed flows); a packet out leaves where its actions say.
func TestSwitchPipeline(t *testing.T) {
	f := newSwitchFixture(t)
	a, b := testMAC(1), testMAC(2)
	f.br.SetFailMode(FailStandalone)
	if got := f.send(t, 1, testFrame(b, a)); got != [2]int{0, 1} {
		t.Fatalf("NORMAL flood from port 1: sent %v", got)
	}
	if got := f.send(t, 2, testFrame(a, b)); got != [2]int{1, 0} {
		t.Fatalf("NORMAL to learned port 1: sent %v", got)
	}
	f.br.SetFailMode(FailSecure)
	f.sw.Handler().Revalidate()
	if got := f.send(t, 1, testFrame(b, a)); got != [2]int{0, 0} {
		t.Fatalf("secure bridge without flows forwarded: %v", got)
	}
	var m mf.Match
	m.Flow.InPort, m.Wildcards.Masks.InPort = 1, ^uint32(0)
	if err := f.br.Pipeline().FlowMod(&pipeline.FlowMod{Command: pipeline.FlowAdd, Match: m, Priority: 5,
		OutPort: mf.PortNone, OutGroup: pipeline.GroupAny, BufferID: pipeline.BufferNone,
		Actions: []pipeline.Action{&ofpact.Output{Port: 2}}}); err != nil {
		t.Fatal(err)
	}
	f.sw.Handler().Revalidate()
	if got := f.send(t, 1, testFrame(b, a)); got != [2]int{0, 1} {
		t.Fatalf("in_port=1 actions=output:2: sent %v", got)
	}
	if got := f.send(t, 2, testFrame(a, b)); got != [2]int{0, 0} {
		t.Fatalf("no flow for port 2 yet it forwarded: %v", got)
	}
	// The rule's counters come from the datapath flow, credited by the
	// revalidator.
	f.sw.Handler().Revalidate()
	rules := allFlows(t, f.br)
	if pk, _, _ := rules[0].Stats(); pk == 0 {
		t.Errorf("rule counters not credited: %d packets", pk)
	}
	for _, d := range f.devs {
		d.TakeSent()
	}
	if err := f.br.PacketOut(&PacketOut{InPort: mf.PortController, Packet: testFrame(a, b),
		Actions: []pipeline.Action{&ofpact.Output{Port: 1}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.devs[0].TakeSent()); n != 1 {
		t.Fatalf("packet out to port 1 sent %d frames", n)
	}
}

func testMAC(b byte) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, b} }

// testFrame is a 60-byte Ethernet/IPv4/UDP frame from src to dst.
func testFrame(dst, src [6]byte) []byte {
	f := make([]byte, 60)
	copy(f[0:6], dst[:])
	copy(f[6:12], src[:])
	f[12], f[13] = 0x08, 0x00
	ip := f[14:]
	ip[0], ip[3], ip[8], ip[9] = 0x45, 46, 64, 17
	copy(ip[12:16], []byte{198, 18, 0, src[5]})
	copy(ip[16:20], []byte{198, 18, 0, dst[5]})
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	ip[10], ip[11] = byte(^sum>>8), byte(^sum)
	udp := ip[20:]
	udp[1], udp[3], udp[5] = 7, 9, 26
	return f
}
