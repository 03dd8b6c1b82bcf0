package setups

import (
	"context"
	"errors"
	"os/exec"

	"gvs/bench/topo"
)

// Direct is a veth pair straight from client to server: no switch at all,
// the limit of this machine. With no switch to join more hosts, each extra
// flow sender gets its own pair to the server (topo.LinkDirect).
type Direct struct {
	Env  Env
	topo *topo.Topo
}

func (d *Direct) Name() string { return "direct" }
func (d *Direct) Kind() string { return KindKernel }
func (d *Direct) Description() string {
	return "veth pair from client to server, no switch (the machine's limit); for the new-flow test each extra sender has a veth pair of its own to the server"
}
func (d *Direct) Available() (bool, string) { return haveIP() }
func (d *Direct) PIDs() []int               { return nil }

func (d *Direct) Start(ctx context.Context, t *topo.Topo) error {
	d.topo = t
	if err := t.LinkDirect(ctx); err != nil {
		return err
	}
	return WaitForwarding(ctx, d.Env, t, d.Env.ForwardWait)
}

func (d *Direct) Stop() error {
	if d.topo == nil {
		return nil
	}
	return d.topo.Unlink(context.Background())
}

// Bridge is the Linux bridge joining the two outer veth ends.
type Bridge struct {
	Env  Env
	topo *topo.Topo
}

func (b *Bridge) Name() string              { return "linux-bridge" }
func (b *Bridge) Kind() string              { return KindKernel }
func (b *Bridge) Description() string       { return "Linux bridge, defaults (STP off)" }
func (b *Bridge) Available() (bool, string) { return haveIP() }
func (b *Bridge) PIDs() []int               { return nil }

func (b *Bridge) bridgeName() string { return b.topo.Prefix + "br" }

func (b *Bridge) Start(ctx context.Context, t *topo.Topo) error {
	b.topo = t
	if err := t.LinkSwitched(ctx); err != nil {
		return err
	}
	br := b.bridgeName()
	steps := [][]string{{"ip", "link", "add", br, "type", "bridge"}}
	for _, port := range t.SwitchPorts() {
		steps = append(steps, []string{"ip", "link", "set", port, "master", br})
	}
	steps = append(steps, []string{"ip", "link", "set", br, "up"})
	for _, s := range steps {
		if _, err := topo.Run(ctx, t.Switch, s...); err != nil {
			return err
		}
	}
	return WaitForwarding(ctx, b.Env, t, b.Env.ForwardWait)
}

func (b *Bridge) Stop() error {
	if b.topo == nil {
		return nil
	}
	ctx := context.Background()
	err := b.topo.Unlink(ctx)
	if _, derr := topo.Run(ctx, b.topo.Switch, "ip", "link", "del", b.bridgeName()); derr != nil && !isMissingLink(derr) {
		err = errors.Join(err, derr)
	}
	return err
}

func haveIP() (bool, string) {
	if _, err := exec.LookPath("ip"); err != nil {
		return false, "ip(8) from iproute2 is missing"
	}
	return true, ""
}
