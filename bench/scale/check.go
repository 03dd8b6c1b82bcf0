package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gvs/bench/probe"
	"gvs/bench/topo"
)

// Checker checks forwarding on the test's ports.
type Checker interface {
	// Forwarding sends a frame from the peer of every port in [from,
	// from+count) to the sink, again for those not seen, until all
	// arrived or limit passed.
	Forwarding(ctx context.Context, from, count int, limit time.Duration) (probe.L2CheckResult, error)
	// Silence sends one frame from each of those peers and reports what
	// arrived within wait: removed ports must forward nothing.
	Silence(ctx context.Context, from, count int, wait time.Duration) (probe.L2CheckResult, error)
}

// ProbeChecker runs the benchmark's _l2check probe in the host namespace
// of a topo.Ports.
type ProbeChecker struct {
	Self  string // the benchmark binary
	Ports *topo.Ports
}

var _ Checker = ProbeChecker{}

func (p ProbeChecker) Forwarding(ctx context.Context, from, count int, limit time.Duration) (probe.L2CheckResult, error) {
	return p.run(ctx, limit, "-from", strconv.Itoa(from), "-count", strconv.Itoa(count), "-timeout", limit.String(), "-interval", "50ms")
}

func (p ProbeChecker) Silence(ctx context.Context, from, count int, wait time.Duration) (probe.L2CheckResult, error) {
	return p.run(ctx, wait, "-from", strconv.Itoa(from), "-count", strconv.Itoa(count), "-timeout", wait.String(), "-expect-none")
}

func (p ProbeChecker) run(ctx context.Context, limit time.Duration, args ...string) (probe.L2CheckResult, error) {
	var res probe.L2CheckResult
	ctx, cancel := context.WithTimeout(ctx, limit+30*time.Second)
	defer cancel()
	argv := append([]string{p.Self, "_l2check", "-sink", topo.SinkPeer, "-prefix", p.Ports.PeerPrefix()}, args...)
	cmd := topo.Command(ctx, p.Ports.Host, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return res, fmt.Errorf("_l2check: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return res, fmt.Errorf("_l2check: %v", err)
	}
	return res, nil
}
