package dpadapter

import (
	"crypto/rand"
	"fmt"
	"maps"
	"net"
	"slices"

	"gvs/bridge"
	"gvs/dpif"
	"gvs/metrics/source"
	"gvs/netdev"
	"gvs/ofproto"
)

// Patch ports (Interface type=patch, options:peer=NAME) are Open
// vSwitch's netdev-vport patch ports: no device and no datapath port,
// only an OpenFlow port of their bridge; the switch pairs each with its
// peer (ofproto/patch.go) and translation crosses from one bridge to the
// other. The adapter keeps them apart from the device ports.

// patchPort is one patch port.
type patchPort struct {
	spec   bridge.PortSpec
	ofport uint32
	mac    net.HardwareAddr
}

// patchConfigError checks a patch port's options as Open vSwitch's
// set_patch_config, with its messages (which it also writes to
// Interface.error).
func patchConfigError(spec bridge.PortSpec) error {
	peer, ok := spec.Options["peer"]
	switch {
	case !ok:
		return &bridge.InterfaceError{Msg: spec.Name + ": patch type requires valid 'peer' argument"}
	case len(spec.Options) > 1:
		return &bridge.InterfaceError{Msg: spec.Name + ": patch type takes only a 'peer' argument"}
	case peer == spec.Name:
		return &bridge.InterfaceError{Msg: spec.Name + ": patch peer must not be self"}
	}
	return nil
}

// randomMAC is a random unicast, locally administered address, as Open
// vSwitch gives each vport (eth_addr_random).
func randomMAC() net.HardwareAddr {
	mac := make(net.HardwareAddr, 6)
	rand.Read(mac)
	mac[0] = mac[0]&^1 | 2
	return mac
}

// addPatchesLocked adds the patch ports of specs (those at idx), setting
// errs. Caller holds d.mu.
func (d *Datapath) addPatchesLocked(specs []bridge.PortSpec, idx []int, errs []error) {
	if d.patches == nil {
		d.patches = map[string]*patchPort{}
	}
	byBridge := map[string][]int{}
	for _, i := range idx {
		spec := specs[i]
		switch {
		case d.bridges[spec.Bridge] == nil:
			errs[i] = fmt.Errorf("%w: %s", ofproto.ErrNoBridge, spec.Bridge)
		case d.ports[spec.Name] != nil || d.patches[spec.Name] != nil:
			errs[i] = fmt.Errorf("%s: %w", spec.Name, dpif.ErrDevInUse)
		default:
			errs[i] = patchConfigError(spec)
		}
		if errs[i] == nil {
			byBridge[spec.Bridge] = append(byBridge[spec.Bridge], i)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byBridge)) {
		at := byBridge[name]
		ps := make([]ofproto.PortSpec, len(at))
		pps := make([]*patchPort, len(at))
		for j, i := range at {
			spec := specs[i]
			pp := &patchPort{spec: spec, mac: randomMAC()}
			var hw [6]byte
			copy(hw[:], pp.mac)
			ps[j] = ofproto.PortSpec{Name: spec.Name, Request: spec.OFPortRequest, Previous: spec.PreviousOFPort,
				VLAN: macPortConfig(spec.VLAN), MAC: hw, Patch: true, PatchPeer: spec.Options["peer"]}
			pps[j] = pp
		}
		nums, perrs := d.bridges[name].AddPorts(ps)
		for j, i := range at {
			if perrs[j] != nil {
				errs[i] = perrs[j]
				continue
			}
			pps[j].ofport = nums[j]
			d.patches[specs[i].Name] = pps[j]
		}
	}
}

// delPatchLocked removes a patch port; false if name is none.
func (d *Datapath) delPatchLocked(name string) (bool, error) {
	pp := d.patches[name]
	if pp == nil {
		return false, nil
	}
	delete(d.patches, name)
	if br := d.bridges[pp.spec.Bridge]; br != nil {
		return true, br.DelPort(name)
	}
	return true, nil
}

// setPatchLocked is SetPort for a patch port: VLAN and ofport_request.
func (d *Datapath) setPatchLocked(pp *patchPort, spec bridge.PortSpec) error {
	br := d.bridges[spec.Bridge]
	if br == nil {
		return fmt.Errorf("%w: %s", ofproto.ErrNoBridge, spec.Bridge)
	}
	if !slices.Equal(pp.spec.VLAN.Trunks, spec.VLAN.Trunks) || pp.spec.VLAN.Tag != spec.VLAN.Tag || pp.spec.VLAN.Mode != spec.VLAN.Mode {
		if err := br.SetPortVLAN(spec.Name, macPortConfig(spec.VLAN)); err != nil {
			return err
		}
		d.flowsStale = true
	}
	if spec.OFPortRequest != pp.spec.OFPortRequest {
		n, err := br.SetPortRequest(spec.Name, spec.OFPortRequest)
		if err != nil {
			return err
		}
		pp.ofport = n
	}
	spec.PreviousOFPort = pp.spec.PreviousOFPort
	pp.spec = spec
	return nil
}

// patchState is PortState for a patch port: always up, as Open vSwitch's
// vports, with its pairing error.
func (d *Datapath) patchState(pp *patchPort) bridge.PortState {
	st := bridge.PortState{Link: netdev.LinkState{AdminUp: true, CarrierUp: true}, MAC: slices.Clone(pp.mac), OFPort: int(pp.ofport)}
	if br := d.bridges[pp.spec.Bridge]; br != nil {
		st.Error = br.PatchError(pp.spec.Name)
	}
	return st
}

// patchStats is PortStats for a patch port: what crossed it.
func (d *Datapath) patchStats(pp *patchPort) bridge.PortStats {
	ps := bridge.PortStats{PacketsOnly: true}
	if br := d.bridges[pp.spec.Bridge]; br != nil {
		if c, ok := br.PatchStats(pp.spec.Name); ok {
			ps.Stats = netdev.Stats{RxPackets: c.RxPackets, RxBytes: c.RxBytes, TxPackets: c.TxPackets, TxBytes: c.TxBytes}
		}
	}
	return ps
}

// patchViewPorts are the patch ports as dpif/show lists them: "none" for
// the datapath port, the peer as their configuration. Caller holds d.mu.
func (d *Datapath) patchViewPorts(bridgeName string) []source.Port {
	var out []source.Port
	for _, pp := range d.patches {
		if pp.spec.Bridge == bridgeName {
			out = append(out, source.Port{Port: pp.spec.Port, Interface: pp.spec.Name, Type: "patch",
				OFPort: int(pp.ofport), Config: map[string]string{"peer": pp.spec.Options["peer"]}})
		}
	}
	return out
}
