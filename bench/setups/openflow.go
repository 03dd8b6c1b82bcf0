package setups

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gvs/bench/openflow"
	"gvs/bench/topo"
)

// ovsOfctl is Debian's ovs-ofctl, which drives both switches.
const ovsOfctl = "/usr/bin/ovs-ofctl"

// ofctlLimit bounds one ovs-ofctl call (100,000 flows included).
const ofctlLimit = 10 * time.Minute

// mgmtWait bounds the wait for a bridge's OpenFlow management socket.
const mgmtWait = 10 * time.Second

// OVNFiles are the saved OVN two-port pipeline's files (see
// scripts/ovn-two-port-flows.sh): the flows, and beside them the ports and
// the TLV map.
type OVNFiles struct {
	Flows string // .../ovn-two-port.flows
}

func (f OVNFiles) sibling(ext string) string {
	return strings.TrimSuffix(f.Flows, ".flows") + ext
}

// OpenFlowTarget is the ovs-ofctl target of the setup's bridge br0: its
// management socket in the setup's run directory.
func (s *switchProc) OpenFlowTarget() string {
	return "unix:" + s.mgmtPath()
}

func (s *switchProc) mgmtPath() string { return filepath.Join(s.dir, "br0.mgmt") }

// Ofctl runs `ovs-ofctl -O OpenFlow15 CMD br0 ARGS...` against the
// setup's bridge.
func (s *switchProc) Ofctl(ctx context.Context, cmd string, args ...string) (string, error) {
	return s.ofctlOpts(ctx, nil, cmd, args...)
}

func (s *switchProc) ofctlOpts(ctx context.Context, opts []string, cmd string, args ...string) (string, error) {
	argv := append([]string{ovsOfctl, "-O", "OpenFlow15"}, opts...)
	argv = append(argv, cmd, s.OpenFlowTarget())
	argv = append(argv, args...)
	out, err := topo.RunFor(ctx, ofctlLimit, "", argv...)
	return strings.TrimSpace(out), err
}

// ovnAddBridge is the ovs-vsctl command that creates br0 for the OVN
// pipeline: fail-mode=secure (no NORMAL flow of its own), OpenFlow 1.5,
// and only the client's and server's ports, with the OpenFlow numbers the
// pipeline expects. The extra senders of the new-flow test have no logical
// port, so they are left out.
func ovnAddBridge(t *topo.Topo, timeout string, files OVNFiles, portType string) ([]string, error) {
	ports, err := ovnPorts(files)
	if err != nil {
		return nil, err
	}
	add := []string{timeout, "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
		"fail-mode=secure", "protocols=OpenFlow15"}
	for i, port := range []string{t.ClientPort, t.ServerPort} {
		add = append(add, "--", "add-port", "br0", port, "--", "set", "interface", port, fmt.Sprintf("ofport_request=%d", ports[i].OFPort))
		if portType != "" {
			add = append(add, "type="+portType)
		}
	}
	return add, nil
}

func ovnPorts(files OVNFiles) ([]openflow.Port, error) {
	text, err := os.ReadFile(files.sibling(".ports"))
	if err != nil {
		return nil, err
	}
	ports, err := openflow.ParsePorts(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", files.sibling(".ports"), err)
	}
	if len(ports) != 2 {
		return nil, fmt.Errorf("%s: %d ports, the benchmark maps exactly two (client, server)", files.sibling(".ports"), len(ports))
	}
	return ports, nil
}

// errNoOpenFlow says the switch opened no management socket.
var errNoOpenFlow = errors.New("no OpenFlow management socket")

// loadOVN waits for br0's management socket, then loads the pipeline
// rewritten for the client's and server's MACs and addresses: the TLV map,
// then the flows, with Debian's ovs-ofctl.
func (s *switchProc) loadOVN(ctx context.Context, t *topo.Topo, files OVNFiles) error {
	if err := waitSocket(ctx, s.vswitchd, s.mgmtPath(), mgmtWait); err != nil {
		return fmt.Errorf("%w: %v", errNoOpenFlow, err)
	}
	ports, err := ovnPorts(files)
	if err != nil {
		return err
	}
	flows, err := os.ReadFile(files.Flows)
	if err != nil {
		return err
	}
	tlvText, err := os.ReadFile(files.sibling(".tlv"))
	if err != nil {
		return err
	}
	tlv, err := openflow.ParseTLVMap(string(tlvText))
	if err != nil {
		return fmt.Errorf("%s: %w", files.sibling(".tlv"), err)
	}
	var to []openflow.Endpoint
	for _, h := range []struct{ ns, dev, ip string }{{t.Client, t.ClientDev, topo.ClientIP}, {t.Server, t.ServerDev, topo.ServerIP}} {
		mac, err := topo.Run(ctx, h.ns, "cat", "/sys/class/net/"+h.dev+"/address")
		if err != nil {
			return err
		}
		to = append(to, openflow.Endpoint{MAC: strings.TrimSpace(mac), IP: h.ip})
	}
	rewritten, err := openflow.Rewrite(string(flows), ports, to)
	if err != nil {
		return err
	}
	file := filepath.Join(s.dir, "ovn-two-port.flows")
	if err := os.WriteFile(file, []byte(rewritten), 0o644); err != nil {
		return err
	}
	if tlv != "" {
		if _, err := s.Ofctl(ctx, "add-tlv-map", tlv); err != nil {
			return err
		}
	}
	_, err = s.Ofctl(ctx, "add-flows", file)
	return err
}

