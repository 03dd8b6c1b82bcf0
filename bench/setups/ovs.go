package setups

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gvs/bench/topo"
)

// Paths of Debian's Open vSwitch.
const (
	ovsVswitchd   = "/usr/sbin/ovs-vswitchd"
	ovsdbServer   = "/usr/sbin/ovsdb-server"
	ovsdbTool     = "/usr/bin/ovsdb-tool"
	ovsVsctl      = "/usr/bin/ovs-vsctl"
	ovsAppctl     = "/usr/bin/ovs-appctl"
	vswitchSchema = "/usr/share/openvswitch/vswitch.ovsschema"
)

// bigSocketBuffers is what the "bigbuf" variants set the global socket
// buffer sysctls to while Open vSwitch opens its sockets.
const bigSocketBuffers = "33554432"

// OVSOptions picks an Open vSwitch configuration.
type OVSOptions struct {
	Name        string
	Description string
	TSO         bool // other_config:userspace-tso-enable=true
	AFXDP       bool // ports of type afxdp
	TxOff       bool // tx checksum offload off on the hosts' veths, as Open vSwitch's docs ask
	BigBuf      bool // 32 MiB socket buffers through the global sysctls
	OVN         bool // the OVN two-port pipeline (Env.OVN) instead of NORMAL
	// Flows is a flow table loaded instead of NORMAL on a bridge of the
	// client's and server's ports only (the conntrack part; see
	// flowsAddBridge).
	Flows string
}

// OVS is Debian's ovs-vswitchd with the netdev (userspace) datapath and
// its own ovsdb-server, both private to this setup.
type OVS struct {
	Env Env
	Opt OVSOptions

	switchProc
	db      *daemon
	restore func() error
}

func (o *OVS) Name() string        { return o.Opt.Name }
func (o *OVS) Kind() string        { return KindOVS }
func (o *OVS) Description() string { return o.Opt.Description }

func (o *OVS) Available() (bool, string) {
	for _, p := range []string{ovsVswitchd, ovsdbServer, ovsdbTool, ovsVsctl, vswitchSchema} {
		if _, err := os.Stat(p); err != nil {
			return false, p + " is missing (install openvswitch-switch)"
		}
	}
	return haveIP()
}

func (o *OVS) Start(ctx context.Context, t *topo.Topo) error {
	o.topo = t
	if err := t.LinkSwitched(ctx); err != nil {
		return err
	}
	if o.Opt.TxOff {
		if err := txOff(ctx, o.Env, t); err != nil {
			return err
		}
	}
	if err := o.startDaemons(ctx, t.Switch, t.Prefix+"o"); err != nil {
		return err
	}
	add := []string{"--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev"}
	for _, port := range t.SwitchPorts() {
		add = append(add, "--", "add-port", "br0", port)
		if o.Opt.AFXDP {
			add = append(add, "--", "set", "interface", port, "type=afxdp")
		}
	}
	senders := t.Senders
	if o.Opt.OVN {
		var err error
		if add, err = ovnAddBridge(t, "--timeout=20", o.Env.OVN, afxdpType(o.Opt.AFXDP)); err != nil {
			return err
		}
		senders = senders[:1]
	} else if o.Opt.Flows != "" {
		add, senders = flowsAddBridge(t, "--timeout=20", afxdpType(o.Opt.AFXDP)), senders[:1]
	}
	if _, err := o.vsctl(ctx, add...); err != nil {
		return fmt.Errorf("%w (log: %s)", err, tail(filepath.Join(o.dir, "ovs-vswitchd.log"), 3))
	}
	for _, port := range t.SwitchPorts() {
		if msg, _ := o.vsctl(ctx, "get", "interface", port, "error"); msg != "" && msg != "[]" {
			return Skip("Open vSwitch refused port %s: %s", port, msg)
		}
	}
	if o.Opt.OVN {
		if err := o.loadOVN(ctx, t, o.Env.OVN); err != nil {
			return fmt.Errorf("loading the OVN pipeline: %w (log: %s)", err, tail(filepath.Join(o.dir, "ovs-vswitchd.log"), 3))
		}
	}
	if o.Opt.Flows != "" {
		if err := o.loadFlows(ctx, o.Opt.Flows); err != nil {
			return fmt.Errorf("loading the flows: %w (log: %s)", err, tail(filepath.Join(o.dir, "ovs-vswitchd.log"), 3))
		}
	}
	if err := WaitForwardingFrom(ctx, o.Env, t, senders, o.Env.ForwardWait); err != nil {
		return fmt.Errorf("%w (log: %s)", err, tail(filepath.Join(o.dir, "ovs-vswitchd.log"), 3))
	}
	// The sysctls are global: keep them raised only while Open vSwitch
	// opens its sockets, so the hosts' own sockets keep the defaults.
	if o.restore != nil {
		return o.restore()
	}
	return nil
}

