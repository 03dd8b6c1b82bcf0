package connmgr

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
)

// ofctlArgs are ovs-ofctl's arguments for args against the Manager's
// mgmt socket: the socket goes after the command (options first).
func (m *Manager) ofctlArgs(args ...string) []string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if args[i] == "-O" {
			i++
		}
		i++
	}
	out := append([]string(nil), args[:i+1]...)
	out = append(out, "unix:"+m.MgmtPath())
	return append(out, args[i+1:]...)
}

func mustOfctl(t *testing.T, m *Manager, args ...string) string {
	t.Helper()
	out, errs, err := ofctl(t, m.ofctlArgs(args...)...)
	if err != nil {
		t.Fatalf("ovs-ofctl %v: %v\n%s%s", args, err, out, errs)
	}
	return out
}

func TestOfctlShow(t *testing.T) {
	needOfctl(t)
	m := newTestManager(t, newFakeBridge())
	got := mustOfctl(t, m, "-O", "OpenFlow10", "show")
	// What ovs-ofctl prints for these features and ports; the two
	// replies come in answer to its FEATURES_REQUEST and GET_CONFIG.
	want := `OFPT_FEATURES_REPLY (xid=0x2): dpid:00000000000000a2
n_tables:254, n_buffers:0
capabilities: FLOW_STATS TABLE_STATS PORT_STATS QUEUE_STATS ARP_MATCH_IP
actions: output enqueue set_vlan_vid set_vlan_pcp strip_vlan mod_dl_src mod_dl_dst mod_nw_src mod_nw_dst mod_nw_tos mod_tp_src mod_tp_dst
 1(p1): addr:aa:55:aa:55:00:01
     config:     0
     state:      0
     speed: 0 Mbps now, 0 Mbps max
 LOCAL(br0): addr:aa:55:aa:55:00:a2
     config:     PORT_DOWN
     state:      0
     speed: 0 Mbps now, 0 Mbps max
OFPT_GET_CONFIG_REPLY (xid=0x4): frags=normal miss_send_len=0
`
	if got != want {
		t.Errorf("ovs-ofctl show:\n%s\nwant:\n%s", got, want)
	}
	if got := mustOfctl(t, m, "-O", "OpenFlow13", "dump-desc"); !strings.Contains(got, "Manufacturer: gvs\n") || !strings.Contains(got, "DP Description: br0\n") {
		t.Errorf("dump-desc:\n%s", got)
	}
}

func TestOfctlFrags(t *testing.T) {
	needOfctl(t)
	br := newFakeBridge()
	m := newTestManager(t, br)
	mustOfctl(t, m, "set-frags", "drop")
	if got := strings.TrimSpace(mustOfctl(t, m, "get-frags")); got != "drop" {
		t.Errorf("get-frags after set-frags drop: %q", got)
	}
	// A mode the bridge refuses is kept out, as Open vSwitch does: the
	// command sees the old mode and complains.
	_, errs, err := ofctl(t, m.ofctlArgs("set-frags", "reassemble")...)
	if err == nil || !strings.Contains(errs, `setting fragment handling mode failed (this switch probably doesn't support mode "reassemble")`) {
		t.Errorf("set-frags reassemble: %v %s", err, errs)
	}
}

func TestOfctlDumpFlowsReplyMore(t *testing.T) {
	needOfctl(t)
	br := newFakeBridge()
	const n = 3000 // several 64 kB replies in every version
	for i := range n {
		br.flows = append(br.flows, ofp.FlowStats{Priority: uint16(i), Cookie: uint64(i), PacketCount: uint64(i), ByteCount: 64 * uint64(i), IdleAge: -1, HardAge: -1})
	}
	m := newTestManager(t, br)
	for _, v := range []string{"OpenFlow10", "OpenFlow13", "OpenFlow15"} {
		out := mustOfctl(t, m, "-O", v, "dump-flows")
		var prios []string
		for _, line := range strings.Split(out, "\n") {
			if i := strings.Index(line, "priority="); i >= 0 {
				f := strings.FieldsFunc(line[i+len("priority="):], func(r rune) bool { return r == ' ' || r == ',' })
				prios = append(prios, f[0])
			}
		}
		if len(prios) != n {
			t.Errorf("%s: %d flows listed, want %d:\n%.2000s", v, len(prios), n, out)
			continue
		}
		if prios[0] != "0" || prios[n-1] != "2999" {
			t.Errorf("%s: flows %s..%s", v, prios[0], prios[n-1])
		}
	}
	out := mustOfctl(t, m, "-O", "OpenFlow13", "dump-aggregate")
	if !strings.Contains(out, "flow_count=3000") {
		t.Errorf("dump-aggregate: %s", out)
	}
}

