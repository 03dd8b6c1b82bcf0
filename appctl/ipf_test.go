package appctl

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func appctlAt(t *testing.T, sock string, args ...string) run {
	t.Helper()
	cmd := exec.Command(appctlBin, append([]string{"--timeout=10", "-t", sock}, args...)...)
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

// TestIPFCommandsMatchOpenVSwitch: the same dpctl/ipf-* commands, valid
// and not, against Debian's ovs-vswitchd and gvs, give the same output,
// errors and exit codes, and the settings they make show in
// ipf-get-status alike.
func TestIPFCommandsMatchOpenVSwitch(t *testing.T) {
	e := newEnv(t)
	if datapathIPF(e.sw.Datapath()) == nil {
		t.Skip("the datapath has no fragment module yet (it comes with the ct action)")
	}
	ref := startRefVswitchd(t) // conntrack_test.go's
	for _, args := range [][]string{
		{"dpctl/ipf-get-status"},
		{"dpctl/ipf-get-status", "-m"},
		{"dpctl/ipf-set-min-frag", "v4", "1000"},
		{"dpctl/ipf-set-min-frag", "v6", "399"},
		{"dpctl/ipf-set-min-frag", "v6", "400"},
		{"dpctl/ipf-set-min-frag", "v5", "1000"},
		{"dpctl/ipf-set-min-frag", "v4", "abc"},
		{"dpctl/ipf-set-min-frag", "v4"},
		{"dpctl/ipf-set-max-nfrags", "500"},
		{"dpctl/ipf-set-max-nfrags", "5001"},
		{"dpctl/ipf-set-max-nfrags", "x"},
		{"dpctl/ipf-set-disabled", "v4"},
		{"dpctl/ipf-set-enabled", "v6"},
		{"dpctl/ipf-set-enabled", "v7"},
		{"dpctl/ipf-set-enabled", "v4", "1"},
		{"dpctl/ipf-set-enabled", "nosuchdp", "v4"},
		{"dpctl/ipf-set-enabled"},
		{"dpctl/ipf-get-status", "--bogus"},
		{"dpctl/ipf-get-status"},
	} {
		want := appctlAt(t, ref.ctl, args...)
		got := appctlAt(t, e.sock, args...)
		// ovs-appctl names the socket in its own error line.
		want.err = strings.ReplaceAll(want.err, ref.ctl, "CTL")
		got.err = strings.ReplaceAll(got.err, e.sock, "CTL")
		if got != want {
			t.Errorf("%v:\ngvs (exit %d):\n%s%s\nOpen vSwitch (exit %d):\n%s%s", args, got.code, got.out, got.err, want.code, want.out, want.err)
		}
	}
}

func TestScanners(t *testing.T) {
	for _, c := range []struct {
		in   string
		v    uint32
		ok   bool
		v6   bool
		fam  bool
		name string
	}{
		{in: "1000", v: 1000, ok: true},
		{in: " 12x", v: 12, ok: true},
		{in: "x", ok: false},
		{in: "-1", v: ^uint32(0), ok: true},
	} {
		if v, ok := scanUint32(c.in); v != c.v || ok != c.ok {
			t.Errorf("scanUint32(%q) = %d, %v", c.in, v, ok)
		}
	}
	for in, want := range map[string][2]bool{"v4": {false, true}, "v6": {true, true}, "v6x": {true, true}, "v": {false, false}, "4": {false, false}} {
		if v6, ok := family(in); v6 != want[0] || ok != want[1] {
			t.Errorf("family(%q) = %v, %v", in, v6, ok)
		}
	}
}