// startDaemons creates a fresh database in a private directory (named
// from dirPrefix), starts ovsdb-server on it in the root namespace and
// ovs-vswitchd in namespace ns, and returns once both listen.
func (o *OVS) startDaemons(ctx context.Context, ns, dirPrefix string) error {
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return err
	}
	o.dir = dir
	env := []string{"OVS_RUNDIR=" + dir, "OVS_DBDIR=" + dir, "OVS_LOGDIR=" + dir, "OVS_SYSCONFDIR=" + dir}
	if _, err := topo.Run(ctx, "", ovsdbTool, "create", filepath.Join(dir, "conf.db"), vswitchSchema); err != nil {
		return err
	}
	sock := filepath.Join(dir, "db.sock")
	o.db, err = startDaemon("", dir, "ovsdb-server", env, ovsdbServer, filepath.Join(dir, "conf.db"),
		"--remote=punix:"+sock, "--unixctl="+filepath.Join(dir, "ovsdb-server.ctl"),
		"--pidfile="+filepath.Join(dir, "ovsdb-server.pid"), "--log-file="+filepath.Join(dir, "ovsdb-server.log"))
	if err != nil {
		return err
	}
	if err := waitSocket(ctx, o.db, sock, 10*time.Second); err != nil {
		return err
	}
	init := []string{"--no-wait", "init"}
	if o.Opt.TSO {
		// Read once when ovs-vswitchd starts: set it before.
		init = append(init, "--", "set", "Open_vSwitch", ".", "other_config:userspace-tso-enable=true")
	}
	if _, err := o.vsctl(ctx, init...); err != nil {
		return err
	}
	if o.Opt.BigBuf {
		if o.restore, err = raiseSocketBuffers(bigSocketBuffers); err != nil {
			return err
		}
	}
	ctl := filepath.Join(dir, "ovs-vswitchd.ctl")
	o.vswitchd, err = startDaemon(ns, dir, "ovs-vswitchd", env, ovsVswitchd, "unix:"+sock,
		"--unixctl="+ctl, "--pidfile="+filepath.Join(dir, "ovs-vswitchd.pid"),
		"--log-file="+filepath.Join(dir, "ovs-vswitchd.log"))
	if err != nil {
		return err
	}
	return waitSocket(ctx, o.vswitchd, ctl, 10*time.Second)
}

// FlowSenders: with the OVN pipeline only the client has a logical port.
func (o *OVS) FlowSenders() int {
	if o.Opt.OVN || o.Opt.Flows != "" {
		return 1
	}
	return 0
}

func afxdpType(afxdp bool) string {
	if afxdp {
		return "afxdp"
	}
	return ""
}

func (o *OVS) Stop() error {
	o.vswitchd.stop()
	o.db.stop()
	o.vswitchd, o.db = nil, nil
	var err error
	if o.restore != nil {
		err = o.restore()
	}
	if o.topo != nil {
		if uerr := o.topo.Unlink(context.Background()); uerr != nil && err == nil {
			err = uerr
		}
	}
	if o.dir != "" {
		os.RemoveAll(o.dir)
		o.dir = ""
	}
	return err
}

// txOff turns tx checksum offload off on every end host's veth, what
// `ethtool -K DEV tx off` does.
func txOff(ctx context.Context, env Env, t *topo.Topo) error {
	for _, h := range t.HostDevs() {
		if _, err := topo.Run(ctx, h.NS, env.Self, "_txoff", h.Dev); err != nil {
			return err
		}
	}
	return nil
}
