package bridge

import (
	"reflect"

	"github.com/ovn-kubernetes/libovsdb/model"

	"gvs/schema/vswitchd"
)

// configChanged reports whether a row update may change what the
// reconciler applies: false when only columns the reconciler itself
// writes back changed (the status columns of Interface, Bridge, Datapath
// and Open_vSwitch). Its own write-back comes back from the server as
// such an update; a pass for it would only find nothing to do, and at
// 1,000 ports that pass costs as much as the one that made the change.
// Unknown tables and types always count as changed.
func configChanged(old, new model.Model) bool {
	switch o := old.(type) {
	case *vswitchd.Interface:
		n, ok := new.(*vswitchd.Interface)
		if !ok {
			return true
		}
		a, b := *o, *n
		for _, r := range []*vswitchd.Interface{&a, &b} {
			r.Ofport, r.Error, r.AdminState, r.LinkState, r.LinkSpeed, r.LinkResets = nil, nil, nil, nil, nil, nil
			r.MACInUse, r.MTU, r.Ifindex, r.Status, r.Statistics = nil, nil, nil, nil, nil
		}
		return !reflect.DeepEqual(a, b)
	case *vswitchd.OpenvSwitch:
		n, ok := new.(*vswitchd.OpenvSwitch)
		if !ok {
			return true
		}
		a, b := *o, *n
		for _, r := range []*vswitchd.OpenvSwitch{&a, &b} {
			r.CurCfg, r.OVSVersion, r.DbVersion, r.SystemType, r.SystemVersion = 0, nil, nil, nil, nil
			r.DatapathTypes, r.IfaceTypes = nil, nil
		}
		return !reflect.DeepEqual(a, b)
	case *vswitchd.Bridge:
		n, ok := new.(*vswitchd.Bridge)
		if !ok {
			return true
		}
		a, b := *o, *n
		a.DatapathID, b.DatapathID = nil, nil
		a.DatapathVersion, b.DatapathVersion = "", ""
		return !reflect.DeepEqual(a, b)
	case *vswitchd.Controller:
		n, ok := new.(*vswitchd.Controller)
		if !ok {
			return true
		}
		a, b := *o, *n
		for _, r := range []*vswitchd.Controller{&a, &b} {
			r.IsConnected, r.Role, r.Status = false, nil, nil
		}
		return !reflect.DeepEqual(a, b)
	case *vswitchd.Datapath:
		n, ok := new.(*vswitchd.Datapath)
		if !ok {
			return true
		}
		a, b := *o, *n
		a.Capabilities, b.Capabilities = nil, nil
		a.DatapathVersion, b.DatapathVersion = "", ""
		return !reflect.DeepEqual(a, b)
	}
	return true
}
