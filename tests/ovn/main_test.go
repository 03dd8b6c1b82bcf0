package ovn

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Debian's Open vSwitch and OVN programs (the reference switch, the tools
// driving both switches, the OVN control plane) and the other tools the
// scenarios need.
const (
	vsctlPath      = "/usr/bin/ovs-vsctl"
	ofctlPath      = "/usr/bin/ovs-ofctl"
	appctlPath     = "/usr/bin/ovs-appctl"
	toolPath       = "/usr/bin/ovsdb-tool"
	debianServer   = "/usr/sbin/ovsdb-server"
	debianVswitchd = "/usr/sbin/ovs-vswitchd"
	vswitchSchema  = "/usr/share/openvswitch/vswitch.ovsschema"
	northdPath     = "/usr/bin/ovn-northd"
	controllerPath = "/usr/bin/ovn-controller"
	nbctlPath      = "/usr/bin/ovn-nbctl"
	sbctlPath      = "/usr/bin/ovn-sbctl"
	nbSchema       = "/usr/share/ovn/ovn-nb.ovsschema"
	sbSchema       = "/usr/share/ovn/ovn-sb.ovsschema"
	ipPath         = "/usr/sbin/ip"
	ethtoolPath    = "/usr/sbin/ethtool"
	busyboxPath    = "/bin/busybox" // its udhcpc applet is the DHCP client
)

// suite holds what TestMain prepared: the gvs-vswitchd binary under test.
var suite struct {
	gvsBinary   string // gvs-vswitchd
	gvsDBServer string // gvs-ovsdb-server
	buildErr    error
}

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	dir, err := os.MkdirTemp("", "gvs-ovn-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "ovn:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	suite.gvsBinary = filepath.Join(dir, "gvs-vswitchd")
	suite.gvsDBServer = filepath.Join(dir, "gvs-ovsdb-server")
	build := []string{"build", "-o", dir + "/"}
	if os.Getenv("GVS_E2E_RACE") != "" {
		build = append(build, "-race")
	}
	if out, err := exec.Command("go", append(build, "gvs/cmd/gvs-vswitchd", "gvs/cmd/gvs-ovsdb-server")...).CombinedOutput(); err != nil {
		suite.buildErr = fmt.Errorf("go build gvs/cmd/gvs-vswitchd gvs/cmd/gvs-ovsdb-server: %v\n%s", err, out)
	}
	return m.Run()
}

// requireEnv skips t unless it can run here: root, Debian's Open vSwitch,
// OVN, iproute2 and ethtool installed (make test installs them).
func requireEnv(t *testing.T, extra ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces and veths")
	}
	need := []string{vsctlPath, ofctlPath, appctlPath, toolPath, debianServer, debianVswitchd, vswitchSchema,
		northdPath, controllerPath, nbctlPath, sbctlPath, nbSchema, sbSchema, ipPath, ethtoolPath}
	for _, p := range append(need, extra...) {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is missing (make test installs it: scripts/install-test-deps.sh)", p)
		}
	}
}
