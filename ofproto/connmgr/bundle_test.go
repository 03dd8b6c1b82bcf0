package connmgr

import (
	"bytes"
	"testing"
	"time"

	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
)

// bundleAdd sends a BUNDLE_ADD_MESSAGE carrying msg (with the add's xid,
// as the message must) and returns the bytes sent.
func (rc *rawConn) bundleAdd(id uint32, flags uint16, msg ofp.Msg) (uint32, []byte) {
	rc.t.Helper()
	rc.xid++
	inner, err := ofp.Encode(rc.version, rc.xid, msg)
	if err != nil {
		rc.t.Fatal(err)
	}
	b, err := ofp.Encode(rc.version, rc.xid, &ofp.BundleAdd{BundleID: id, Flags: flags, Message: inner})
	if err != nil {
		rc.t.Fatal(err)
	}
	if _, err := rc.nc.Write(b); err != nil {
		rc.t.Fatal(err)
	}
	return rc.xid, b
}

func testFlowMod(prio uint16) *ofp.FlowMod {
	return &ofp.FlowMod{Command: ofp.FlowAdd, Priority: prio, BufferID: ofp.BufferNone, OutPort: 0xffff, OutGroup: ofp.GroupAny}
}

func (rc *rawConn) bundleCtl(id uint32, typ, flags uint16) (ofp.Header, ofp.Msg) {
	rc.t.Helper()
	xid := rc.send(&ofp.BundleControl{BundleID: id, Type: typ, Flags: flags})
	h, msg, _ := rc.recv()
	if h.Xid != xid {
		rc.t.Fatalf("reply xid %d to request %d: %+v", h.Xid, xid, msg)
	}
	return h, msg
}

func TestBundles(t *testing.T) {
	for _, vs := range []Versions{1 << OF13, 1 << OF14, 1 << OF15} { // 1.3: the ONF extension
		br := newFakeBridge()
		m := newTestManager(t, br)
		rc := dialMgmt(t, m, vs)
		const flags = ofp.BundleAtomic | ofp.BundleOrdered

		// Open, add, commit: the bridge gets the messages in order, once.
		if _, msg := rc.bundleCtl(1, ofp.BundleOpenRequest, flags); msg.(*ofp.BundleControl).Type != ofp.BundleOpenReply {
			t.Fatalf("%v open: %+v", vs, msg)
		}
		for p := range uint16(3) {
			rc.bundleAdd(1, flags, testFlowMod(p))
		}
		if got := rc.barrier(); len(got) != 0 {
			t.Fatalf("%v: adds answered %+v", vs, got)
		}
		if len(br.committed()) != 0 || len(br.recordedFlowMods()) != 0 {
			t.Fatalf("%v: applied before the commit", vs)
		}
		if _, msg := rc.bundleCtl(1, ofp.BundleCommitRequest, flags); msg.(*ofp.BundleControl).Type != ofp.BundleCommitReply {
			t.Fatalf("%v commit: %+v", vs, msg)
		}
		if len(br.committed()) != 1 || len(br.committed()[0]) != 3 || br.committed()[0][2].FlowMod.Priority != 2 {
			t.Fatalf("%v: committed %+v", vs, br.committed())
		}
		// The bundle is gone after its commit.
		if _, msg := rc.bundleCtl(1, ofp.BundleCommitRequest, flags); msg.(*ofp.Error).Err != ofperr.OFPBFC_BAD_ID {
			t.Errorf("%v second commit: %+v", vs, msg)
		}

		// A failing message: its error for its BUNDLE_ADD_MESSAGE, then
		// OFPBFC_MSG_FAILED for the commit; nothing applied.
		br.setBundleFail(1)
		rc.bundleAdd(2, flags, testFlowMod(10)) // opens bundle 2 implicitly
		badXID, badAdd := rc.bundleAdd(2, flags, testFlowMod(11))
		commitXID := rc.send(&ofp.BundleControl{BundleID: 2, Type: ofp.BundleCommitRequest, Flags: flags})
		h, msg, _ := rc.recv()
		if e, ok := msg.(*ofp.Error); !ok || h.Xid != badXID || e.Err != ofperr.OFPBAC_BAD_OUT_PORT || !bytes.Equal(e.Data, badAdd) {
			t.Fatalf("%v: failing message answered %+v (xid %d, want %d)", vs, msg, h.Xid, badXID)
		}
		if h, msg, _ := rc.recv(); h.Xid != commitXID || msg.(*ofp.Error).Err != ofperr.OFPBFC_MSG_FAILED {
			t.Fatalf("%v: commit answered %+v", vs, msg)
		}
		if len(br.committed()) != 1 {
			t.Fatalf("%v: failed bundle applied", vs)
		}
		br.setBundleFail(-1)

		// Close, then adding is an error that discards the bundle; flags
		// must match.
		rc.bundleCtl(3, ofp.BundleOpenRequest, flags)
		if _, msg := rc.bundleCtl(3, ofp.BundleCloseRequest, flags); msg.(*ofp.BundleControl).Type != ofp.BundleCloseReply {
			t.Fatalf("%v close: %+v", vs, msg)
		}
		rc.bundleAdd(3, flags, testFlowMod(1))
		if _, msg, _ := rc.recv(); msg.(*ofp.Error).Err != ofperr.OFPBFC_BUNDLE_CLOSED {
			t.Errorf("%v add to closed: %+v", vs, msg)
		}
		rc.bundleCtl(4, ofp.BundleOpenRequest, flags)
		if _, msg := rc.bundleCtl(4, ofp.BundleCommitRequest, ofp.BundleAtomic); msg.(*ofp.Error).Err != ofperr.OFPBFC_BAD_FLAGS {
			t.Errorf("%v commit with other flags: %+v", vs, msg)
		}
		rc.bundleCtl(5, ofp.BundleOpenRequest, 0)
		if _, msg := rc.bundleCtl(5, ofp.BundleOpenRequest, 0); msg.(*ofp.Error).Err != ofperr.OFPBFC_BAD_ID {
			t.Errorf("%v open twice: %+v", vs, msg)
		}
		rc.bundleCtl(6, ofp.BundleOpenRequest, 0)
		if _, msg := rc.bundleCtl(6, ofp.BundleDiscardRequest, 0); msg.(*ofp.BundleControl).Type != ofp.BundleDiscardReply {
			t.Errorf("%v discard: %+v", vs, msg)
		}
		// A message that cannot be bundled.
		rc.xid++
		inner, _ := ofp.Encode(rc.version, rc.xid, &ofp.BarrierRequest{})
		b, _ := ofp.Encode(rc.version, rc.xid, &ofp.BundleAdd{BundleID: 7, Message: inner})
		rc.nc.Write(b)
		if _, msg, _ := rc.recv(); msg.(*ofp.Error).Err != ofperr.OFPBFC_MSG_UNSUP {
			t.Errorf("%v barrier in a bundle: %+v", vs, msg)
		}
	}
}