// FlowSenders limits the new-flow test to the first n senders (0: all).
type FlowSenders interface {
	FlowSenders() int
}

// WaitForwardingFrom is WaitForwarding for the given senders only.
func WaitForwardingFrom(ctx context.Context, env Env, t *topo.Topo, senders []topo.Sender, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, s := range senders {
		if err := waitPing(ctx, env, s.NS, s.Target(t.Direct()), deadline); err != nil {
			return fmt.Errorf("no ping from %s through the switch within %v (%v)", s.NS, limit, err)
		}
	}
	return nil
}

// OpenFlowSetups are the setups of the OpenFlow part: gvs and the
// best-tuned Open vSwitch, each with NORMAL and with the OVN pipeline.
func OpenFlowSetups(env Env) []Setup {
	return []Setup{
		&OVS{Env: env, Opt: OVSOptions{Name: "ovs-netdev-tso-bigbuf", TSO: true, BigBuf: true,
			Description: "Open vSwitch 3.1 netdev, userspace TSO and 32 MiB socket buffers (the best-tuned Open vSwitch on veth), NORMAL"}},
		&OVS{Env: env, Opt: OVSOptions{Name: "ovs-netdev-tso-bigbuf-ovn", TSO: true, BigBuf: true, OVN: true,
			Description: "the same Open vSwitch with the OVN two-port pipeline (fail-mode=secure, OpenFlow 1.5, flows loaded with ovs-ofctl add-flows)"}},
		&GVS{Env: env, Opt: GVSOptions{Name: "gvs-system",
			Description: "gvs-vswitchd, system ports, defaults, NORMAL"}},
		&GVS{Env: env, Opt: GVSOptions{Name: "gvs-system-ovn", OVN: true,
			Description: "gvs-vswitchd, system ports, defaults, with the OVN two-port pipeline (fail-mode=secure, OpenFlow 1.5, flows loaded with ovs-ofctl add-flows)"}},
	}
}

var (
	_ FlowSenders     = (*OVS)(nil)
	_ FlowSenders     = (*GVS)(nil)
	_ FlowTableSwitch = (*OVS)(nil)
	_ FlowTableSwitch = (*GVS)(nil)
)

// FlowTableSwitch is the flow-table test's view of Open vSwitch and gvs:
// a switch with one bridge and no ports or traffic, loaded with ovs-ofctl.
type FlowTableSwitch interface {
	Name() string
	Kind() string
	Description() string
	Available() (bool, string)
	// StartOpenFlowBridge starts the switch (ovs-vswitchd in namespace ns)
	// with bridge br0 of the netdev datapath, fail-mode=secure, OpenFlow
	// 1.5, and returns once its management socket exists; a *SkipError
	// when the switch serves no OpenFlow.
	StartOpenFlowBridge(ctx context.Context, ns string) error
	// OfctlWith runs `ovs-ofctl -O OpenFlow15 OPTS CMD br0 ARGS...`.
	OfctlWith(ctx context.Context, opts []string, cmd string, args ...string) (string, error)
	// PIDs is the switch daemon (ovs-vswitchd or gvs-vswitchd), whose
	// memory holds the rules.
	PIDs() []int
	Stop() error
}

// FlowTableSwitches are the flow-table test's switches: Open vSwitch's
// netdev datapath and gvs, defaults.
func FlowTableSwitches(env Env) []FlowTableSwitch {
	return []FlowTableSwitch{
		&OVS{Env: env, Opt: OVSOptions{Name: OVSDefaultName,
			Description: "Open vSwitch 3.1 (ovs-vswitchd, its own ovsdb-server), netdev datapath, one bridge with no ports"}},
		&GVS{Env: env, Opt: GVSOptions{Name: "gvs-system",
			Description: "gvs-vswitchd (embedded database), netdev datapath, one bridge with no ports"}},
	}
}

func (s *switchProc) OfctlWith(ctx context.Context, opts []string, cmd string, args ...string) (string, error) {
	return s.ofctlOpts(ctx, opts, cmd, args...)
}

var openFlowBridge = []string{"--timeout=60", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
	"fail-mode=secure", "protocols=OpenFlow15"}

func (o *OVS) StartOpenFlowBridge(ctx context.Context, ns string) error {
	if err := o.startDaemons(ctx, ns, ns+"o"); err != nil {
		return err
	}
	if _, err := o.Vsctl(ctx, openFlowBridge...); err != nil {
		return fmt.Errorf("%w (log: %s)", err, tail(filepath.Join(o.dir, "ovs-vswitchd.log"), 3))
	}
	return waitSocket(ctx, o.vswitchd, o.mgmtPath(), mgmtWait)
}

func (g *GVS) StartOpenFlowBridge(ctx context.Context, ns string) error {
	if err := g.startSwitch(ctx, ns, ns+"g"); err != nil {
		return err
	}
	if _, err := g.Vsctl(ctx, openFlowBridge...); err != nil {
		if !g.vswitchd.running() {
			return fmt.Errorf("gvs-vswitchd exited: %s", tail(filepath.Join(g.dir, "gvs-vswitchd.out"), 3))
		}
		return err
	}
	if err := waitSocket(ctx, g.vswitchd, g.mgmtPath(), mgmtWait); err != nil {
		return Skip("gvs-vswitchd serves no OpenFlow on br0 yet (%v)", err)
	}
	return nil
}
