package ofproto

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"

	"gvs/dpif"
)

// Switch is the translation layer over one datapath: it owns the
// datapath's upcall handler and hands each miss to the bridge that owns
// the packet's input port. Bridges partition the datapath's ports.
type Switch struct {
	dp  *dpif.Datapath
	log *slog.Logger

	mu        sync.Mutex // bridges, nextID; held before any Bridge.mu
	bridges   map[string]*Bridge
	nextID    uint64
	portOwner atomic.Pointer[map[uint32]*Bridge] // copy on write
}

// Errors of bridge and port configuration.
var (
	ErrBridgeExists = errors.New("ofproto: bridge exists")
	ErrNoBridge     = errors.New("ofproto: no such bridge")
	ErrPortInUse    = errors.New("ofproto: port belongs to a bridge")
	ErrNoPort       = errors.New("ofproto: no such port in bridge")
)

// New creates the translation layer and installs it as dp's upcall
// handler.
func New(dp *dpif.Datapath, logger *slog.Logger) *Switch {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	sw := &Switch{dp: dp, log: logger, bridges: map[string]*Bridge{}}
	sw.portOwner.Store(&map[uint32]*Bridge{})
	dp.SetUpcallHandler(sw)
	return sw
}

// Upcall implements dpif.UpcallHandler: dispatch by input port. A packet
// from a port no bridge owns is dropped without installing a flow.
func (sw *Switch) Upcall(u *dpif.Upcall) dpif.UpcallResult {
	br := (*sw.portOwner.Load())[u.Key.InPort]
	if br == nil {
		return dpif.UpcallDrop
	}
	return br.upcall(u)
}

// AddBridge creates a bridge with no ports and starts its MAC aging.
func (sw *Switch) AddBridge(name string, cfg BridgeConfig) (*Bridge, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.bridges[name] != nil {
		return nil, fmt.Errorf("%w: %s", ErrBridgeExists, name)
	}
	sw.nextID++
	br := newBridge(sw, name, sw.nextID, cfg)
	sw.bridges[name] = br
	return br, nil
}

// Bridge returns the named bridge or nil.
func (sw *Switch) Bridge(name string) *Bridge {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.bridges[name]
}

// DelBridge removes a bridge: its ports stop being switched (their misses
// are dropped) and its flows are deleted. Datapath ports stay; the caller
// deletes them.
func (sw *Switch) DelBridge(name string) error {
	sw.mu.Lock()
	br := sw.bridges[name]
	if br == nil {
		sw.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNoBridge, name)
	}
	delete(sw.bridges, name)
	sw.setOwners(func(m map[uint32]*Bridge) {
		for no, b := range m {
			if b == br {
				delete(m, no)
			}
		}
	})
	sw.mu.Unlock()
	br.close()
	return nil
}

// Close stops every bridge's aging goroutine. The datapath stays.
func (sw *Switch) Close() {
	sw.mu.Lock()
	brs := sw.bridges
	sw.bridges = map[string]*Bridge{}
	sw.mu.Unlock()
	for _, br := range brs {
		br.close()
	}
}

// setOwners publishes a modified copy of the port owner map. Caller holds
// sw.mu.
func (sw *Switch) setOwners(edit func(map[uint32]*Bridge)) {
	m := maps.Clone(*sw.portOwner.Load())
	edit(m)
	sw.portOwner.Store(&m)
}

// claimPort makes br the owner of port no.
func (sw *Switch) claimPort(br *Bridge, no uint32) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if owner := (*sw.portOwner.Load())[no]; owner != nil && owner != br {
		return fmt.Errorf("%w: port %d is in bridge %s", ErrPortInUse, no, owner.name)
	}
	sw.setOwners(func(m map[uint32]*Bridge) { m[no] = br })
	return nil
}

func (sw *Switch) releasePort(br *Bridge, no uint32) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if (*sw.portOwner.Load())[no] == br {
		sw.setOwners(func(m map[uint32]*Bridge) { delete(m, no) })
	}
}
