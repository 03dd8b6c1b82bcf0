// Package sourcetest builds a real switch for tests of the metrics and
// appctl packages: a dpif datapath with ofproto bridges (standalone: the
// default NORMAL flow) over any
// netdev devices (netdevtest fakes or real ones), exposed as a
// source.Switch. Methods are safe from any goroutine.
package sourcetest

import (
	"encoding/binary"
	"slices"
	"sync"
	"testing"
	"time"

	"gvs/dpif"
	"gvs/metrics/source"
	"gvs/netdev"
	"gvs/ofproto"
	"gvs/packet"
)

// Switch is a datapath, its translation layer and the names of its ports.
type Switch struct {
	t  testing.TB
	DP *dpif.Datapath
	SW *ofproto.Switch

	// Budget is what RxRingBudget reports (nil: an empty, unlimited
	// one); give it to the devices the test opens.
	Budget *netdev.MemoryBudget

	mu      sync.Mutex
	bridges []source.Bridge
}

var (
	_ source.Switch         = (*Switch)(nil)
	_ source.RxRingBudgeter = (*Switch)(nil)
)

// RxRingBudget implements source.RxRingBudgeter.
func (s *Switch) RxRingBudget() source.RxRingBudget {
	return source.RxRingBudget{Limit: s.Budget.Limit(), Reserved: s.Budget.Used()}
}

// New starts a datapath with pmds unpinned PMDs; the test's cleanup
// closes it.
func New(t testing.TB, pmds int) *Switch {
	t.Helper()
	return NewWithConfig(t, dpif.Config{PMDs: pmds})
}

// NewWithConfig is New with the datapath configured by cfg (PoolBuffers
// and FrameSize default to 1024 and 2048).
func NewWithConfig(t testing.TB, cfg dpif.Config) *Switch {
	t.Helper()
	if cfg.PoolBuffers == 0 {
		cfg.PoolBuffers = 1024
	}
	if cfg.FrameSize == 0 {
		cfg.FrameSize = 2048
	}
	dp, err := dpif.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &Switch{t: t, DP: dp, SW: ofproto.New(dp, nil)}
	t.Cleanup(func() { s.SW.Close(); dp.Close() })
	return s
}

// AddBridge adds a standalone bridge (its default flow is NORMAL).
func (s *Switch) AddBridge(name string) *ofproto.Bridge {
	s.t.Helper()
	br, err := s.SW.AddBridge(name, ofproto.BridgeConfig{})
	if err != nil {
		s.t.Fatal(err)
	}
	br.SetFailMode(ofproto.FailStandalone)
	s.mu.Lock()
	s.bridges = append(s.bridges, source.Bridge{Name: name, OpenFlow: br, Created: time.Now()})
	slices.SortFunc(s.bridges, func(a, b source.Bridge) int { return cmpString(a.Name, b.Name) })
	s.mu.Unlock()
	return br
}

// AddPort adds dev to the datapath and to bridge, with OpenFlow number
// ofport, and returns its datapath port number.
func (s *Switch) AddPort(bridge string, dev netdev.Device, ofport int) uint32 {
	s.t.Helper()
	no, err := s.DP.PortAdd(dev, dpif.AutoPortNo)
	if err != nil {
		s.t.Fatal(err)
	}
	br := s.SW.Bridge(bridge)
	got, errs := br.AddPorts([]ofproto.PortSpec{{Name: dev.Name(), DPPort: no, Request: ofport}})
	if errs[0] != nil {
		s.t.Fatal(errs[0])
	}
	ofport = int(got[0])
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.bridges {
		b := &s.bridges[i]
		if b.Name == bridge {
			b.Ports = append(b.Ports, source.Port{Port: dev.Name(), Interface: dev.Name(), Type: dev.Type(),
				OFPort: ofport, DPPort: no, InDatapath: true})
			slices.SortFunc(b.Ports, func(x, y source.Port) int { return cmpString(x.Port, y.Port) })
		}
	}
	return no
}

// Datapath implements source.Switch.
func (s *Switch) Datapath() *dpif.Datapath { return s.DP }

// Bridges implements source.Switch.
func (s *Switch) Bridges() []source.Bridge {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]source.Bridge, len(s.bridges))
	for i, b := range s.bridges {
		b.Ports = slices.Clone(b.Ports)
		out[i] = b
	}
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// MAC returns a locally administered address ending in b.
func MAC(b byte) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, b} }

// Frame builds an Ethernet/IPv4/UDP frame from src to dst (198.18.0.0/15
// addresses), of at least 60 bytes.
func Frame(dst, src [6]byte) []byte {
	f := append(append([]byte{}, dst[:]...), src[:]...)
	f = binary.BigEndian.AppendUint16(f, packet.EtherTypeIPv4)
	ip := []byte{0x45, 0, 0, 46, 0, 0, 0, 0, 64, packet.ProtoUDP, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2}
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
	f = append(f, ip...)
	f = append(f, 0x30, 0x39, 0x00, 0x35, 0, 26, 0, 0)
	return append(f, make([]byte, 18)...)
}
