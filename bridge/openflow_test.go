package bridge_test

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gvs/bridge/bridgetest"
	"gvs/ofproto/connmgr"
	"gvs/ofproto/connmgr/connmgrtest"
)

// ofDatapath is the fake datapath with fake OpenFlow bridges.
type ofDatapath struct {
	*bridgetest.Datapath
	mu      sync.Mutex
	bridges map[string]*connmgrtest.Bridge
}

func (d *ofDatapath) OpenFlowBridge(name string, _ connmgr.Events) (connmgr.Bridge, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b := &connmgrtest.Bridge{}
	d.bridges[name] = b
	return b, nil
}

func (d *ofDatapath) SetDatapathID(name string, id uint64) {
	d.bridge(name).SetDatapathID(id)
}

func (d *ofDatapath) bridge(name string) *connmgrtest.Bridge {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bridges[name]
}

func newOpenFlowEnv(t *testing.T) (*env, *ofDatapath) {
	if _, err := os.Stat("/usr/bin/ovs-ofctl"); err != nil {
		t.Skip("ovs-ofctl not installed")
	}
	e := newEnv(t)
	ofdp := &ofDatapath{Datapath: e.dp, bridges: map[string]*connmgrtest.Bridge{}}
	e.datapath = ofdp
	e.startReconciler()
	return e, ofdp
}

func (e *env) ofctl(args ...string) (string, error) {
	cmd := exec.Command("/usr/bin/ovs-ofctl", args...)
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+filepath.Dir(e.sock))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// acceptOpenFlow accepts the switch's connection on ln and answers its
// HELLO offering every version; it returns the connection.
func acceptOpenFlow(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := ln.Accept()
		ch <- res{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		// HELLO, OpenFlow 1.5 and earlier.
		r.c.Write([]byte{6, 0, 0, 8, 0, 0, 0, 1})
		var h [8]byte
		if _, err := io.ReadFull(r.c, h[:]); err != nil || h[1] != 0 {
			t.Fatalf("expected HELLO, got % x (%v)", h, err)
		}
		io.CopyN(io.Discard, r.c, int64(binary.BigEndian.Uint16(h[2:]))-8)
		t.Cleanup(func() { r.c.Close() })
		return r.c
	case <-time.After(10 * time.Second):
		t.Fatal("the switch did not connect to the controller")
	}
	return nil
}

