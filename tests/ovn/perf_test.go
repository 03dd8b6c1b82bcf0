package ovn

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

const iperfPath = "/usr/bin/iperf3"

// TestPerfOVN (GVS_OVN_PERF=1; not part of make test) measures, with each
// chassis switch: TCP throughput between two logical ports of one logical
// switch (iperf3, one stream, 5 s), and the time from adding 100 logical
// ports bound to interfaces of br-int until ovn-nbctl --wait=hv returns
// and all are up. It logs figures; it fails only when a step fails.
func TestPerfOVN(t *testing.T) {
	if os.Getenv("GVS_OVN_PERF") == "" {
		t.Skip("GVS_OVN_PERF=1 runs it")
	}
	const nPorts = 100
	skip := func(k kind) string {
		if k == kindGVSDB {
			return "the switch is what is measured: gvs covers it"
		}
		return ""
	}
	scenarioSkipping(t, "perf", skip, func(t *testing.T, c *chassis) {
		c.nbctl("ls-add", "ls0")
		c.nbctl("lsp-add", "ls0", "vm1", "--", "lsp-set-addresses", "vm1", "0a:00:00:00:00:01 198.18.0.1")
		c.nbctl("lsp-add", "ls0", "vm2", "--", "lsp-set-addresses", "vm2", "0a:00:00:00:00:02 198.18.0.2")
		vm1 := c.addHost(hostConfig{name: "vm1", lsp: "vm1", mac: "0a:00:00:00:00:01", ip4: "198.18.0.1/24"})
		vm2 := c.addHost(hostConfig{name: "vm2", lsp: "vm2", mac: "0a:00:00:00:00:02", ip4: "198.18.0.2/24"})
		c.waitUp("ports up")
		vm1.mustPing("ping vm1->vm2", vm2.ip4)

		srv := exec.Command(ipPath, "netns", "exec", vm2.ns, iperfPath, "-s", "-1", "-B", vm2.ip4)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { srv.Process.Kill(); srv.Wait() }()
		time.Sleep(300 * time.Millisecond)
		out, err := exec.Command(ipPath, "netns", "exec", vm1.ns, iperfPath, "-c", vm2.ip4, "-t", "5", "-J").Output()
		if err != nil {
			t.Fatalf("iperf3: %v\n%s", err, out)
		}
		var res struct {
			End struct {
				SumReceived struct {
					BitsPerSecond float64 `json:"bits_per_second"`
				} `json:"sum_received"`
			} `json:"end"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("iperf3 output: %v", err)
		}
		t.Logf("%s: TCP between two logical ports: %.2f Gbit/s", c.kind, res.End.SumReceived.BitsPerSecond/1e9)

		// nPorts more logical ports, each bound to one end of a veth pair
		// whose two ends stay in the switch's namespace.
		start := time.Now()
		args := []string{}
		for i := range nPorts {
			lsp := fmt.Sprintf("p%d", i)
			args = append(args, "--", "lsp-add", "ls0", lsp, "--", "lsp-set-addresses", lsp,
				fmt.Sprintf("0a:00:00:01:%02x:%02x 198.18.1%02d.%d", i/256, i%256, i/200, 1+i%200))
		}
		c.nbctl(args...)
		vsArgs := []string{}
		for i := range nPorts {
			port := fmt.Sprintf("p%d", i)
			c.run(ipPath, "-n", c.sw, "link", "add", port, "type", "veth", "peer", "name", port+"x")
			c.run(ipPath, "-n", c.sw, "link", "set", port, "up")
			vsArgs = append(vsArgs, "--", "add-port", integrationBridge, port, "--", "set", "interface", port,
				"external-ids:iface-id="+port)
		}
		created := time.Since(start)
		start = time.Now()
		c.vsctl(vsArgs...)
		c.nbctl("--wait=hv", "sync")
		synced := time.Since(start)
		for i := range nPorts {
			c.nbctl("wait-until", "logical_switch_port", fmt.Sprintf("p%d", i), "up=true")
		}
		up := time.Since(start)
		t.Logf("%s: %d ports (NB and veths made in %v): added to br-int, --wait=hv sync after %v, all up after %v",
			c.kind, nPorts, created.Round(time.Millisecond), synced.Round(time.Millisecond), up.Round(time.Millisecond))
		mem, _ := c.appctl("memory/show")
		t.Logf("%s: memory/show: %s", c.kind, mem)
	}, iperfPath)
}
