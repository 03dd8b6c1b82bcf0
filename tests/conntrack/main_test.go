package conntrack

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Debian's Open vSwitch programs (the reference and the tools driving
// both switches) and the other tools the scenarios need.
const (
	vsctlPath      = "/usr/bin/ovs-vsctl"
	ofctlPath      = "/usr/bin/ovs-ofctl"
	appctlPath     = "/usr/bin/ovs-appctl"
	toolPath       = "/usr/bin/ovsdb-tool"
	debianServer   = "/usr/sbin/ovsdb-server"
	debianVswitchd = "/usr/sbin/ovs-vswitchd"
	vswitchSchema  = "/usr/share/openvswitch/vswitch.ovsschema"
	ipPath         = "/usr/sbin/ip"
	ethtoolPath    = "/usr/sbin/ethtool"
)

// suite holds what TestMain prepared: the gvs-vswitchd binary under test.
var suite struct {
	gvsBinary string
	buildErr  error
	// selfCheck (GVS_CT_SELFCHECK=1) runs Debian's ovs-vswitchd in the
	// "gvs" subtests too: two runs of the reference must compare equal
	// after normalisation, which checks the normalisation itself.
	selfCheck bool
}

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	suite.selfCheck = os.Getenv("GVS_CT_SELFCHECK") != ""
	dir, err := os.MkdirTemp("", "gvs-ct-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "conntrack:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	suite.gvsBinary = filepath.Join(dir, "gvs-vswitchd")
	build := []string{"build", "-o", suite.gvsBinary}
	if os.Getenv("GVS_E2E_RACE") != "" {
		build = append(build, "-race")
	}
	if out, err := exec.Command("go", append(build, "gvs/cmd/gvs-vswitchd")...).CombinedOutput(); err != nil {
		suite.buildErr = fmt.Errorf("go build gvs/cmd/gvs-vswitchd: %v\n%s", err, out)
	}
	return m.Run()
}

// requireEnv skips t unless it can run here: root, and Debian's Open
// vSwitch and iproute2 installed (make test installs them).
func requireEnv(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces and veths")
	}
	for _, p := range []string{vsctlPath, ofctlPath, appctlPath, toolPath, debianServer, debianVswitchd, vswitchSchema, ipPath, ethtoolPath} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is missing (make test installs it: scripts/install-test-deps.sh)", p)
		}
	}
}
