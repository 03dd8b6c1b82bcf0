// Package bridge will be the reconciler between the configuration database
// and the datapath: it will follow the Open_vSwitch database (bridges,
// ports, interfaces) through libovsdb's client and the models in
// gvs/schema/vswitchd, turn the whole desired state into datapath
// operations, and write results back (cur_cfg, ofport, status, error).
//
// It is a placeholder: nothing lives here yet. It arrives with the issue
// that adds bridges and ports on top of the OVSDB server of issue 2.
package bridge
