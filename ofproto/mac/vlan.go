package mac

import (
	"fmt"
	"slices"
)

// VLANMode is a Port's vlan_mode, as in Open vSwitch's Port table.
type VLANMode string

const (
	// VLANModeDefault: access if Tag is set, else trunk.
	VLANModeDefault VLANMode = ""
	// VLANModeAccess: the port carries VLAN Tag only, untagged.
	VLANModeAccess VLANMode = "access"
	// VLANModeTrunk: the port carries the Trunks VLANs (all if empty),
	// tagged; untagged frames are VLAN 0.
	VLANModeTrunk VLANMode = "trunk"
	// VLANModeNativeTagged: untagged frames are VLAN Tag; VLAN Tag goes
	// out tagged.
	VLANModeNativeTagged VLANMode = "native-tagged"
	// VLANModeNativeUntagged: untagged frames are VLAN Tag; VLAN Tag goes
	// out untagged.
	VLANModeNativeUntagged VLANMode = "native-untagged"
)

// PortConfig is a bridge port's VLAN configuration (Port columns tag,
// trunks and vlan_mode). Tag 0 means no tag, as an empty tag column.
type PortConfig struct {
	Tag      uint16
	Trunks   []uint16
	VLANMode VLANMode
}

// vlanSet is a 4096-bit set; all means "every VLAN" (empty trunks).
type vlanSet struct {
	all  bool
	bits [4096 / 64]uint64
}

func (s *vlanSet) add(v uint16)      { s.bits[v/64] |= 1 << (v % 64) }
func (s *vlanSet) has(v uint16) bool { return s.all || s.bits[v/64]&(1<<(v%64)) != 0 }

// VLANPort is a port's compiled VLAN behaviour for NORMAL; immutable. A
// nil *VLANPort is a trunk of every VLAN (no tag, trunks or vlan_mode).
type VLANPort struct {
	cfg    PortConfig
	mode   VLANMode // resolved: never VLANModeDefault
	tag    uint16
	trunks vlanSet
}

// NewVLANPort compiles cfg; it fails on a tag or trunk above 4095 or an
// unknown vlan_mode.
func NewVLANPort(cfg PortConfig) (*VLANPort, error) {
	if cfg.Tag > 4095 {
		return nil, fmt.Errorf("mac: tag %d out of range", cfg.Tag)
	}
	p := &VLANPort{cfg: cfg, mode: cfg.VLANMode, tag: cfg.Tag}
	p.cfg.Trunks = slices.Clone(cfg.Trunks)
	if p.mode == VLANModeDefault {
		p.mode = VLANModeTrunk
		if cfg.Tag != 0 {
			p.mode = VLANModeAccess
		}
	}
	switch p.mode {
	case VLANModeAccess, VLANModeTrunk, VLANModeNativeTagged, VLANModeNativeUntagged:
	default:
		return nil, fmt.Errorf("mac: unknown vlan_mode %q", cfg.VLANMode)
	}
	p.trunks.all = len(cfg.Trunks) == 0
	for _, v := range cfg.Trunks {
		if v > 4095 {
			return nil, fmt.Errorf("mac: trunk %d out of range", v)
		}
		p.trunks.add(v)
	}
	if (p.mode == VLANModeNativeTagged || p.mode == VLANModeNativeUntagged) && !p.trunks.all {
		p.trunks.add(p.tag) // a native port always carries its native VLAN
	}
	return p, nil
}

// InputVLAN maps the VID a frame arrived with (0: untagged or priority
// tagged) to the VLAN it belongs to, or false if the port drops it.
func (p *VLANPort) InputVLAN(vid uint16) (uint16, bool) {
	if p == nil {
		return vid, true
	}
	switch p.mode {
	case VLANModeAccess:
		return p.tag, vid == 0
	case VLANModeNativeTagged, VLANModeNativeUntagged:
		if vid == 0 {
			return p.tag, true
		}
	}
	return vid, p.trunks.has(vid)
}

// Includes reports whether the port carries vlan.
func (p *VLANPort) Includes(vlan uint16) bool {
	if p == nil {
		return true
	}
	if p.mode == VLANModeAccess {
		return vlan == p.tag
	}
	return p.trunks.has(vlan)
}

// OutputTCI is the tag a frame of vlan (with priority pcp) leaves the
// port with; 0 means untagged.
func (p *VLANPort) OutputTCI(vlan uint16, pcp uint8) uint16 {
	if p == nil {
		return vlan | uint16(pcp)<<13
	}
	switch p.mode {
	case VLANModeAccess:
		return 0
	case VLANModeNativeUntagged:
		if vlan == p.tag {
			return 0
		}
	}
	return vlan | uint16(pcp)<<13
}

// Config returns the configuration p was compiled from.
func (p *VLANPort) Config() PortConfig {
	c := p.cfg
	c.Trunks = slices.Clone(c.Trunks)
	return c
}
