package tests

import (
	"fmt"
	"strings"
	"testing"
)

// vsctlStep is one ovs-vsctl invocation of the script.
type vsctlStep struct {
	args []string
	// wantExit is checked against Debian's server, so the script keeps
	// testing what it says it tests (a typo would otherwise make both sides
	// agree on "unknown command").
	wantExit int
	// unordered marks output whose rows come in hash order (several rows
	// from list or find); see normalisation 5.
	unordered bool
}

func ok(args ...string) vsctlStep { return vsctlStep{args: args} }

func fails(exit int, args ...string) vsctlStep { return vsctlStep{args: args, wantExit: exit} }

func rows(args ...string) vsctlStep { return vsctlStep{args: args, unordered: true} }

// vsctlScript runs in order against a fresh database; every step's output
// is compared. The state it builds: br0 with ports, a bond, a fake bridge,
// QoS and Mirror rows, then tears it down again.
var vsctlScript = []vsctlStep{
	ok("init"),
	rows("show"),
	ok("add-br", "br0"),
	fails(1, "add-br", "br0"),
	ok("--may-exist", "add-br", "br0"),
	ok("list-br"),
	ok("br-exists", "br0"),
	fails(2, "br-exists", "nosuch"),
	ok("add-port", "br0", "p1"),
	fails(1, "add-port", "br0", "p1"),
	ok("--may-exist", "add-port", "br0", "p1"),
	ok("add-port", "br0", "p2", "--", "set", "Interface", "p2", "type=internal"),
	ok("add-bond", "br0", "bond0", "b1", "b2"),
	ok("--fake-iface", "add-bond", "br0", "bond1", "b3", "b4"),
	ok("list-ports", "br0"),
	ok("list-ifaces", "br0"),
	ok("port-to-br", "p1"),
	ok("iface-to-br", "b1"),
	fails(1, "port-to-br", "nosuch"),
	ok("add-br", "br1", "br0", "10"),
	ok("br-to-parent", "br1"),
	ok("br-to-vlan", "br1"),
	ok("add-port", "br1", "v1"),
	ok("list-br"),
	rows("show"),
	ok("set", "Open_vSwitch", ".", "external_ids:system-id=sys-1"),
	ok("get", "Open_vSwitch", ".", "external_ids", "next_cfg", "cur_cfg"),
	ok("set", "Bridge", "br0", "other_config:hwaddr=\"00:11:22:33:44:55\"", "stp_enable=true"),
	ok("get", "Bridge", "br0", "other_config", "stp_enable"),
	ok("get", "Bridge", "br0", "other_config:hwaddr"),
	fails(1, "get", "Bridge", "br0", "other_config:missing"),
	ok("--if-exists", "get", "Bridge", "br0", "other_config:missing"),
	ok("set", "Port", "p1", "tag=100"),
	ok("get", "Port", "p1", "tag"),
	fails(1, "set", "Port", "p1", "tag=5000"),
	fails(1, "set", "Interface", "p1", "ofport_request=0"),
	fails(1, "set", "Port", "p1", "nosuch=1"),
	fails(1, "set", "Port", "p1", "tag=abc"),
	fails(1, "set", "Bridge", "br0", "fail_mode=bogus"),
	ok("set", "Bridge", "br0", "fail_mode=secure"),
	fails(1, "list", "Nosuch"),
	fails(1, "set", "Port", "p2", "interfaces=[]"),
	fails(1, "--id=@i", "create", "Interface", "name=p2", "--", "add", "Port", "p2", "interfaces", "@i"),
	fails(1, "create", "Port", "name=x"),
	ok("list", "Port", "p1"),
	ok("--columns=name,tag", "list", "Port", "p1"),
	ok("--columns=name,tag", "find", "Port", "tag=100"),
	rows("--columns=name", "find", "Port", "tag=[]"),
	rows("--format=table", "--columns=name,tag", "list", "Port"),
	rows("--format=json", "--columns=name,tag", "list", "Port"),
	rows("--format=json", "--columns=_uuid,name,type", "list", "Interface"),
	ok("--format=json", "--columns=_uuid,name", "find", "Bridge", "name=br0"),
	ok("--format=table", "--columns=name,fail_mode,stp_enable", "find", "Bridge", "name=br0"),
	rows("--bare", "--columns=name", "list", "Interface"),
	ok("--data=json", "--columns=name,other_config", "list", "Bridge", "br0"),
	ok("add", "Bridge", "br0", "flood_vlans", "10", "20"),
	ok("get", "Bridge", "br0", "flood_vlans"),
	ok("remove", "Bridge", "br0", "flood_vlans", "10"),
	ok("clear", "Bridge", "br0", "flood_vlans"),
	fails(1, "add", "Bridge", "br0", "flood_vlans", "5000"),
	ok("set", "Port", "p2", "trunks=1,2,3", "vlan_mode=trunk"),
	ok("--columns=name,trunks,vlan_mode", "find", "Port", "trunks{>=}2"),
	fails(1, "set", "Port", "p2", "vlan_mode=bogus"),
	ok("set", "Bridge", "br0", "protocols=OpenFlow10,OpenFlow13"),
	ok("get", "Bridge", "br0", "protocols"),
	ok("list", "Open_vSwitch", "."),
	ok("add", "Bridge", "br0", "external_ids", "k1=v1", "k2=v2"),
	ok("remove", "Bridge", "br0", "external_ids", "k1"),
	ok("get", "Bridge", "br0", "external_ids"),
	ok("--id=@q", "create", "QoS", "type=linux-htb", "other_config:max-rate=1000000", "--", "set", "Port", "p1", "qos=@q"),
	ok("list", "QoS"),
	ok("--columns=name,qos", "list", "Port", "p1"),
	ok("--id=@m", "create", "Mirror", "name=m0", "select-all=true", "--", "add", "Bridge", "br0", "mirrors", "@m"),
	ok("--columns=name,select_all", "list", "Mirror"),
	fails(1, "set", "Bridge", "br0", "mirrors=@nosuch"),
	ok("clear", "Port", "p1", "qos"),
	ok("--all", "destroy", "QoS"),
	ok("list", "QoS"),
	ok("wait-until", "Bridge", "br0", "fail_mode=secure"),
	ok("del-port", "p1"),
	fails(1, "del-port", "br0", "nosuch"),
	ok("--if-exists", "del-port", "br0", "nosuch"),
	ok("del-port", "br0", "bond0"),
	ok("list-ports", "br0"),
	ok("del-br", "br1"),
	fails(1, "del-br", "nosuch"),
	ok("--if-exists", "del-br", "nosuch"),
	rows("show"),
	ok("emer-reset"),
	rows("show"),
	ok("del-br", "br0"),
	ok("list-br"),
	rows("--columns=name", "list", "Interface"),
	rows("show"),
}

