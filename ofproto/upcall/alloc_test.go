package upcall_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gvs/dpif"
	"gvs/ofproto/upcall"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
	"gvs/packet"
)

// ovnUpcall is a handler for the OVN two-port pipeline and the upcall of
// a UDP packet from its port 1 to port 2, with the packet, as a PMD
// makes it.
func ovnUpcall(t testing.TB) (*upcall.Handler, *xlatetest.Bridge, *dpif.Upcall, *packet.Buffer) {
	dp := newDP(t)
	h := upcall.New(dp, upcall.Config{RevalidateInterval: time.Hour})
	t.Cleanup(h.Close)
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
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := xlatetest.LoadFlows(br, f); err != nil || n < 140 {
		t.Fatalf("loaded %d flows: %v", n, err)
	}
	xlatetest.UseClassifier(br)
	mac1, mac2 := [6]byte{0, 0, 0, 0, 1, 1}, [6]byte{0, 0, 0, 0, 1, 2}
	fr := append(append([]byte{}, mac2[:]...), mac1[:]...)
	fr = binary.BigEndian.AppendUint16(fr, packet.EtherTypeIPv4)
	ip := []byte{0x45, 0, 0, 28, 0, 0, 0, 0, 64, packet.ProtoUDP, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2}
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
	fr = append(append(fr, ip...), 0x07, 0xd0, 0x23, 0x28, 0, 8, 0, 0)
	buf := packet.NewBuffer(packet.DefaultHeadroom, len(fr))
	buf.SetLen(copy(buf.Room(), fr))
	buf.Parse()
	buf.Key.InPort = 11
	return h, br, &dpif.Upcall{Key: &buf.Key, Packet: buf}, buf
}

// An upcall through the OVN pipeline, the rules' first-packet credit
// included, allocates nothing.
func TestUpcallAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector include sync.Pool's random drops")
	}
	h, _, u, buf := ovnUpcall(t)
	if r := h.Upcall(u); r != dpif.UpcallInstall {
		t.Fatalf("upcall answered %v, want install", r)
	}
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		buf.Key.SrcPort = uint16(i)
		i++
		u.Actions = u.Actions[:0]
		h.Upcall(u)
	})
	if allocs != 0 {
		t.Fatalf("an upcall allocates %.1f times", allocs)
	}
}

// The upcall's packet is credited to the rules it hit at once (the
// datapath flow will not count it), as Open vSwitch credits a miss
// upcall's packet during translation.
func TestUpcallCreditsRulesWithItsPacket(t *testing.T) {
	h, br, u, buf := ovnUpcall(t)
	packets := func() (n uint64) {
		for table := range 255 {
			for _, r := range br.Rules(uint8(table)) {
				n += r.Packets.Load()
			}
		}
		return n
	}
	if n := packets(); n != 0 {
		t.Fatalf("rules count %d packets before any", n)
	}
	if r := h.Upcall(u); r != dpif.UpcallInstall {
		t.Fatalf("upcall answered %v, want install", r)
	}
	first := packets()
	if first < 20 { // the packet crosses some 40 tables
		t.Fatalf("one upcall credited %d rule hits", first)
	}
	buf.Key.SrcPort++
	h.Upcall(u)
	if n := packets(); n != 2*first {
		t.Fatalf("two upcalls credited %d rule hits, want %d", n, 2*first)
	}
}
