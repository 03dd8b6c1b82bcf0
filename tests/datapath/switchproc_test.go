package datapathtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"gvs/dpif"
	"gvs/netdev"
	"gvs/netdev/afpacket"
	"gvs/netdev/afxdp"
	"gvs/netdev/tap"
	"gvs/ofproto"
	"gvs/ofproto/mac"
)

// This file is the child side of the switch: the test binary in helper
// mode, running inside the switch namespace. switch_test.go is the
// parent side.

// specEnv carries the switchSpec, as JSON, to the child.
const specEnv = "GVSDP_SPEC"

// switchSpec describes the datapath to build: one NORMAL bridge over
// these ports, in this order.
type switchSpec struct {
	Ports []portSpec
	// PMDs: how many PMDs poll the ports (0: dpif's default).
	PMDs int `json:",omitempty"`
}

// portSpec is one port: a device in the switch namespace and its VLAN
// configuration on the bridge.
type portSpec struct {
	Name    string
	Type    string // "system", "afxdp" or "internal"
	XDPMode string // afxdp: options:xdp-mode
	// SharedUMEM: afxdp ports with it share one afxdp.UMEMGroup, as
	// bridge/dpadapter's do.
	SharedUMEM bool `json:",omitempty"`
	// RxMode and SocketBuffer: system ports' receive mode and
	// userspace-sock-buf-size ("" and 0: the backend's defaults).
	RxMode       string
	SocketBuffer int
	// MinRingSize: system ports' smallest receive ring (0: the
	// backend's default, 256 KiB), for tests that inject bursts of
	// hundreds of frames into a port that was idle.
	MinRingSize int `json:",omitempty"`
	MTU         int // internal: MTU to set once created (0: leave)
	Tag         uint16
	Trunks      []uint16
	VLANMode    string
}

// switchState is the child's answer to every command: the datapath's
// and every port's counters.
type switchState struct {
	Error  string `json:",omitempty"`
	Closed bool   `json:",omitempty"`
	Ports  []portState
	PMDs   []dpif.PMDStats
	DP     dpif.Stats
	MAC    mac.Stats
	// MACs are the learned addresses (fdb/show), as strings.
	MACs []string
}

// portState is one port as the datapath and its device report it.
type portState struct {
	No     uint32
	Name   string
	Type   string
	MTU    int
	Status map[string]string
	Stats  netdev.Stats
	Custom map[string]uint64 `json:",omitempty"` // afxdp CustomStats
}

// runSwitchHelper builds the datapath from $GVSDP_SPEC, prints its state
// once ready, then answers "stats" lines on in until "quit" or EOF, when
// it closes the datapath and prints the final state.
func runSwitchHelper(in io.Reader, out, errOut io.Writer) int {
	enc := json.NewEncoder(out)
	logger := slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var spec switchSpec
	if err := json.Unmarshal([]byte(os.Getenv(specEnv)), &spec); err != nil {
		_ = enc.Encode(switchState{Error: "bad " + specEnv + ": " + err.Error()})
		return 2
	}
	sw, err := buildSwitch(spec, logger)
	if err != nil {
		_ = enc.Encode(switchState{Error: err.Error()})
		return 1
	}
	_ = enc.Encode(sw.state())
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		if lines.Text() == "quit" {
			break
		}
		_ = enc.Encode(sw.state())
	}
	final := sw.state()
	final.Closed = true
	if err := sw.close(); err != nil {
		final.Error = "close: " + err.Error()
	}
	_ = enc.Encode(final)
	if final.Error != "" {
		return 1
	}
	return 0
}

// builtSwitch is the running datapath in the child.
type builtSwitch struct {
	dp    *dpif.Datapath
	of    *ofproto.Switch
	br    *ofproto.Bridge
	ports []portState // No, Name, Type filled at creation
	devs  []netdev.Device
	umem  *afxdp.UMEMGroup // the afxdp ports' shared UMEM, if any wants one
}