// rawConn is a test client speaking OpenFlow over the mgmt socket or as a
// controller.
type rawConn struct {
	t       *testing.T
	nc      net.Conn
	version uint8
	xid     uint32
}

func dialMgmt(t *testing.T, m *Manager, vs Versions) *rawConn {
	t.Helper()
	nc, err := net.Dial("unix", m.MgmtPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	v, err := negotiate(nc, vs)
	if err != nil {
		t.Fatal(err)
	}
	return &rawConn{t: t, nc: nc, version: v}
}

// send encodes msg and returns its xid.
func (rc *rawConn) send(msg ofp.Msg) uint32 {
	rc.t.Helper()
	rc.xid++
	b, err := ofp.Encode(rc.version, rc.xid, msg)
	if err != nil {
		rc.t.Fatal(err)
	}
	if _, err := rc.nc.Write(b); err != nil {
		rc.t.Fatal(err)
	}
	return rc.xid
}

// recv reads and decodes the next message that is not an echo request.
func (rc *rawConn) recv() (ofp.Header, ofp.Msg, []byte) {
	rc.t.Helper()
	for {
		rc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := readMsg(rc.nc)
		if err != nil {
			rc.t.Fatal(err)
		}
		h, msg, err := ofp.Decode(b)
		if err != nil {
			rc.t.Fatalf("cannot decode % x: %v", b, err)
		}
		if _, echo := msg.(*ofp.EchoRequest); !echo {
			return h, msg, b
		}
	}
}

// barrier sends a barrier and returns what came before its reply.
func (rc *rawConn) barrier() []ofp.Msg {
	rc.t.Helper()
	xid := rc.send(&ofp.BarrierRequest{})
	var got []ofp.Msg
	for {
		h, msg, _ := rc.recv()
		if _, ok := msg.(*ofp.BarrierReply); ok && h.Xid == xid {
			return got
		}
		got = append(got, msg)
	}
}

func TestErrorEchoesRequest(t *testing.T) {
	br := newFakeBridge()
	br.flowModErr = ofperr.OFPBAC_BAD_OUT_PORT
	m := newTestManager(t, br)
	for _, vs := range []Versions{1 << OF10, 1 << OF13, 1 << OF15} {
		rc := dialMgmt(t, m, vs)
		xid := rc.send(&ofp.FlowMod{Command: ofp.FlowAdd, TableID: 0, Priority: 7, BufferID: ofp.BufferNone, OutPort: 0xffff, OutGroup: ofp.GroupAny, NewCookie: 0, CookieMask: 0})
		h, msg, _ := rc.recv()
		e, ok := msg.(*ofp.Error)
		if !ok || h.Xid != xid || e.Err != ofperr.OFPBAC_BAD_OUT_PORT {
			t.Fatalf("%v: got %T %+v (xid %d, want %d)", vs, msg, msg, h.Xid, xid)
		}
		// The whole request is echoed, and it decodes as what was sent.
		_, fm, err := ofp.Decode(e.Data)
		if err != nil {
			t.Fatalf("%v: echoed request does not decode: %v", vs, err)
		}
		if f, ok := fm.(*ofp.FlowMod); !ok || f.Priority != 7 {
			t.Errorf("%v: echoed %+v", vs, fm)
		}
	}
}

func TestBadRequestsGetOVSErrors(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	rc := dialMgmt(t, m, 1<<OF13)
	// A HELLO after the negotiation is not a request.
	xid := rc.send(&ofp.Hello{Versions: 1 << OF13})
	if h, msg, _ := rc.recv(); h.Xid != xid || msg.(*ofp.Error).Err != ofperr.OFPBRC_BAD_TYPE {
		t.Errorf("hello: %+v", msg)
	}
	// A message of another version: OFPBRC_BAD_VERSION in that version,
	// and the connection stays.
	b, _ := ofp.Encode(OF10, 99, &ofp.FeaturesRequest{})
	rc.nc.Write(b)
	h, msg, _ := rc.recv()
	if h.Version != OF10 || h.Xid != 99 || msg.(*ofp.Error).Err != ofperr.OFPBRC_BAD_VERSION {
		t.Errorf("wrong version: %+v %+v", h, msg)
	}
	// A truncated message: OFPBRC_BAD_LEN.
	b, _ = ofp.Encode(OF13, 100, &ofp.SetConfig{})
	b = b[:len(b)-1]
	b[3]--
	rc.nc.Write(b)
	if h, msg, _ := rc.recv(); h.Xid != 100 || msg.(*ofp.Error).Err != ofperr.OFPBRC_BAD_LEN {
		t.Errorf("short set-config: %+v", msg)
	}
	rc.barrier()
}

func TestRolesAndSlaveRejection(t *testing.T) {
	br := newFakeBridge()
	m := newTestManager(t, br)
	tc := newTestController(t)
	tc2 := newTestController(t)
	m.SetControllers(map[string]ControllerConfig{
		tc.target():  {Type: Primary},
		tc2.target(): {Type: Primary},
	})
	nc1, v1 := tc.accept(1 << OF13)
	nc2, v2 := tc2.accept(1 << OF13)
	a := &rawConn{t: t, nc: nc1, version: v1}
	b := &rawConn{t: t, nc: nc2, version: v2}

	// a becomes master with generation 5; b asks for master with an
	// older generation: stale.
	a.send(&ofp.RoleRequest{Role: ofp.RolePrimary, GenerationID: 5})
	if _, msg, _ := a.recv(); msg.(*ofp.RoleReply).Role != ofp.RolePrimary || msg.(*ofp.RoleReply).GenerationID != 5 {
		t.Fatalf("role reply %+v", msg)
	}
	b.send(&ofp.RoleRequest{Role: ofp.RolePrimary, GenerationID: 4})
	if _, msg, _ := b.recv(); msg.(*ofp.Error).Err != ofperr.OFPRRFC_STALE {
		t.Fatalf("stale request answered %+v", msg)
	}
	// b takes over with a newer generation: a is told it is now a slave.
	b.send(&ofp.RoleRequest{Role: ofp.RolePrimary, GenerationID: 6})
	if _, msg, _ := b.recv(); msg.(*ofp.RoleReply).Role != ofp.RolePrimary {
		t.Fatalf("role reply %+v", msg)
	}
	if _, msg, _ := a.recv(); msg.(*ofp.RoleStatus).Role != ofp.RoleSecondary || msg.(*ofp.RoleStatus).Reason != ofp.RoleReasonPrimaryRequest {
		t.Fatalf("role status %+v", msg)
	}
	// A slave may not modify the switch.
	xid := a.send(&ofp.FlowMod{Command: ofp.FlowAdd, BufferID: ofp.BufferNone, OutPort: 0xffff, OutGroup: ofp.GroupAny})
	if h, msg, _ := a.recv(); h.Xid != xid || msg.(*ofp.Error).Err != ofperr.OFPBRC_IS_SECONDARY {
		t.Fatalf("slave flow mod answered %+v", msg)
	}
	if len(br.recordedFlowMods()) != 0 {
		t.Fatal("the slave's flow mod reached the bridge")
	}
	// The master gets packet-ins; the slave does not (default async
	// config).
	m.PacketIn(&ofp.PacketIn{Packet: make([]byte, 64), Reason: ReasonAction})
	if got := b.barrier(); len(got) != 1 {
		t.Errorf("master got %d messages before the barrier: %+v", len(got), got)
	} else if pin, ok := got[0].(*ofp.PacketIn); !ok || len(pin.Packet) != 64 || pin.Reason != ofp.ReasonAction || pin.BufferID != ofp.BufferNone {
		t.Errorf("master got %+v", got[0])
	}
	if got := a.barrier(); len(got) != 0 {
		t.Errorf("slave got %+v", got)
	}
	waitFor(t, "roles in the Controller status", func() bool {
		info := m.ControllerInfo()
		return info[tc.target()].Role == RoleSlave && info[tc2.target()].Role == RoleMaster
	})
}

func TestAsyncDelivery(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	// A service connection (the mgmt socket) gets nothing until it sets
	// a miss_send_len.
	svc := dialMgmt(t, m, 1<<OF13)
	m.PortStatus(ofp.PortReasonAdd, &ofp.Port{PortNo: 9, Name: "p9"})
	if got := svc.barrier(); len(got) != 0 {
		t.Fatalf("service connection got %+v", got)
	}
	svc.send(&ofp.SetConfig{SwitchConfig: ofp.SwitchConfig{MissSendLen: 128}})
	svc.barrier()

	// Port status: to everyone; a modification that changes nothing is
	// not sent; a port mod's own connection (before 1.5) does not hear of it.
	p := ofp.Port{PortNo: 9, Name: "p9"}
	m.PortChanged(ofp.PortReasonModify, &p, &p, Origin{})
	m.PortStatus(ofp.PortReasonAdd, &p)
	var svcID uint64
	m.do(func() {
		for id := range m.conns {
			svcID = id
		}
	})
	m.PortChanged(ofp.PortReasonDelete, nil, &p, Origin{Conn: svcID})
	got := svc.barrier()
	if len(got) != 1 || got[0].(*ofp.PortStatus).Reason != ofp.PortReasonAdd || got[0].(*ofp.PortStatus).Desc.Name != "p9" {
		t.Errorf("port status: %+v", got)
	}

	// Packet-ins: the reason each version knows; only for the controller
	// id the connection set.
	m.PacketIn(&ofp.PacketIn{Packet: []byte{1, 2, 3}, Reason: ReasonExplicitMiss})
	m.PacketIn(&ofp.PacketIn{Packet: []byte{1, 2, 3}, Reason: ReasonGroup})
	m.PacketInTo(5, &ofp.PacketIn{Packet: []byte{1, 2, 3}, Reason: ReasonAction})
	got = svc.barrier()
	if len(got) != 2 || got[0].(*ofp.PacketIn).Reason != ofp.ReasonNoMatch || got[1].(*ofp.PacketIn).Reason != ofp.ReasonAction {
		t.Errorf("packet-ins: %+v", got)
	}

	// Flow removed: masters get the version's reasons.
	m.FlowRemoved(&ofp.FlowRemoved{Reason: ofp.RemovedIdleTimeout, Priority: 3, TableID: 1})
	got = svc.barrier()
	if len(got) != 1 || got[0].(*ofp.FlowRemoved).Priority != 3 {
		t.Errorf("flow removed: %+v", got)
	}
}

func TestWireReason(t *testing.T) {
	for _, c := range []struct {
		r, v, want uint8
	}{
		{ReasonNoMatch, OF10, ReasonNoMatch},
		{ReasonExplicitMiss, OF10, ReasonAction},
		{ReasonExplicitMiss, OF13, ReasonNoMatch},
		{ReasonImplicitMiss, OF12, ReasonNoMatch},
		{ReasonGroup, OF13, ReasonAction},
		{ReasonGroup, OF14, ReasonGroup},
		{ReasonPacketOut, OF15, ReasonPacketOut},
		{ReasonInvalidTTL, OF10, ReasonInvalidTTL},
	} {
		if got := wireReason(c.r, c.v); got != c.want {
			t.Errorf("reason %d in %#x: %d, want %d", c.r, c.v, got, c.want)
		}
	}
}

func TestDefaultAsyncConfig(t *testing.T) {
	// Open vSwitch's ofputil_async_cfg_default, bit for bit.
	ac := DefaultAsyncConfig(OF10)
	if ac.Primary[AsyncPacketIn] != 0xfb || ac.Primary[AsyncPortStatus] != 7 || ac.Secondary[AsyncPortStatus] != 7 || ac.Primary[AsyncFlowRemoved] != 7 || ac.Secondary[AsyncPacketIn] != 0 {
		t.Errorf("OF1.0: %+v", ac)
	}
	ac = DefaultAsyncConfig(OF13)
	if ac.Primary[AsyncPacketIn] != 0x7b || ac.Primary[AsyncFlowRemoved] != 0xf {
		t.Errorf("OF1.3: %+v", ac)
	}
	if ac := DefaultAsyncConfig(OF15); ac.Primary[AsyncFlowRemoved] != 0x3f {
		t.Errorf("OF1.5: %+v", ac)
	}
}

func TestOfctlMonitorGetsPacketIns(t *testing.T) {
	needOfctl(t)
	m := newTestManager(t, newFakeBridge())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, ofctlPath, "-O", "OpenFlow10", "monitor", "unix:"+m.MgmtPath(), "65534")
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+m.rundir)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cancel()
	// Once its SET_CONFIG is in, the monitor gets packet-ins.
	waitFor(t, "the monitor's miss_send_len", func() bool {
		ok := false
		m.do(func() {
			for _, c := range m.conns {
				ok = ok || c.state.missSendLen == 65534
			}
		})
		return ok
	})
	pkt := make([]byte, 60)
	copy(pkt, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xaa, 0x55, 0xaa, 0x55, 0, 1, 0x08, 0x06})
	m.PacketIn(&ofp.PacketIn{Packet: pkt, Reason: ReasonNoMatch})
	t.Cleanup(func() { t.Logf("ovs-ofctl monitor:\n%s", out.String()) })
	// ovs-ofctl monitor asks for NXT_PACKET_IN2 first.
	waitFor(t, "the packet-in", func() bool {
		return strings.Contains(out.String(), "NXT_PACKET_IN2 (xid=0x0): cookie=0x0 total_len=60 ") && strings.Contains(out.String(), "(via no_match) data_len=60 (unbuffered)")
	})
	if !strings.Contains(out.String(), "arp,vlan_tci=0x0000,dl_src=aa:55:aa:55:00:01,dl_dst=ff:ff:ff:ff:ff:ff,") {
		t.Errorf("monitor:\n%s", out.String())
	}
}

