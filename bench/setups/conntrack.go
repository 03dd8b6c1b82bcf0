package setups

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"gvs/bench/conntrack"
	"gvs/bench/topo"
)

// flowsAddBridge is the ovs-vsctl command that creates br0 for a flow
// table of the conntrack part (Opt.Flows): fail-mode=secure, OpenFlow 1.5,
// only the client's and server's ports, as OpenFlow ports
// conntrack.ClientPort and conntrack.ServerPort.
func flowsAddBridge(t *topo.Topo, timeout, portType string) []string {
	add := []string{timeout, "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
		"fail-mode=secure", "protocols=OpenFlow15"}
	for i, port := range []string{t.ClientPort, t.ServerPort} {
		ofport := []int{conntrack.ClientPort, conntrack.ServerPort}[i]
		add = append(add, "--", "add-port", "br0", port, "--", "set", "interface", port, fmt.Sprintf("ofport_request=%d", ofport))
		if portType != "" {
			add = append(add, "type="+portType)
		}
	}
	return add
}

// loadFlows waits for br0's management socket and loads flows with
// Debian's ovs-ofctl add-flows.
func (s *switchProc) loadFlows(ctx context.Context, flows string) error {
	if err := waitSocket(ctx, s.vswitchd, s.mgmtPath(), mgmtWait); err != nil {
		return fmt.Errorf("%w: %v", errNoOpenFlow, err)
	}
	file := filepath.Join(s.dir, "bench.flows")
	if err := os.WriteFile(file, []byte(flows), 0o644); err != nil {
		return err
	}
	_, err := s.Ofctl(ctx, "add-flows", file)
	return err
}

// ConntrackSwitch is the conntrack part's view of a setup: whether its
// flow table tracks connections, and its ovs-appctl (dpctl/dump-conntrack
// counts what the tracker holds).
type ConntrackSwitch interface {
	TracksConnections() bool
	Appctl(ctx context.Context, args ...string) (string, error)
}

var (
	_ ConntrackSwitch = (*OVS)(nil)
	_ ConntrackSwitch = (*GVS)(nil)
)

func (o *OVS) TracksConnections() bool { return o.Opt.Flows == conntrack.FirewallFlows() }
func (g *GVS) TracksConnections() bool { return g.Opt.Flows == conntrack.FirewallFlows() }

// Names of the conntrack part's setups.
const (
	OVSConntrackName   = "ovs-netdev-tso-bigbuf-ct"
	OVSNoConntrackName = "ovs-netdev-tso-bigbuf-noct"
	GVSConntrackName   = "gvs-system-ct"
	GVSNoConntrackName = "gvs-system-noct"
)

// ConntrackSetups are the setups of the conntrack part: the best-tuned
// Open vSwitch and gvs, each with the ct firewall and with the same
// forwarding without ct.
func ConntrackSetups(env Env) []Setup {
	fw, plain := conntrack.FirewallFlows(), conntrack.PlainFlows()
	return []Setup{
		&OVS{Env: env, Opt: OVSOptions{Name: OVSConntrackName, TSO: true, BigBuf: true, Flows: fw,
			Description: "Open vSwitch 3.1 netdev, userspace TSO and 32 MiB socket buffers (the best-tuned Open vSwitch on veth), the ct firewall (fail-mode=secure, OpenFlow 1.5, flows loaded with ovs-ofctl add-flows)"}},
		&OVS{Env: env, Opt: OVSOptions{Name: OVSNoConntrackName, TSO: true, BigBuf: true, Flows: plain,
			Description: "the same Open vSwitch with the same forwarding without ct"}},
		&GVS{Env: env, Opt: GVSOptions{Name: GVSConntrackName, Flows: fw,
			Description: "gvs-vswitchd, system ports, defaults, the ct firewall (fail-mode=secure, OpenFlow 1.5, flows loaded with ovs-ofctl add-flows)"}},
		&GVS{Env: env, Opt: GVSOptions{Name: GVSNoConntrackName, Flows: plain,
			Description: "gvs-vswitchd, system ports, defaults, the same forwarding without ct"}},
	}
}
