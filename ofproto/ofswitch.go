//go:build pending

package ofproto

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"gvs/dpif"
	"gvs/ofproto/mf"
	"gvs/ofproto/upcall"
	"gvs/ofproto/xlate"
	"gvs/packet"
)

// OFSwitch is the OpenFlow side of one datapath: its upcall handler and
// revalidator (ofproto/upcall), its meters, and the OpenFlow bridges that
// partition its ports. It replaces Switch once translation serves the
// datapath.
type OFSwitch struct {
	dp     *dpif.Datapath
	h      *upcall.Handler
	meters *DatapathMeters
	log    *slog.Logger

	mu      sync.Mutex // bridges; held before any OFBridge.mu
	bridges map[string]*OFBridge
	xl      sync.Pool // *xlate.Translator for packet outs
}

// NewOFSwitch creates the OpenFlow layer over dp and installs its upcall
// handler.
func NewOFSwitch(dp *dpif.Datapath, logger *slog.Logger) *OFSwitch {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &OFSwitch{dp: dp, log: logger, meters: NewDatapathMeters(dp), bridges: map[string]*OFBridge{}}
	s.h = upcall.New(dp, upcall.Config{Logger: logger.With("module", "upcall")})
	s.xl.New = func() any { return xlate.NewTranslator() }
	dp.SetUpcallHandler(s.h)
	return s
}

// Handler returns the datapath's upcall handler.
func (s *OFSwitch) Handler() *upcall.Handler { return s.h }

// AddBridge creates an OpenFlow bridge on the datapath and starts its
// timers (flow expiry, MAC aging).
func (s *OFSwitch) AddBridge(name string, cfg OFBridgeConfig) (*OFBridge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bridges[name] != nil {
		return nil, fmt.Errorf("%w: %s", ErrBridgeExists, name)
	}
	cfg.Meters = s.meters
	b := NewOFBridge(name, cfg)
	b.SetChanged(s.h.Changed)
	b.setPortsChanged(s.publishPorts)
	b.SetPacketOut(s.packetOut)
	b.Start(time.Second)
	s.bridges[name] = b
	return b, nil
}

// Bridge returns the named bridge or nil.
func (s *OFSwitch) Bridge(name string) *OFBridge {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bridges[name]
}

// DelBridge removes a bridge: its ports stop being switched and the
// revalidator deletes its datapath flows.
func (s *OFSwitch) DelBridge(name string) error {
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
func (s *OFSwitch) Close() {
	s.mu.Lock()
	brs := slices.Collect(maps.Values(s.bridges))
	s.bridges = map[string]*OFBridge{}
	s.mu.Unlock()
	for _, b := range brs {
		b.Close()
	}
	s.h.Close()
}

// publishPorts gives the handler a new map of datapath ports to bridge
// ports (after any port change in any bridge).
func (s *OFSwitch) publishPorts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	ports := upcall.Ports{}
	for _, b := range s.bridges {
		for _, p := range b.Ports() {
			ports[p.DPPort] = upcall.Binding{Bridge: b, Port: p}
		}
	}
	s.h.SetPorts(ports)
}

// packetOut translates a packet out's actions at version and executes
// them on its packet (ofproto_packet_out_start/finish): packet-ins and
// learned flows it causes go out as for an upcall.
func (s *OFSwitch) packetOut(b *OFBridge, po *PacketOut, version uint64) error {
	var f mf.Flow
	packet.Parse(po.Packet, &f.Key)
	if po.Flow != nil {
		f.Metadata, f.Regs = po.Flow.Metadata, po.Flow.Regs
		f.TunID, f.PktMark = po.Flow.TunID, po.Flow.PktMark
	}
	f.InPort = po.InPort
	dpIn := uint32(0)
	if p := b.Port(po.InPort); p != nil {
		dpIn = p.DPPort
	} else if p := b.Port(mf.PortLocal); p != nil {
		dpIn = p.DPPort
	}
	f.Key.InPort = dpIn
	t := s.xl.Get().(*xlate.Translator)
	defer s.xl.Put(t)
	in := xlate.Input{Bridge: b, Version: version, Flow: f, Packet: po.Packet, Actions: po.Actions,
		SideEffects: true, Recirc: s.h.Recirc()}
	res := t.Translate(&in)
	for i := range res.Cache.Learned {
		if err := b.Learn(&res.Cache.Learned[i]); err != nil {
			s.log.Debug("learn failed", "bridge", b.Name(), "err", err)
		}
	}
	for i := range res.PacketIns {
		pi := res.PacketIns[i]
		pi.Packet = slices.Clone(pi.Packet)
		b.SendPacketIn(&pi)
	}
	if len(res.Cache.Learned) > 0 {
		s.h.Changed()
	}
	xlate.PushStats(b, &res.Cache, xlate.Stats{Packets: 1, Bytes: uint64(len(po.Packet)), Used: time.Now()})
	if len(res.Actions) == 0 {
		return nil
	}
	return s.dp.Execute(slices.Clone(po.Packet), dpIn, res.Actions)
}