func TestWantsPacketInOnMiss(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	if m.WantsPacketInOnMiss() {
		t.Fatal("wants packet-ins on miss with no connection")
	}
	rc := dialMgmt(t, m, 1<<OF13)
	rc.barrier()
	if m.WantsPacketInOnMiss() {
		t.Fatal("an OpenFlow 1.3 connection wants packet-ins on miss")
	}
	rc10 := dialMgmt(t, m, 1<<OF10)
	rc10.barrier()
	if !m.WantsPacketInOnMiss() {
		t.Fatal("an OpenFlow 1.0 connection does not want packet-ins on miss")
	}
	// With a controller id it is not the one table misses go to.
	rc10.send(&ofp.SetControllerID{ID: 3})
	rc10.barrier()
	if m.WantsPacketInOnMiss() {
		t.Fatal("controller id 3 still wants packet-ins on miss")
	}
}

func TestWireCapabilities(t *testing.T) {
	// What Open vSwitch's handle_features_request sends in each version.
	ovs := CapFlowStats | CapTableStats | CapPortStats | CapQueueStats | CapGroupStats | CapBundles | CapARPMatchIP
	for v, want := range map[uint8]uint32{OF10: 0xc7, OF11: 0xcf, OF12: 0x4f, OF13: 0x4f, OF14: 0x24f, OF15: 0x24f} {
		if got := wireCapabilities(ovs, v); got != want {
			t.Errorf("version %#x: %#x, want %#x", v, got, want)
		}
	}
}
