package bridge

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Tools the suite drives; a test skips, naming the one missing.
const (
	vsctlPath    = "/usr/bin/ovs-vsctl"
	toolPath     = "/usr/bin/ovsdb-tool"
	appctlPath   = "/usr/bin/ovs-appctl"
	debianServer = "/usr/sbin/ovsdb-server"
	vswitchSchem = "/usr/share/openvswitch/vswitch.ovsschema"
	iperfPath    = "/usr/bin/iperf3"
	ipPath       = "/usr/sbin/ip"
)

// bins are the binaries TestMain builds.
var bins struct {
	vswitchd, ovsdbServer string
	err                   error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gvs-bridge-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.vswitchd = filepath.Join(dir, "gvs-vswitchd")
	bins.ovsdbServer = filepath.Join(dir, "gvs-ovsdb-server")
	build := []string{"build"}
	if os.Getenv("GVS_E2E_RACE") != "" {
		// The daemons under the race detector: races between the
		// control commands, metrics and the PMDs show in their logs.
		build = append(build, "-race")
	}
	for pkg, out := range map[string]string{"gvs/cmd/gvs-vswitchd": bins.vswitchd, "gvs/cmd/gvs-ovsdb-server": bins.ovsdbServer} {
		if b, err := exec.Command("go", append(build, "-o", out, pkg)...).CombinedOutput(); err != nil {
			bins.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireEnv skips the test when it cannot run here.
func requireEnv(t *testing.T, tools ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces, veths and tap devices")
	}
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	for _, tool := range append([]string{vsctlPath, ipPath}, tools...) {
		if _, err := os.Stat(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}