func buildSwitch(spec switchSpec, logger *slog.Logger) (_ *builtSwitch, err error) {
	dp, err := dpif.New(dpif.Config{Logger: logger.With("module", "dpif"), PMDs: spec.PMDs})
	if err != nil {
		return nil, fmt.Errorf("dpif.New: %w", err)
	}
	s := &builtSwitch{dp: dp, of: ofproto.New(dp, logger.With("module", "ofproto"))}
	defer func() {
		if err != nil {
			_ = s.close()
		}
	}()
	br, err := s.of.AddBridge("br0", ofproto.BridgeConfig{})
	if err != nil {
		return nil, err
	}
	br.SetFailMode(ofproto.FailStandalone) // the default flow: NORMAL
	s.br = br
	for _, p := range spec.Ports {
		if p.SharedUMEM && s.umem == nil {
			if s.umem, err = afxdp.NewUMEMGroup(afxdp.GroupConfig{Logger: logger}); err != nil {
				return nil, err
			}
		}
		dev, err := openDevice(p, s.umem, logger.With("module", "netdev", "device", p.Name))
		if err != nil {
			return nil, fmt.Errorf("open %s port %s: %w", p.Type, p.Name, err)
		}
		if p.MTU > 0 && dev.MTU() != p.MTU {
			if err := dev.SetMTU(p.MTU); err != nil {
				dev.Close()
				return nil, fmt.Errorf("%s: set MTU %d: %w", p.Name, p.MTU, err)
			}
		}
		no, err := dp.PortAdd(dev, dpif.AutoPortNo)
		if err != nil {
			dev.Close()
			return nil, fmt.Errorf("PortAdd %s: %w", p.Name, err)
		}
		cfg := mac.PortConfig{Tag: p.Tag, Trunks: p.Trunks, VLANMode: mac.VLANMode(p.VLANMode)}
		if _, errs := br.AddPorts([]ofproto.PortSpec{{Name: p.Name, DPPort: no, VLAN: cfg}}); errs[0] != nil {
			return nil, fmt.Errorf("bridge port %s: %w", p.Name, errs[0])
		}
		s.ports = append(s.ports, portState{No: no, Name: p.Name, Type: p.Type})
		s.devs = append(s.devs, dev)
	}
	return s, nil
}

// openDevice opens a port's device with the backend of its type, as
// bridge/dpadapter does, but with nothing from the database.
func openDevice(p portSpec, umem *afxdp.UMEMGroup, logger *slog.Logger) (netdev.Device, error) {
	switch p.Type {
	case "system":
		return afpacket.Open(afpacket.Config{Name: p.Name, RxMode: p.RxMode, SocketBuffer: p.SocketBuffer,
			MinRingSize: p.MinRingSize, Logger: logger})
	case "afxdp":
		cfg := afxdp.Config{Name: p.Name, XDPMode: afxdp.XDPMode(p.XDPMode), Logger: logger}
		if p.SharedUMEM {
			cfg.UMEM = umem
		}
		return afxdp.Open(cfg)
	case "internal", "tap":
		return tap.Open(tap.Config{Name: p.Name, Type: p.Type, Logger: logger})
	}
	return nil, errors.New("unknown port type")
}

func (s *builtSwitch) state() switchState {
	st := switchState{PMDs: s.dp.PMDStats(), DP: s.dp.Stats(), MAC: s.br.MACStats()}
	for _, m := range s.br.MACEntries() {
		st.MACs = append(st.MACs, m.MAC.String())
	}
	for i, p := range s.ports {
		dev := s.devs[i]
		p.MTU = dev.MTU()
		p.Status = dev.Status()
		p.Stats = dev.Stats()
		if x, ok := dev.(*afxdp.Device); ok {
			p.Custom = x.CustomStats()
		}
		st.Ports = append(st.Ports, p)
	}
	return st
}

// close stops the bridge's aging and closes the datapath, which closes
// every device (and so removes the taps it created).
func (s *builtSwitch) close() error {
	s.of.Close()
	done := make(chan error, 1)
	go func() { done <- s.dp.Close() }()
	select {
	case err := <-done:
		if s.umem != nil {
			s.umem.Close()
		}
		return err
	case <-time.After(10 * time.Second):
		return errors.New("datapath Close did not return within 10 s")
	}
}