func TestControllerTable(t *testing.T) {
	e, ofdp := newOpenFlowEnv(t)
	e.vsctl("add-br", "br0")
	mgmt := filepath.Join(filepath.Dir(e.sock), "br0.mgmt")
	// The mgmt socket answers ovs-ofctl; the bridge got the standalone
	// default flow.
	if out, err := e.ofctl("probe", "unix:"+mgmt); err != nil {
		t.Fatalf("ovs-ofctl probe: %v\n%s", err, out)
	}
	if got := ofdp.bridge("br0").NormalFlows(); !slices.Equal(got, []uint32{0}) {
		t.Fatalf("NORMAL flows at %v, want [0]", got)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	target := "tcp:" + ln.Addr().String()
	e.vsctl("set-controller", "br0", target)
	nc := acceptOpenFlow(t, ln)
	e.eventually("is_connected", func() bool { return e.get("Controller", "br0", "is_connected") == "true" })
	if role := e.get("Controller", "br0", "role"); role != "other" {
		t.Errorf("role %s, want other", role)
	}
	status := e.get("Controller", "br0", "status")
	if !strings.Contains(status, "state=ACTIVE") || !strings.Contains(status, "sec_since_connect=") {
		t.Errorf("status %s", status)
	}
	if got := ofdp.bridge("br0").NormalFlows(); len(got) != 0 {
		t.Errorf("with a controller: NORMAL flows at %v", got)
	}

	nc.Close()
	e.eventually("disconnection", func() bool { return e.get("Controller", "br0", "is_connected") == "false" })
	e.eventually("last_error", func() bool {
		return strings.Contains(e.get("Controller", "br0", "status"), `last_error="End of file"`)
	})
	acceptOpenFlow(t, ln) // it reconnects

	// protocols narrows what the mgmt socket negotiates.
	e.vsctl("set", "bridge", "br0", "protocols=OpenFlow13")
	if out, err := e.ofctl("-O", "OpenFlow10", "probe", "unix:"+mgmt); err == nil {
		t.Errorf("OpenFlow10 accepted with protocols=OpenFlow13:\n%s", out)
	} else if !strings.Contains(out, "version negotiation failed (we support version 0x01, peer supports version 0x04)") {
		t.Errorf("ovs-ofctl: %s", out)
	}
	if out, err := e.ofctl("-O", "OpenFlow13", "probe", "unix:"+mgmt); err != nil {
		t.Errorf("OpenFlow13 refused: %v\n%s", err, out)
	}

	// other_config:datapath-id is the bridge's datapath id.
	e.vsctl("set", "bridge", "br0", "other-config:datapath-id=00000000000000a2")
	if got := e.get("Bridge", "br0", "datapath_id"); got != `"00000000000000a2"` {
		t.Errorf("datapath_id %s", got)
	}
	if got := ofdp.bridge("br0").DatapathID(); got != 0xa2 {
		t.Errorf("the bridge's datapath id is %#x", got)
	}

	// Removing the controller restores the default flow; deleting the
	// bridge removes its sockets.
	e.vsctl("del-controller", "br0")
	if got := ofdp.bridge("br0").NormalFlows(); !slices.Equal(got, []uint32{0}) {
		t.Errorf("controller removed: NORMAL flows at %v, want [0]", got)
	}
	e.vsctl("set", "bridge", "br0", "fail_mode=secure")
	if got := ofdp.bridge("br0").NormalFlows(); len(got) != 0 {
		t.Errorf("secure: NORMAL flows at %v", got)
	}
	e.vsctl("del-br", "br0")
	if _, err := os.Stat(mgmt); !os.IsNotExist(err) {
		t.Errorf("%s after del-br: %v", mgmt, err)
	}
}

// capsDatapath reports its own capabilities.
type capsDatapath struct {
	*bridgetest.Datapath
}

func (capsDatapath) Capabilities() map[string]string {
	return map[string]string{"recirc": "true", "ct_flush": "true"}
}

func TestDatapathCapabilities(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.vsctl("add-br", "br0")
	// The keys Open vSwitch 3.1's get_datapath_cap writes, no more.
	want := []string{"add_mpls", "check_pkt_len", "clone", "ct_clear", "ct_eventmask", "ct_flush", "ct_label", "ct_mark",
		"ct_orig_tuple", "ct_orig_tuple6", "ct_state", "ct_state_nat", "ct_timeout", "ct_zero_snat", "ct_zone",
		"explicit_drop_action", "lb_output_action", "masked_set_action", "max_hash_alg", "max_mpls_depth",
		"max_vlan_headers", "nd_ext", "recirc", "sample_nesting", "tnl_push_pop", "trunc", "ufid"}
	dpRow := e.vsctl("--no-wait", "get", "Open_vSwitch", ".", "datapaths:netdev")
	caps := e.get("Datapath", dpRow, "capabilities")
	var keys []string
	for _, kv := range strings.Split(strings.Trim(caps, "{}"), ", ") {
		keys = append(keys, strings.SplitN(kv, "=", 2)[0])
	}
	slices.Sort(keys)
	if !slices.Equal(keys, want) {
		t.Errorf("capability keys %v,\nwant %v", keys, want)
	}

	// A datapath that knows its capabilities reports them.
	e.stopReconciler()
	e.datapath = capsDatapath{e.dp}
	e.startReconciler()
	e.vsctl("set", "bridge", "br0", "other-config:x=y") // a pass
	e.eventually("the datapath's capabilities", func() bool {
		return e.get("Datapath", dpRow, "capabilities") == `{ct_flush="true", recirc="true"}`
	})
}
