package setups

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gvs/bench/topo"
)

// Kinds of setup, for references and ratios.
const (
	KindKernel = "kernel"
	KindOVS    = "ovs"
	KindGVS    = "gvs"
)

// Setup is one switch configuration under test.
type Setup interface {
	Name() string
	Kind() string
	Description() string
	// Available reports whether the software this setup needs is present.
	Available() (bool, string)
	// Start links the topology and starts the switch; it returns once a
	// ping from every sender crosses it, or a *SkipError.
	Start(ctx context.Context, t *topo.Topo) error
	// Stop stops the switch and removes its links; safe after a failed or
	// partial Start and more than once.
	Stop() error
	// PIDs are the switch's processes, for CPU accounting (none for the
	// kernel's own paths).
	PIDs() []int
}

// SkipError says a setup cannot be measured here and why.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// Skip returns a *SkipError.
func Skip(format string, args ...any) error {
	return &SkipError{Reason: fmt.Sprintf(format, args...)}
}

// IsSkip reports whether err is a *SkipError and returns its reason.
func IsSkip(err error) (string, bool) {
	var s *SkipError
	if errors.As(err, &s) {
		return s.Reason, true
	}
	return "", false
}

// Env is what setups need from the benchmark.
type Env struct {
	Self   string // the benchmark binary, for its hidden probes
	BinDir string // where gvs's binaries are (bin/)
	// ForwardWait bounds the wait for the first ping through a switch.
	ForwardWait time.Duration
	// OVN is the saved OVN pipeline the "-ovn" setups load.
	OVN OVNFiles
}

// WaitForwarding pings the server from every sender (the client first)
// until each gets its replies or limit passes: every host's port forwards,
// its neighbour entry for the server is resolved and the switch has
// learned its MAC before any test runs.
func WaitForwarding(ctx context.Context, env Env, t *topo.Topo, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, s := range t.Senders {
		if err := waitPing(ctx, env, s.NS, s.Target(t.Direct()), deadline); err != nil {
			return fmt.Errorf("no ping from %s through the switch within %v (%v)", s.NS, limit, err)
		}
	}
	return nil
}

func waitPing(ctx context.Context, env Env, ns, dst string, deadline time.Time) error {
	for {
		_, err := topo.Run(ctx, ns, env.Self, "_ping", "-dst", dst, "-count", "1", "-timeout", "300ms")
		if err == nil {
			out, _ := topo.Run(ctx, ns, env.Self, "_ping", "-dst", dst, "-count", "3", "-interval", "10ms", "-timeout", "300ms")
			if pingAllReplied(out) {
				return nil
			}
			err = errors.New("not every ping answered")
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
