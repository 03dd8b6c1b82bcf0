package setups

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gvs/bench/topo"
)

// gvsConfigWait bounds how long ovs-vsctl waits for gvs-vswitchd to apply
// a configuration (cur_cfg catching up with next_cfg).
const gvsConfigWait = 5

// sockBufSize is what the sockbuf variant sets
// other_config:userspace-sock-buf-size to.
const sockBufSize = "8388608"

// GVSOptions picks a gvs configuration.
type GVSOptions struct {
	Name        string
	Description string
	SockBuf     bool // other_config:userspace-sock-buf-size
	AFXDP       bool // ports of type afxdp
	OVN         bool // the OVN two-port pipeline (Env.OVN) instead of NORMAL

	// Flows is a flow table instead of NORMAL (OVSOptions.Flows).
	Flows string
}

// GVS is bin/gvs-vswitchd, configured with Debian's ovs-vsctl against its
// socket exactly as a user would; offloads stay at their defaults.
type GVS struct {
	Env Env
	Opt GVSOptions

	switchProc
}

func (g *GVS) Name() string        { return g.Opt.Name }
func (g *GVS) Kind() string        { return KindGVS }
func (g *GVS) Description() string { return g.Opt.Description }

func (g *GVS) binary() string { return filepath.Join(g.Env.BinDir, "gvs-vswitchd") }

func (g *GVS) Available() (bool, string) {
	if _, err := os.Stat(g.binary()); err != nil {
		return false, g.binary() + " is missing (make build)"
	}
	if _, err := os.Stat(ovsVsctl); err != nil {
		return false, ovsVsctl + " is missing (install openvswitch-common)"
	}
	return haveIP()
}

func (g *GVS) Start(ctx context.Context, t *topo.Topo) error {
	g.topo = t
	if err := t.LinkSwitched(ctx); err != nil {
		return err
	}
	if err := g.startSwitch(ctx, t.Switch, t.Prefix+"g"); err != nil {
		return err
	}
	add := []string{fmt.Sprintf("--timeout=%d", gvsConfigWait), "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev"}
	for _, port := range t.SwitchPorts() {
		add = append(add, "--", "add-port", "br0", port)
		if g.Opt.AFXDP {
			add = append(add, "--", "set", "interface", port, "type=afxdp")
		}
	}
	senders := t.Senders
	if g.Opt.OVN {
		var err error
		if add, err = ovnAddBridge(t, fmt.Sprintf("--timeout=%d", gvsConfigWait), g.Env.OVN, afxdpType(g.Opt.AFXDP)); err != nil {
			return err
		}
		senders = senders[:1]
	} else if g.Opt.Flows != "" {
		add = flowsAddBridge(t, fmt.Sprintf("--timeout=%d", gvsConfigWait), afxdpType(g.Opt.AFXDP))
		senders = senders[:1]
	}
	if _, err := g.vsctl(ctx, add...); err != nil {
		if !g.vswitchd.running() {
			return fmt.Errorf("gvs-vswitchd exited: %s", tail(filepath.Join(g.dir, "gvs-vswitchd.out"), 3))
		}
		if strings.Contains(err.Error(), "alarm clock") {
			return Skip("ovs-vsctl add-br/add-port timed out after %d s waiting for gvs-vswitchd to apply the configuration (no datapath yet?)", gvsConfigWait)
		}
		return Skip("ovs-vsctl add-br/add-port failed: %s", lastPart(err.Error()))
	}
	for _, port := range t.SwitchPorts() {
		if msg, _ := g.vsctl(ctx, "get", "interface", port, "error"); msg != "" && msg != "[]" {
			return Skip("gvs refused port %s: %s", port, msg)
		}
	}
	if g.Opt.OVN {
		if err := g.loadOVN(ctx, t, g.Env.OVN); err != nil {
			if errors.Is(err, errNoOpenFlow) {
				return Skip("gvs-vswitchd serves no OpenFlow on br0 yet (%v)", err)
			}
			return Skip("gvs-vswitchd cannot load the OVN pipeline yet: %s", lastPart(err.Error()))
		}
	}
	if g.Opt.Flows != "" {
		if err := g.loadFlows(ctx, g.Opt.Flows); err != nil {
			if errors.Is(err, errNoOpenFlow) {
				return Skip("gvs-vswitchd serves no OpenFlow on br0 yet (%v)", err)
			}
			return Skip("gvs-vswitchd does not take the flows yet: %s", lastPart(err.Error()))
		}
	}
	if err := WaitForwardingFrom(ctx, g.Env, t, senders, g.Env.ForwardWait); err != nil {
		return Skip("gvs-vswitchd does not forward yet: %v", err)
	}
	return nil
}

// startSwitch starts gvs-vswitchd in namespace ns with its state in a
// private directory (named from dirPrefix) and initialises its database.
func (g *GVS) startSwitch(ctx context.Context, ns, dirPrefix string) error {
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return err
	}
	g.dir = dir
	env := []string{"OVS_RUNDIR=" + dir, "OVS_DBDIR=" + dir, "OVS_LOGDIR=" + dir}
	ctl := filepath.Join(dir, "ovs-vswitchd.ctl")
	// No database operand: gvs-vswitchd then hosts the database itself on
	// $OVS_RUNDIR/db.sock, the whole switch in one process.
	g.vswitchd, err = startDaemon(ns, dir, "gvs-vswitchd", env, g.binary(),
		"--unixctl="+ctl,
		"--pidfile="+filepath.Join(dir, "ovs-vswitchd.pid"), "--log-file="+filepath.Join(dir, "ovs-vswitchd.log"))
	if err != nil {
		return err
	}
	if err := waitSocket(ctx, g.vswitchd, filepath.Join(dir, "db.sock"), 10*time.Second); err != nil {
		return err
	}
	init := []string{"--no-wait", "init"}
	if g.Opt.SockBuf {
		init = append(init, "--", "set", "Open_vSwitch", ".", "other_config:userspace-sock-buf-size="+sockBufSize)
	}
	if _, err := g.vsctl(ctx, init...); err != nil {
		return err
	}
	return nil
}

// FlowSenders: with the OVN pipeline only the client has a logical port.
func (g *GVS) FlowSenders() int {
	if g.Opt.OVN || g.Opt.Flows != "" {
		return 1
	}
	return 0
}

func (g *GVS) Stop() error {
	g.vswitchd.stop()
	g.vswitchd = nil
	var err error
	if g.topo != nil {
		err = g.topo.Unlink(context.Background())
	}
	if g.dir != "" {
		os.RemoveAll(g.dir)
		g.dir = ""
	}
	return err
}

// lastPart drops the command line that topo.Run puts in front of a
// tool's own message.
func lastPart(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}
