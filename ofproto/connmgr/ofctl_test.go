package connmgr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
)

func TestOfctlAddFlow(t *testing.T) {
	needOfctl(t)
	br := newFakeBridge()
	m := newTestManager(t, br)
	for _, v := range []string{"OpenFlow10", "OpenFlow13", "OpenFlow15"} {
		mustOfctl(t, m, "-O", v, "add-flow", "table=0,priority=7,in_port=1,actions=drop")
	}
	fms := br.recordedFlowMods()
	if len(fms) != 3 {
		t.Fatalf("%d flow mods", len(fms))
	}
	for i, fm := range fms {
		if fm.Command != ofp.FlowAdd || fm.Priority != 7 || fm.Match.Flow.InPort != 1 || fm.Match.Wildcards.Masks.InPort == 0 {
			t.Errorf("flow mod %d: %+v", i, fm)
		}
	}
	// ovs-ofctl -O OpenFlow10 turns on NXT_FLOW_MOD_TABLE_ID for table=0,
	// so the table counts.
	if fms[0].TableID != 0 || fms[1].TableID != 0 {
		t.Errorf("tables %d, %d", fms[0].TableID, fms[1].TableID)
	}
}

func TestOfctlErrors(t *testing.T) {
	needOfctl(t)
	br := newFakeBridge()
	br.flowModErr = ofperr.OFPBAC_BAD_OUT_PORT
	m := newTestManager(t, br)
	_, errs, err := ofctl(t, m.ofctlArgs("-O", "OpenFlow13", "add-flow", "in_port=1,actions=output:9")...)
	// What ovs-ofctl prints for Open vSwitch's error: the error, then the
	// request it echoes, decoded.
	want := "OFPT_ERROR (OF1.3) (xid=0x6): OFPBAC_BAD_OUT_PORT\nOFPT_FLOW_MOD (OF1.3) (xid=0x6): ADD in_port=1 actions=output:9\n"
	if err == nil || errs != want {
		t.Errorf("add-flow refused: %v\n%q\nwant\n%q", err, errs, want)
	}
	// A table that does not exist, in a dump.
	out, errs, err := ofctl(t, m.ofctlArgs("-O", "OpenFlow13", "dump-flows", "table=254")...)
	if !strings.Contains(out+errs, "OFPBRC_BAD_TABLE_ID") {
		t.Errorf("dump-flows table=254: %v %q %q", err, out, errs)
	}
}

func TestOfctlBundle(t *testing.T) {
	needOfctl(t)
	br := newFakeBridge()
	m := newTestManager(t, br)
	flows := filepath.Join(t.TempDir(), "flows")
	os.WriteFile(flows, []byte("priority=1,in_port=1,actions=drop\npriority=2,in_port=2,actions=drop\npriority=3,in_port=3,actions=drop\n"), 0o644)
	for _, v := range []string{"OpenFlow13", "OpenFlow14", "OpenFlow15"} {
		mustOfctl(t, m, "-O", v, "--bundle", "add-flows", flows)
	}
	if len(br.bundles) != 3 {
		t.Fatalf("%d bundles committed", len(br.bundles))
	}
	for _, b := range br.bundles {
		if len(b) != 3 || b[0].FlowMod == nil || b[2].FlowMod.Priority != 3 {
			t.Errorf("bundle %+v", b)
		}
	}
	if len(br.recordedFlowMods()) != 0 {
		t.Error("bundled flow mods applied one by one")
	}
	// A bundle whose second message fails: nothing applied, ovs-ofctl
	// reports the failing message's error and the failed commit.
	br.bundleFail = 1
	_, errs, err := ofctl(t, m.ofctlArgs("-O", "OpenFlow14", "--bundle", "add-flows", flows)...)
	if err == nil || !strings.Contains(errs, "Error OFPBAC_BAD_OUT_PORT for: OFPT_FLOW_MOD (OF1.4) (xid=0x") || !strings.Contains(errs, "priority=2,in_port=2 actions=drop") || !strings.Contains(errs, "OFPBFC_MSG_FAILED") {
		t.Errorf("failing bundle: %v\n%s", err, errs)
	}
	if len(br.bundles) != 3 {
		t.Errorf("failed bundle applied")
	}
	// OpenFlow 1.0 has no bundles: ovs-ofctl says so itself.
	if _, _, err := ofctl(t, m.ofctlArgs("-O", "OpenFlow10", "--bundle", "add-flows", flows)...); err == nil {
		t.Error("bundle in OpenFlow 1.0 accepted")
	}
}

func TestOfctlPacketOut(t *testing.T) {
	needOfctl(t)
	br := newFakeBridge()
	m := newTestManager(t, br)
	mustOfctl(t, m, "-O", "OpenFlow13", "packet-out", "in_port=controller packet=ffffffffffffaa55aa5500010806 actions=output:1")
	br.mu.Lock()
	defer br.mu.Unlock()
	if len(br.packetOuts) != 1 || len(br.packetOuts[0].Packet) != 14 || len(br.packetOuts[0].Actions) != 1 {
		t.Errorf("packet outs %+v", br.packetOuts)
	}
}

func TestOfctlStats(t *testing.T) {
	needOfctl(t)
	m := newTestManager(t, newFakeBridge())
	out := mustOfctl(t, m, "-O", "OpenFlow13", "dump-ports")
	if !strings.HasPrefix(out, "OFPST_PORT reply (OF1.3) (xid=0x2): 2 ports\n") || !strings.Contains(out, "port LOCAL: rx pkts=10, bytes=1000") {
		t.Errorf("dump-ports:\n%s", out)
	}
	out = mustOfctl(t, m, "-O", "OpenFlow15", "dump-ports-desc")
	if !strings.Contains(out, " 1(p1): addr:aa:55:aa:55:00:01\n") || !strings.Contains(out, " LOCAL(br0): addr:aa:55:aa:55:00:a2\n") {
		t.Errorf("dump-ports-desc:\n%s", out)
	}
	out = mustOfctl(t, m, "-O", "OpenFlow13", "dump-tables")
	if !strings.Contains(out, "tables 1...253: ditto") {
		t.Errorf("dump-tables:\n%s", out)
	}
	out = mustOfctl(t, m, "-O", "OpenFlow13", "dump-table-features")
	if !strings.Contains(out, `table 253 ("table253"): ditto`) {
		t.Errorf("dump-table-features:\n%.600s", out)
	}
	if out := mustOfctl(t, m, "-O", "OpenFlow13", "queue-stats"); out != "OFPST_QUEUE reply (OF1.3) (xid=0x2): 0 queues\n" {
		t.Errorf("queue-stats: %q", out)
	}
	out, errs, err := ofctl(t, m.ofctlArgs("-O", "OpenFlow13", "dump-ports", "7")...)
	if !strings.Contains(out+errs, "OFPBRC_BAD_PORT") {
		t.Errorf("dump-ports 7: %v %q %q", err, out, errs)
	}
}
