package xlate_test

import (
	"os"
	"path/filepath"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
	"gvs/packet"
)

// loadFlows reads an ovs-ofctl flow file into br's tables.
func loadFlows(t testing.TB, br *xlatetest.Bridge, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := xlatetest.LoadFlows(br, f)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The pipeline Debian's OVN 23.03 installs for one logical switch with
// two ports (tests/testdata/ovn-two-port.flows): a ping from one port to
// the other crosses some 40 tables and must become one output, with a
// megaflow that does not match what the pipeline never looked at.
func TestOVNTwoPortPipeline(t *testing.T) {
	br := xlatetest.NewBridge("br-int")
	br.AddPort(&xlate.Port{OFPort: 1, DPPort: 11, Name: "vif1", Live: true})
	br.AddPort(&xlate.Port{OFPort: 2, DPPort: 12, Name: "vif2", Live: true})
	n := loadFlows(t, br, filepath.Join("..", "..", "tests", "testdata", "ovn-two-port.flows"))
	if n < 140 {
		t.Fatalf("%d flows loaded", n)
	}
	xlatetest.UseClassifier(br)
	ping := func(in uint32, src, dst [6]byte, sip, dip byte) mf.Flow {
		var f mf.Flow
		f.InPort, f.EtherType = in, packet.EtherTypeIPv4
		f.SrcMAC, f.DstMAC = src, dst
		f.SrcIPv4, f.DstIPv4 = [4]byte{198, 18, 0, sip}, [4]byte{198, 18, 0, dip}
		f.IPProto, f.IPTTL, f.ICMPType = 1, 64, 8
		return f
	}
	mac1 := [6]byte{0, 0, 0, 0, 1, 1}
	mac2 := [6]byte{0, 0, 0, 0, 1, 2}
	tr := xlate.NewTranslator()
	for _, c := range []struct {
		name string
		f    mf.Flow
		want string
	}{
		{"ping 1->2", ping(1, mac1, mac2, 1, 2), "12"},
		{"ping 2->1", ping(2, mac2, mac1, 2, 1), "11"},
	} {
		res := tr.Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: c.f})
		if res.Error != nil || res.Slow != 0 || res.Actions.String() != c.want {
			t.Fatalf("%s: actions %s, slow %d, error %v\n%s", c.name, res.Actions, res.Slow, res.Error,
				xlate.TraceText(br, c.f, xlate.TraceOptions{}))
		}
		m := res.Wildcards.DatapathMask()
		if m.SrcPort != 0 || m.DstPort != 0 || m.IPTOS != 0 {
			t.Errorf("%s: the megaflow matches fields the pipeline did not look at: %+v", c.name, m)
		}
		if len(res.Cache.Rules) < 30 {
			t.Errorf("%s: only %d rules hit", c.name, len(res.Cache.Rules))
		}
	}
	// OVN's ARP responder answers an ARP request for the other port's
	// address itself, back out of the input port (in_port cleared to
	// ANY around the output, so the output is not skipped).
	var arp mf.Flow
	arp.InPort, arp.EtherType, arp.ARPOp = 1, packet.EtherTypeARP, 1
	arp.SrcMAC, arp.DstMAC = mac1, [6]byte{255, 255, 255, 255, 255, 255}
	arp.SrcIPv4, arp.DstIPv4, arp.ARPSHA = [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}, mac1
	res := tr.Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: arp})
	want := "set(eth(src=00:00:00:00:01:02,dst=00:00:00:00:01:01)),set(arp(sip=198.18.0.2,tip=198.18.0.1,op=2,sha=00:00:00:00:01:02,tha=00:00:00:00:01:01)),11"
	if got := res.Actions.String(); got != want {
		t.Fatalf("ARP reply: %s, want %s\n%s", got, want, xlate.TraceText(br, arp, xlate.TraceOptions{}))
	}
}

// BenchmarkOVNTwoPortPing: translating a ping through the OVN pipeline
// (what one upcall costs).
func BenchmarkOVNTwoPortPing(b *testing.B) {
	br := xlatetest.NewBridge("br-int")
	br.AddPort(&xlate.Port{OFPort: 1, DPPort: 11, Live: true})
	br.AddPort(&xlate.Port{OFPort: 2, DPPort: 12, Live: true})
	loadFlows(b, br, filepath.Join("..", "..", "tests", "testdata", "ovn-two-port.flows"))
	xlatetest.UseClassifier(br)
	var f mf.Flow
	f.InPort, f.EtherType = 1, packet.EtherTypeIPv4
	f.SrcMAC, f.DstMAC = [6]byte{0, 0, 0, 0, 1, 1}, [6]byte{0, 0, 0, 0, 1, 2}
	f.SrcIPv4, f.DstIPv4 = [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}
	f.IPProto, f.IPTTL, f.ICMPType = 1, 64, 8
	tr := xlate.NewTranslator()
	in := xlate.Input{Bridge: br, Version: br.Version(), Flow: f}
	if got := tr.Translate(&in).Actions.String(); got != "12" {
		b.Fatalf("ping: %s", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		tr.Translate(&in)
	}
}
