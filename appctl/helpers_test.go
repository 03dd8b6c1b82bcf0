package appctl

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gvs/dpif"
	"gvs/metrics/source"
	"gvs/metrics/source/sourcetest"
	"gvs/netdev/netdevtest"
	"gvs/unixctl"
)

const appctlBin = "/usr/bin/ovs-appctl"

// env is a real datapath and NORMAL bridge over fake devices, with the
// commands served on a control socket.
type env struct {
	sw   *sourcetest.Switch
	devs []*netdevtest.Device
	cmds *Commands
	sock string
}

func needAppctl(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(appctlBin); err != nil {
		t.Skip("ovs-appctl not installed")
	}
}

// newEnv: bridge br0 with ports p1 (ofport 1) and p2 (ofport 2) on fake
// devices with two receive queues each, and its own port br0 (LOCAL).
func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvConfig(t, dpif.Config{PMDs: 2})
}

// newEnvConfig is newEnv with the datapath configured by cfg.
func newEnvConfig(t *testing.T, cfg dpif.Config) *env {
	t.Helper()
	needAppctl(t)
	e := &env{sw: sourcetest.NewWithConfig(t, cfg)}
	e.sw.AddBridge("br0")
	for i, name := range []string{"p1", "p2"} {
		d := netdevtest.MustNew(netdevtest.Config{Name: name, RxQueues: 2, TxQueues: 4})
		e.devs = append(e.devs, d)
		e.sw.AddPort("br0", d, i+1)
	}
	local := netdevtest.MustNew(netdevtest.Config{Name: "br0", Type: "internal", TxQueues: 4})
	e.sw.AddPort("br0", local, 65534)
	e.serve(t)
	return e
}

// serve registers the commands on a fresh control socket.
func (e *env) serve(t *testing.T) { e.serveSwitch(t, e.sw) }

func (e *env) serveSwitch(t *testing.T, sw source.Switch) {
	t.Helper()
	e.cmds = New(Config{Switch: sw, SampleInterval: 100 * time.Millisecond})
	t.Cleanup(e.cmds.Close)
	srv := unixctl.New(nil, "ovs-vswitchd (gvs) test")
	e.cmds.Register(srv)
	e.sock = filepath.Join(t.TempDir(), "ovs-vswitchd.ctl")
	if err := srv.Listen(e.sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
}

// traffic sends n frames each way between p1 and p2 and waits until all
// are forwarded.
func (e *env) traffic(t *testing.T, n int) {
	t.Helper()
	e.trafficOn(t, n, func(i int) int { return i % 2 })
}

// trafficOn is traffic with frame i injected on receive queue queue(i).
func (e *env) trafficOn(t *testing.T, n int, queue func(i int) int) {
	t.Helper()
	a, b := sourcetest.MAC(1), sourcetest.MAC(2)
	want1, want0 := e.devs[1].Stats().TxPackets+uint64(n), e.devs[0].Stats().TxPackets+uint64(n)
	for i := range n {
		e.devs[0].Inject(queue(i), sourcetest.Frame(b, a))
		e.devs[1].Inject(queue(i), sourcetest.Frame(a, b))
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.devs[1].Stats().TxPackets < want1 || e.devs[0].Stats().TxPackets < want0 {
		if time.Now().After(deadline) {
			t.Fatalf("traffic not forwarded")
		}
		time.Sleep(2 * time.Millisecond)
	}
	for _, d := range e.devs {
		d.TakeSent()
	}
}

type run struct {
	out, err string
	code     int
}

// appctl runs the real ovs-appctl against the control socket.
func (e *env) appctl(t *testing.T, args ...string) run {
	t.Helper()
	cmd := exec.Command(appctlBin, append([]string{"--timeout=10", "-t", e.sock}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := run{out: stdout.String(), err: stderr.String()}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		r.code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// ok runs a command that must succeed and returns its output.
func (e *env) ok(t *testing.T, args ...string) string {
	t.Helper()
	r := e.appctl(t, args...)
	if r.code != 0 || r.err != "" {
		t.Fatalf("ovs-appctl %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.err)
	}
	return r.out
}

// eventuallyOK runs a command until its output satisfies done (at most 5
// s) and returns the last output.
func (e *env) eventuallyOK(t *testing.T, done func(string) bool, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		out := e.ok(t, args...)
		if done(out) || time.Now().After(deadline) {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fails runs a command that must fail with Open vSwitch's exit status 2
// and the given stderr.
func (e *env) fails(t *testing.T, wantErr string, args ...string) {
	t.Helper()
	r := e.appctl(t, args...)
	wantErr += "ovs-appctl: " + e.sock + ": server returned an error\n"
	if r.code != 2 || r.err != wantErr {
		t.Errorf("ovs-appctl %s: exit %d stderr %q; want exit 2 stderr %q", strings.Join(args, " "), r.code, r.err, wantErr)
	}
}

// number returns the integer after label in text (summed over every
// occurrence), failing when there is none.
func number(t *testing.T, text, label string) uint64 {
	t.Helper()
	re := regexp.MustCompile(regexp.QuoteMeta(label) + `\s*(\d+)`)
	ms := re.FindAllStringSubmatch(text, -1)
	if len(ms) == 0 {
		t.Fatalf("no %q in:\n%s", label, text)
	}
	var sum uint64
	for _, m := range ms {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		sum += n
	}
	return sum
}

// emptySwitch is a switch before its first bridge: no datapath.
type emptySwitch struct{}

func (emptySwitch) Datapath() *dpif.Datapath { return nil }
func (emptySwitch) Bridges() []source.Bridge { return nil }
