package topo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Names inside the scale test's namespaces. They are private to those
// namespaces, so they need no prefix of their own.
const (
	scalePortPrefix = "p"     // outer ends, in the switch namespace: p0, p1, ...
	scalePeerPrefix = "h"     // their peers, in the host namespace: h0, h1, ...
	SinkPort        = "psink" // the sink's outer end, in the switch namespace
	SinkPeer        = "hsink" // the sink's own end, in the host namespace
)

// Ports is the scale test's topology: n veth pairs whose outer ends
// (p0..p<n-1>) sit in a switch namespace, gb<pid>k, and whose peers
// (h0..h<n-1>) all sit in one host namespace, gb<pid>h, plus one more pair,
// the sink (psink/hsink), to which the forwarding probe sends a frame from
// every peer. Nothing has an IP address and IPv6 is off in both namespaces:
// the only frames on these links are the probe's own.
//
// A Ports is used from one goroutine. Destroy removes every link and both
// namespaces, is safe after a partial Create and more than once.
type Ports struct {
	Switch string // namespace where the switch joins the outer ends
	Host   string // namespace holding every peer and the sink's end
	N      int

	created []string
}

// NewPorts names a scale topology of n ports for this process.
func NewPorts(n int) *Ports {
	p := NamePrefix + strconv.Itoa(os.Getpid())
	return &Ports{Switch: p + "k", Host: p + "h", N: n}
}

// Port is the outer end of pair i, the name a switch is given.
func (p *Ports) Port(i int) string { return scalePortPrefix + strconv.Itoa(i) }

// Peer is pair i's end in the host namespace.
func (p *Ports) Peer(i int) string { return scalePeerPrefix + strconv.Itoa(i) }

// PeerPrefix is what Peer puts before the index (the probe's -prefix).
func (p *Ports) PeerPrefix() string { return scalePeerPrefix }

// PortNames returns the outer ends of pairs [from, to).
func (p *Ports) PortNames(from, to int) []string {
	names := make([]string, 0, max(0, to-from))
	for i := from; i < to; i++ {
		names = append(names, p.Port(i))
	}
	return names
}

// Create makes both namespaces and every pair, all links up. It runs ip(8)
// in batch mode (a few processes, not one per link), so 1,000 pairs take
// seconds.
func (p *Ports) Create(ctx context.Context) error {
	for _, ns := range []string{p.Switch, p.Host} {
		if err := ip(ctx, "netns", "add", ns); err != nil {
			return err
		}
		p.created = append(p.created, ns)
		// No IPv6 autoconfiguration: 1,000 links sending router
		// solicitations and MLD reports would be flooded to every port.
		script := "echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6 && echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6"
		if _, err := Run(ctx, ns, "sh", "-c", script); err != nil {
			return err
		}
		if err := ip(ctx, "-n", ns, "link", "set", "lo", "up"); err != nil {
			return err
		}
	}
	var add, upSwitch, upHost strings.Builder
	pair := func(port, peer string) {
		fmt.Fprintf(&add, "link add %s netns %s type veth peer name %s netns %s\n", port, p.Switch, peer, p.Host)
		fmt.Fprintf(&upSwitch, "link set %s up\n", port)
		fmt.Fprintf(&upHost, "link set %s up\n", peer)
	}
	pair(SinkPort, SinkPeer)
	for i := range p.N {
		pair(p.Port(i), p.Peer(i))
	}
	if err := ipBatch(ctx, "", add.String()); err != nil {
		return err
	}
	if err := ipBatch(ctx, p.Switch, upSwitch.String()); err != nil {
		return err
	}
	return ipBatch(ctx, p.Host, upHost.String())
}

// Destroy deletes every pair (from the switch side, in one batch, since
// namespace deletion frees links asynchronously) and both namespaces; it
// uses a fresh context so that it works after the run's was cancelled.
func (p *Ports) Destroy() error {
	ctx := context.Background()
	var errs []error
	if len(p.created) > 0 && p.created[0] == p.Switch {
		var del strings.Builder
		fmt.Fprintf(&del, "link del %s\n", SinkPort)
		for i := range p.N {
			fmt.Fprintf(&del, "link del %s\n", p.Port(i))
		}
		// Links a partial Create never made are reported and ignored.
		if err := ipBatch(ctx, p.Switch, del.String()); err != nil && !isMissing(err) {
			errs = append(errs, err)
		}
	}
	for _, ns := range p.created {
		if err := ip(ctx, "netns", "del", ns); err != nil && !isMissing(err) {
			errs = append(errs, err)
		}
	}
	p.created = nil
	return errors.Join(errs...)
}

// ipBatch runs `ip -force -batch -` (in namespace ns when not "") with
// commands on its standard input; -force goes on past a failing line and
// reports it at the end.
func ipBatch(ctx context.Context, ns, commands string) error {
	argv := []string{"ip", "-force"}
	if ns != "" {
		argv = append(argv, "-n", ns)
	}
	argv = append(argv, "-batch", "-")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(commands)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, firstLines(string(out), 3))
	}
	return nil
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("(%d more lines)", len(lines)-n))
	}
	return strings.Join(lines, " | ")
}