func TestBundleIdleTimeout(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	rc := dialMgmt(t, m, 1<<OF14)
	xid := rc.send(&ofp.BundleControl{BundleID: 9, Type: ofp.BundleOpenRequest})
	rc.recv()
	// Age the bundle instead of waiting 10 s.
	m.do(func() {
		for _, c := range m.conns {
			if b := c.state.bundles[9]; b != nil {
				b.used = b.used.Add(-bundleIdleTimeout)
			}
			m.expireBundles(c)
		}
	})
	h, msg, _ := rc.recv()
	if e, ok := msg.(*ofp.Error); !ok || e.Err != ofperr.OFPBFC_TIMEOUT || h.Xid != xid {
		t.Fatalf("expired bundle: %+v", msg)
	}
}

func TestSlaveCannotUseBundles(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	tc := newTestController(t)
	m.SetControllers(map[string]ControllerConfig{tc.target(): {Type: Primary}})
	nc, v := tc.accept(1 << OF14)
	rc := &rawConn{t: t, nc: nc, version: v}
	rc.send(&ofp.RoleRequest{Role: ofp.RoleSecondary, GenerationID: 1})
	rc.recv()
	if _, msg := rc.bundleCtl(1, ofp.BundleOpenRequest, 0); msg.(*ofp.Error).Err != ofperr.OFPBRC_IS_SECONDARY {
		t.Errorf("slave bundle open: %+v", msg)
	}
}

