// Package ofctl is gvs's side-by-side OpenFlow acceptance suite: every test
// starts, each in its own temporary directory, Debian's ovsdb-server and
// ovs-vswitchd (--enable-dummy --disable-system --disable-system-route, as
// Open vSwitch's own tests/ofproto-macros.at OVS_VSWITCHD_START does) and
// gvs-vswitchd with its embedded database and the same flags, gives both
// the same bridge (br0 on the dummy datapath, datapath-id
// fedcba9876543210, hwaddr aa:55:aa:55:00:00, OpenFlow 1.0 to 1.5,
// fail-mode secure, dummy ports), runs the same ovs-vsctl, ovs-ofctl and
// ovs-appctl command lines against both and requires the same stdout,
// stderr and exit status after the normalisations normalize_test.go lists.
//
// The package holds only tests. TestMain builds gvs-vswitchd once. Both
// switches start in well under a second (no kernel devices: dummy ports
// only).
//
// A test that needs gvs to speak OpenFlow calls requireOpenFlow, which
// skips it only while gvs-vswitchd creates no <rundir>/br0.mgmt socket;
// once OpenFlow lands the tests run by themselves.
//
// Environment:
//
//	GVS_OFCTL_SELFCHECK=1  Debian's ovs-vswitchd on both sides: validates
//	                       the harness and its normalisations (a
//	                       difference is then a harness bug).
//	GVS_OFCTL_SHOW=1       with -v, log each compared output too.
//	GVS_OFCTL_TAGS=TAGS    build gvs-vswitchd with these build tags (a
//	                       feature still behind one, e.g. ofpconn).
package ofctl
