package ofproto

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"gvs/dpif"
	"gvs/ofproto/upcall"
	"gvs/ofproto/xlate"
)

// Switch is the OpenFlow side of one datapath: its upcall handler and
// revalidator (ofproto/upcall), its meters, and the OpenFlow bridges that
// partition its ports. It replaces Switch once translation serves the
// datapath.
type Switch struct {
	dp     *dpif.Datapath
	h      *upcall.Handler
	meters *DatapathMeters
	log    *slog.Logger

	mu      sync.Mutex // bridges; held before any Bridge.mu
	bridges map[string]*Bridge
	xl      sync.Pool // *xlate.Translator for packet outs
}

// New creates the OpenFlow layer over dp and installs its upcall
// handler.
func New(dp *dpif.Datapath, logger *slog.Logger) *Switch {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Switch{dp: dp, log: logger, meters: NewDatapathMeters(dp), bridges: map[string]*Bridge{}}
	s.h = upcall.New(dp, upcall.Config{Logger: logger.With("module", "upcall")})
	s.xl.New = func() any { return xlate.NewTranslator() }
	dp.SetUpcallHandler(s.h)
	return s
}

// Handler returns the datapath's upcall handler.
func (s *Switch) Handler() *upcall.Handler { return s.h }

// AddBridge creates an OpenFlow bridge on the datapath and starts its
// timers (flow expiry, MAC aging).
func (s *Switch) AddBridge(name string, cfg BridgeConfig) (*Bridge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bridges[name] != nil {
		return nil, fmt.Errorf("%w: %s", ErrBridgeExists, name)
	}
	cfg.Meters = s.meters
	b := NewBridge(name, cfg)
	b.SetChanged(s.h.Changed)
	b.setPortsChanged(s.publishPorts)
	b.SetPacketOut(s.packetOut)
	b.SetPortCounters(s.portCounters)
	b.SetResume(func(b *Bridge, fz *xlate.Frozen, frame []byte) error { return s.h.Resume(s.dp, b, fz, frame) })
	b.SetConntrack(s.dp.Conntrack)
	b.SetRecircTable(s.h.Recirc())
	b.Start(time.Second)
	s.bridges[name] = b
	return b, nil
}

// Bridge returns the named bridge or nil.
func (s *Switch) Bridge(name string) *Bridge {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bridges[name]
}

// DelBridge removes a bridge: its ports stop being switched and the
// revalidator deletes its datapath flows.
func (s *Switch) DelBridge(name string) error {
	s.mu.Lock()
	b := s.bridges[name]
	delete(s.bridges, name)
	s.mu.Unlock()
	if b == nil {
		return fmt.Errorf("%w: %s", ErrNoBridge, name)
	}
	b.Close()
	b.FlushFlows()
	s.publishPorts()
	return nil
}

// Close stops the handler and every bridge's timers. The datapath stays.
func (s *Switch) Close() {
	s.mu.Lock()
	brs := slices.Collect(maps.Values(s.bridges))
	s.bridges = map[string]*Bridge{}
	s.mu.Unlock()
	for _, b := range brs {
		b.Close()
	}
	s.h.Close()
}

// publishPorts gives the handler a new map of datapath ports to bridge
// ports (after any port change in any bridge).
func (s *Switch) publishPorts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	ports := upcall.Ports{}
	for _, b := range s.bridges {
		for _, p := range b.Ports() {
			if p.DPPort != xlate.NoDPPort {
				ports[p.DPPort] = upcall.Binding{Bridge: b, Port: p}
			}
		}
	}
	s.h.SetPorts(ports)
	s.pairPatchesLocked()
}

// packetOut runs a packet out through the upcall layer (translation with
// side effects, then dpif.Execute); bundles run theirs after publishing
// the committed version, which is then the bridge's current one.
func (s *Switch) packetOut(b *Bridge, po *PacketOut, _ uint64) error {
	return s.h.PacketOut(s.dp, b, po.InPort, po.Packet, po.Actions)
}

// Errors of bridge and port configuration.
var (
	ErrBridgeExists = errors.New("ofproto: bridge exists")
	ErrNoBridge     = errors.New("ofproto: no such bridge")
	ErrNoPort       = errors.New("ofproto: no such port in bridge")
)

// portCounters reads a datapath port's device counters.
func (s *Switch) portCounters(no uint32) (PortCounters, bool) {
	for _, p := range s.dp.Ports() {
		if p.No == no {
			st := p.Device.Stats()
			return PortCounters{RxPackets: st.RxPackets, TxPackets: st.TxPackets, RxBytes: st.RxBytes, TxBytes: st.TxBytes,
				RxDropped: st.RxKernelDrops, TxDropped: st.TxDrops, RxErrors: st.RxErrors, TxErrors: st.TxErrors}, true
		}
	}
	return PortCounters{}, false
}
