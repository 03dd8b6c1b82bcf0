package dpadapter

import (
	"maps"
	"slices"
	"strings"

	"gvs/dpif"
	"gvs/metrics/source"
	"gvs/netdev"
)

// View is the switch as package metrics and package appctl read it
// (source.Switch): the adapter's datapath and bridges, with the OpenFlow
// port numbers their bridges gave the ports (OFPorts, the numbers the
// reconciler wrote, only fills in for a port without one).
type View struct {
	DP      *Datapath
	OFPorts func(bridge string) map[string]int
}

var (
	_ source.Switch         = View{}
	_ source.RxRingBudgeter = View{}
)

// RxRingBudget is the budget the system ports' receive rings reserve from
// (other_config:gvs-rx-ring-budget).
func (v View) RxRingBudget() source.RxRingBudget {
	return source.RxRingBudget{Limit: v.DP.rings.Limit(), Reserved: v.DP.rings.Used()}
}

// Datapath returns the running datapath, nil before the first bridge.
func (v View) Datapath() *dpif.Datapath {
	v.DP.mu.Lock()
	defer v.DP.mu.Unlock()
	return v.DP.dp
}

// Bridges returns the bridges in the datapath, sorted by name, with their
// ports sorted by Port name.
func (v View) Bridges() []source.Bridge {
	d := v.DP
	d.mu.Lock()
	out := make([]source.Bridge, 0, len(d.bridges))
	for _, name := range slices.Sorted(maps.Keys(d.bridges)) {
		out = append(out, source.Bridge{Name: name, OpenFlow: d.bridges[name], Created: d.created[name],
			Dummy: d.dpTypes[name] == "dummy"})
	}
	for _, p := range d.ports {
		typ := p.spec.Type
		if p.virtual {
			typ = p.dev.Type() // an internal port of a dummy bridge is dummy-internal
		}
		for i := range out {
			if out[i].Name == p.spec.Bridge {
				out[i].Ports = append(out[i].Ports, source.Port{
					Port: p.spec.Port, Interface: p.spec.Name, Type: typ,
					DPPort: p.no, InDatapath: true, SocketBufferRequest: d.sockBuf, OFPort: int(p.ofport),
					Config: showConfig(p.dev),
				})
			}
		}
	}
	for i := range out {
		out[i].Ports = append(out[i].Ports, d.patchViewPorts(out[i].Name)...)
	}
	d.mu.Unlock()
	for i := range out {
		var ofports map[string]int
		if v.OFPorts != nil {
			ofports = v.OFPorts(out[i].Name)
		}
		for j := range out[i].Ports {
			p := &out[i].Ports[j]
			if p.OFPort == 0 {
				p.OFPort = ofports[p.Interface]
			}
			if p.Port == "" {
				p.Port = p.Interface
			}
		}
		slices.SortFunc(out[i].Ports, func(a, b source.Port) int { return strings.Compare(a.Port, b.Port) })
	}
	return out
}

// showConfig is the device's configuration as dpif/show prints it, for
// devices that have one to show (dummy ports' streams).
func showConfig(dev netdev.Device) map[string]string {
	if c, ok := dev.(interface{ ShowConfig() map[string]string }); ok {
		return c.ShowConfig()
	}
	return nil
}
