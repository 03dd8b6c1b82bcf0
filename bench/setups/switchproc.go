package setups

import (
	"context"
	"path/filepath"
	"strings"

	"gvs/bench/topo"
)

// switchProc is what the Open vSwitch and gvs setups share: the topology
// they were started on, a private directory with the database socket, and
// the switch daemon whose CPU time the benchmark measures.
type switchProc struct {
	topo     *topo.Topo
	dir      string
	vswitchd *daemon
}

// PIDs is the switch daemon's process, once started.
func (s *switchProc) PIDs() []int {
	if s.vswitchd == nil {
		return nil
	}
	return []int{s.vswitchd.pid}
}

// vsctl runs ovs-vsctl against the database socket in the setup's
// directory, as a user of either switch would.
func (s *switchProc) vsctl(ctx context.Context, args ...string) (string, error) {
	argv := append([]string{ovsVsctl, "--db=unix:" + filepath.Join(s.dir, "db.sock")}, args...)
	out, err := topo.Run(ctx, "", argv...)
	return strings.TrimSpace(out), err
}