func TestFlowMonitors(t *testing.T) {
	br := newFakeBridge()
	br.flows = []ofp.FlowStats{{Priority: 5, Cookie: 9, TableID: 0}, {Priority: 6, Cookie: 10, TableID: 2}}
	m := newTestManager(t, br)
	rc := dialMgmt(t, m, 1<<OF14)
	all := ofp.MonitorInitial | ofp.MonitorAdd | ofp.MonitorRemoved | ofp.MonitorModify
	xid := rc.send(&ofp.FlowMonitorRequest{Monitors: []ofp.FlowMonitor{{ID: 1, Flags: all, TableID: 2, OutPort: 0xffff, OutGroup: ofp.GroupAny}}})
	h, msg, _ := rc.recv()
	rep, ok := msg.(*ofp.FlowMonitorReply)
	if !ok || h.Xid != xid || len(rep.Updates) != 1 || rep.Updates[0].Cookie != 10 || rep.Updates[0].Event != ofp.UpdateInitial {
		t.Fatalf("initial: %+v", msg)
	}
	// The same id again: OFPMOFC_MONITOR_EXISTS; an unknown one to
	// delete: OFPMOFC_UNKNOWN_MONITOR.
	rc.send(&ofp.FlowMonitorRequest{Monitors: []ofp.FlowMonitor{{ID: 1, Flags: all, TableID: ofp.TableAll, OutPort: 0xffff, OutGroup: ofp.GroupAny}}})
	if _, msg, _ := rc.recv(); msg.(*ofp.Error).Err != ofperr.OFPMOFC_MONITOR_EXISTS {
		t.Errorf("duplicate monitor: %+v", msg)
	}
	rc.send(&ofp.FlowMonitorRequest{Monitors: []ofp.FlowMonitor{{ID: 8, Command: ofp.MonitorCommandDelete}}})
	if _, msg, _ := rc.recv(); msg.(*ofp.Error).Err != ofperr.OFPMOFC_UNKNOWN_MONITOR {
		t.Errorf("deleting an unknown monitor: %+v", msg)
	}

	// Changes in table 2 are reported (actions only with
	// MonitorInstructions), others not; a change this connection made is
	// abbreviated to its xid.
	var id uint64
	m.do(func() {
		for cid := range m.conns {
			id = cid
		}
	})
	// Reported from a dispatcher call, as the bridge reports the changes
	// of a flow mod: one batch (from another goroutine the run goroutine
	// may deliver them in several, each with its abbreviated update).
	m.do(func() {
		m.FlowChanged(&FlowChange{Update: ofp.FlowUpdate{Event: ofp.UpdateAdded, TableID: 1, Priority: 1}}, Origin{})
		m.FlowChanged(&FlowChange{Update: ofp.FlowUpdate{Event: ofp.UpdateAdded, TableID: 2, Priority: 2}}, Origin{})
		m.FlowChanged(&FlowChange{Update: ofp.FlowUpdate{Event: ofp.UpdateModified, TableID: 2, Priority: 3}}, Origin{Conn: id, XID: 77})
		m.FlowChanged(&FlowChange{Update: ofp.FlowUpdate{Event: ofp.UpdateRemoved, TableID: 2, Priority: 4}, OutputsTo: func(port, group uint32) bool { return true }}, Origin{Conn: id, XID: 78})
	})
	var updates []ofp.FlowUpdate
	for _, msg := range rc.barrier() {
		updates = append(updates, msg.(*ofp.FlowMonitorReply).Updates...)
	}
	if len(updates) != 2 || updates[0].Priority != 2 || updates[0].Event != ofp.UpdateAdded || updates[1].Event != ofp.UpdateAbbrev || updates[1].Xid != 77 {
		t.Errorf("updates: %+v", updates)
	}

	// A monitor on an out port sees only flows that output there.
	rc.send(&ofp.FlowMonitorRequest{Monitors: []ofp.FlowMonitor{{ID: 1, Command: ofp.MonitorCommandModify, Flags: ofp.MonitorAdd, TableID: ofp.TableAll, OutPort: 5, OutGroup: ofp.GroupAny}}})
	rc.recv()
	m.FlowChanged(&FlowChange{Update: ofp.FlowUpdate{Event: ofp.UpdateAdded, Priority: 20}, OutputsTo: func(port, _ uint32) bool { return port == 4 }}, Origin{})
	m.FlowChanged(&FlowChange{Update: ofp.FlowUpdate{Event: ofp.UpdateAdded, Priority: 21}, OutputsTo: func(port, _ uint32) bool { return port == 5 }}, Origin{})
	updates = nil
	for _, msg := range rc.barrier() {
		updates = append(updates, msg.(*ofp.FlowMonitorReply).Updates...)
	}
	if len(updates) != 1 || updates[0].Priority != 21 {
		t.Errorf("out-port monitor: %+v", updates)
	}
	_ = time.Second
}