// TestVsctlScript runs the script step by step against both servers and
// compares each step's output (ovs-vsctl --no-wait: no switch runs).
func TestVsctlScript(t *testing.T) {
	p := startPair(t, vsctlPath)
	nref, nours := newNormalizer(p.ref), newNormalizer(p.ours)
	for i, step := range vsctlScript {
		name := fmt.Sprintf("%02d_%s", i, strings.Join(step.args, "_"))
		t.Run(name, func(t *testing.T) {
			args := append([]string{"--no-wait"}, step.args...)
			ref, ours := p.ref.vsctl(t, args...), p.ours.vsctl(t, args...)
			if ref.exit != step.wantExit {
				t.Fatalf("script error: Debian's server gave exit %d, the script expects %d\n%s", ref.exit, step.wantExit, ref)
			}
			if step.unordered {
				format := outputFormat(step.args)
				ref.stdout, ours.stdout = sortRecords(ref.stdout, format), sortRecords(ours.stdout, format)
			}
			compareResults(t, "ovs-vsctl "+strings.Join(args, " "), nref.result(ref), nours.result(ours))
		})
	}
}

func outputFormat(args []string) string {
	for _, a := range args {
		switch a {
		case "show":
			return "tree"
		case "--format=json":
			return "json"
		case "--format=table":
			return "table"
		case "--bare":
			return "bare"
		}
	}
	return "list"
}

// TestVsctlWaitsForSwitch checks ovs-vsctl without --no-wait: the change is
// committed, next_cfg is incremented, and with no switch to copy it into
// cur_cfg ovs-vsctl times out (SIGALRM, exit 142).
func TestVsctlWaitsForSwitch(t *testing.T) {
	p := startPair(t, vsctlPath)
	norm := map[*server]*normalizer{p.ref: newNormalizer(p.ref), p.ours: newNormalizer(p.ours)}
	steps := [][]string{
		{"--no-wait", "init"},
		{"--timeout=2", "add-br", "brw"},
		{"--no-wait", "list-br"},
		{"--no-wait", "get", "Open_vSwitch", ".", "next_cfg", "cur_cfg"},
	}
	for _, args := range steps {
		var res [2]result
		for i, s := range p.both() {
			res[i] = norm[s].result(s.run(t, "", vsctlPath, append([]string{"--db=" + s.remote}, args...)...))
		}
		compareResults(t, "ovs-vsctl "+strings.Join(args, " "), res[0], res[1])
		if args[0] == "--timeout=2" && res[0].exit != 142 {
			t.Errorf("Debian's ovs-vsctl %v: exit %d, want 142 (SIGALRM)", args, res[0].exit)
		}
	}
}
