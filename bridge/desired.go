package bridge

import (
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"

	"gvs/schema/vswitchd"
)

// desired is the whole configuration read from the cache in one pass.
type desired struct {
	ovs     *vswitchd.OpenvSwitch // nil until `ovs-vsctl init`
	global  globalConfig
	bridges []*desiredBridge // sorted by name
	// byName indexes every interface that belongs to a bridge.
	byName map[string]*desiredIface

	allBridges   map[string]*vswitchd.Bridge
	allIfaces    map[string]*vswitchd.Interface // by UUID, bridged or not
	datapathRows map[string]*vswitchd.Datapath
	mirrors      []vswitchd.Mirror
	qos          []vswitchd.QoS
	// conntrack is the zones' timeout policies (Datapath.ct_zones).
	conntrack ConntrackConfig
	warnings  []string
}

type desiredBridge struct {
	row      *vswitchd.Bridge
	settings bridgeSettings
	openflow openflowSettings
	ifaces   []*desiredIface
}

type desiredIface struct {
	row  *vswitchd.Interface
	port *vswitchd.Port
	spec PortSpec
	// problem is a configuration error found before any datapath call
	// (an interface in two bridges, a bond): it becomes Interface.error.
	problem string
}

// readDesired lists the monitored tables. The Open_vSwitch row is read
// first, so the next_cfg seen is never newer than the rest of the state;
// when an update reached the cache while the tables were listed (the
// Open_vSwitch row changed meanwhile), they are listed again, so that one
// pass sees a whole ovs-vsctl transaction, with its next_cfg, and writes
// it back with cur_cfg in one transaction instead of two.
func readDesired(c client.Client, minStats time.Duration) (*desired, error) {
	const attempts = 3
	for i := 1; ; i++ {
		d, err := readDesiredOnce(c, minStats)
		if err != nil || i == attempts {
			return d, err
		}
		ovsRows, err := listRows[vswitchd.OpenvSwitch](c, "Open_vSwitch")
		if err != nil {
			return nil, err
		}
		if (d.ovs == nil) == (len(ovsRows) == 0) && (d.ovs == nil || d.ovs.NextCfg == ovsRows[0].NextCfg) {
			return d, nil
		}
	}
}

func readDesiredOnce(c client.Client, minStats time.Duration) (*desired, error) {
	ovsRows, err := listRows[vswitchd.OpenvSwitch](c, "Open_vSwitch")
	if err != nil {
		return nil, err
	}
	d := &desired{
		byName:       map[string]*desiredIface{},
		allBridges:   map[string]*vswitchd.Bridge{},
		allIfaces:    map[string]*vswitchd.Interface{},
		datapathRows: map[string]*vswitchd.Datapath{},
	}
	bridges, err := listRows[vswitchd.Bridge](c, "Bridge")
	if err != nil {
		return nil, err
	}
	ports, err := listRows[vswitchd.Port](c, "Port")
	if err != nil {
		return nil, err
	}
	ifaces, err := listRows[vswitchd.Interface](c, "Interface")
	if err != nil {
		return nil, err
	}
	dps, err := listRows[vswitchd.Datapath](c, "Datapath")
	if err != nil {
		return nil, err
	}
	if d.mirrors, err = listRows[vswitchd.Mirror](c, "Mirror"); err != nil {
		return nil, err
	}
	if d.qos, err = listRows[vswitchd.QoS](c, "QoS"); err != nil {
		return nil, err
	}
	ctZoneRows, err := listRows[vswitchd.CTZone](c, "CT_Zone")
	if err != nil {
		return nil, err
	}
	ctPolicyRows, err := listRows[vswitchd.CTTimeoutPolicy](c, "CT_Timeout_Policy")
	if err != nil {
		return nil, err
	}
	ctrlRows, err := listRows[vswitchd.Controller](c, "Controller")
	if err != nil {
		return nil, err
	}
	ctrls := make(map[string]*vswitchd.Controller, len(ctrlRows))
	for i := range ctrlRows {
		ctrls[ctrlRows[i].UUID] = &ctrlRows[i]
	}
	if len(ovsRows) > 0 {
		d.ovs = &ovsRows[0]
	}
	var oc map[string]string
	if d.ovs != nil {
		oc = d.ovs.OtherConfig
	}
	d.global = parseGlobalConfig(oc, minStats)
	portsByUUID := map[string]*vswitchd.Port{}
	for i := range ports {
		portsByUUID[ports[i].UUID] = &ports[i]
	}
	for i := range ifaces {
		d.allIfaces[ifaces[i].UUID] = &ifaces[i]
	}
	for i := range dps {
		d.datapathRows[dps[i].UUID] = &dps[i]
	}
	for i := range bridges {
		d.allBridges[bridges[i].UUID] = &bridges[i]
	}
	ctZones := make(map[string]*vswitchd.CTZone, len(ctZoneRows))
	for i := range ctZoneRows {
		ctZones[ctZoneRows[i].UUID] = &ctZoneRows[i]
	}
	ctPolicies := make(map[string]*vswitchd.CTTimeoutPolicy, len(ctPolicyRows))
	for i := range ctPolicyRows {
		ctPolicies[ctPolicyRows[i].UUID] = &ctPolicyRows[i]
	}
	var ctWarnings []string
	d.conntrack, ctWarnings = conntrackConfig(d.ovs, d.datapathRows, ctZones, ctPolicies)
	d.warnings = append(d.warnings, ctWarnings...)
	if d.ovs == nil {
		return d, nil
	}
	// Only bridges reachable from the Open_vSwitch row exist for the
	// switch, as in Open vSwitch.
	for _, id := range d.ovs.Bridges {
		br := d.allBridges[id]
		if br == nil {
			continue // not in the cache yet: the next pass sees it
		}
		db := &desiredBridge{row: br, settings: parseBridgeConfig(br)}
		d.warnings = append(d.warnings, db.settings.warnings...)
		db.openflow = parseOpenFlow(br, ctrls, &d.warnings)
		switch br.DatapathType {
		case "", "system", "netdev":
			// All of them are gvs's userspace datapath.
		case "dummy":
			// gvs-vswitchd --enable-dummy's; the datapath refuses the
			// bridge without it (BridgeConfig.DatapathType).
		default:
			d.warnings = append(d.warnings, fmt.Sprintf("bridge %s: datapath_type %q is not supported; using gvs's userspace datapath", br.Name, br.DatapathType))
		}
		for _, pid := range br.Ports {
			p := portsByUUID[pid]
			if p == nil {
				continue
			}
			bond := len(p.Interfaces) > 1
			for _, iid := range p.Interfaces {
				row := d.allIfaces[iid]
				if row == nil {
					continue
				}
				di := &desiredIface{row: row, port: p, spec: PortSpec{
					Bridge:        br.Name,
					Port:          p.Name,
					Name:          row.Name,
					Type:          ifaceType(row.Type),
					Options:       row.Options,
					MTURequest:    derefInt(row.MTURequest),
					OFPortRequest: derefInt(row.OfportRequest),
					VLAN:          vlanConfig(p),
				}}
				if di.spec.Type == "internal" {
					di.spec.MAC = internalMAC(row, br, db.settings.hwaddr, &d.warnings)
				}
				switch {
				case bond:
					di.problem = fmt.Sprintf("port %s: bonds are not supported by gvs", p.Name)
				case !supportedVLANMode(di.spec.VLAN.Mode):
					di.problem = fmt.Sprintf("port %s: vlan_mode %s is not supported by gvs", p.Name, di.spec.VLAN.Mode)
				}
				if prev, dup := d.byName[row.Name]; dup {
					msg := fmt.Sprintf("interface %s is configured in bridge %s and bridge %s", row.Name, prev.spec.Bridge, br.Name)
					d.warnings = append(d.warnings, msg)
					di.problem = msg
				} else {
					d.byName[row.Name] = di
				}
				db.ifaces = append(db.ifaces, di)
			}
		}
		d.bridges = append(d.bridges, db)
	}
	slices.SortFunc(d.bridges, func(a, b *desiredBridge) int { return cmpString(a.row.Name, b.row.Name) })
	return d, nil
}

// listRows copies a table's rows out of the client's cache without
// cloning their maps and slices (libovsdb's List clones every row through
// JSON, which at 1,000 ports was most of a pass's time). The maps and
// slices are shared with the cache, which replaces rather than changes
// them: the reconciler only reads them.
func listRows[T any](c client.Client, table string) ([]T, error) {
	tc := c.Cache()
	if tc == nil {
		// The client was closed (the connection dropped) under the pass.
		return nil, fmt.Errorf("listing %s: not connected", table)
	}
	rc := tc.Table(table)
	if rc == nil {
		return nil, fmt.Errorf("listing %s: table not in the cache", table)
	}
	rows := rc.RowsShallow()
	out := make([]T, 0, len(rows))
	for _, m := range rows {
		row, ok := m.(*T)
		if !ok {
			return nil, fmt.Errorf("listing %s: row of type %T", table, m)
		}
		out = append(out, *row)
	}
	return out, nil
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

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// internalMAC is the address an internal port asks for: the bridge's
// hwaddr for the bridge's own port, else Interface.mac; nil for the
// device's own.
func internalMAC(row *vswitchd.Interface, br *vswitchd.Bridge, hwaddr net.HardwareAddr, warnings *[]string) net.HardwareAddr {
	if row.Name == br.Name && hwaddr != nil {
		return hwaddr
	}
	if row.MAC == nil {
		return nil
	}
	mac, err := net.ParseMAC(*row.MAC)
	if err != nil || len(mac) != 6 || mac[0]&1 != 0 {
		*warnings = append(*warnings, fmt.Sprintf("interface %s: mac %q is not a unicast Ethernet address; ignored", row.Name, *row.MAC))
		return nil
	}
	return mac
}

// supportedVLANMode: the vlan_mode values NORMAL implements (not
// dot1q-tunnel).
func supportedVLANMode(m string) bool {
	switch m {
	case "", "access", "trunk", "native-tagged", "native-untagged":
		return true
	}
	return false
}
