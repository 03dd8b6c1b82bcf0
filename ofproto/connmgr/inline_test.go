package connmgr

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"gvs/ofproto/ofp"
)

// dialMgmt13 connects to the mgmt socket and negotiates OpenFlow 1.3.
func dialMgmt13(t *testing.T, m *Manager) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("unix", m.MgmtPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := nc.Write(encodeHello(1<<OF13, 1)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	if b, err := readMsg(br); err != nil || parseHeader(b).Type != typeHello {
		t.Fatalf("hello: % x, %v", b, err)
	}
	return nc, br
}

func encode(t *testing.T, xid uint32, msg ofp.Msg) []byte {
	t.Helper()
	b, err := ofp.Encode(OF13, xid, msg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRepliesKeepOrderUnderBackpressure: a peer that writes many requests
// before reading gets every reply, in order, whether the reader's
// non-blocking write took it, the socket refused part of it and the
// writer goroutine finished it, or it was an echo answered by the reader
// itself; asynchronous messages queued from other goroutines meanwhile
// arrive whole.
func TestRepliesKeepOrderUnderBackpressure(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	nc, br := dialMgmt13(t, m)
	// A service connection gets asynchronous messages once it sets a
	// miss_send_len.
	setCfg := encode(t, 2, &ofp.SetConfig{SwitchConfig: ofp.SwitchConfig{MissSendLen: 128}})
	barrier := encode(t, 3, &ofp.BarrierRequest{})
	nc.Write(append(setCfg, barrier...))
	if b, err := readMsg(br); err != nil || parseHeader(b).XID != 3 {
		t.Fatalf("barrier reply: % x, %v", b, err)
	}

	const n = 3000
	payload := make([]byte, 1000) // echo replies fill the socket buffer
	go func() {
		w := bufio.NewWriterSize(nc, 1<<16)
		for i := range n {
			xid := uint32(100 + i)
			if i%3 == 0 {
				w.Write(encode(t, xid, &ofp.BarrierRequest{}))
			} else {
				binary.BigEndian.PutUint32(payload, xid)
				w.Write(encodeEcho(OF13, typeEchoRequest, xid, payload))
			}
		}
		w.Flush()
	}()
	var wg sync.WaitGroup
	const async = 200
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range async {
			m.PortStatus(ofp.PortReasonAdd, &ofp.Port{PortNo: uint32(i + 1), Name: "p"})
		}
	}()
	time.Sleep(200 * time.Millisecond) // let the replies back up
	next, ports := uint32(100), 0
	nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	for next < 100+n || ports < async {
		b, err := readMsg(br)
		if err != nil {
			t.Fatalf("after reply %d and %d port statuses: %v", next-100, ports, err)
		}
		h := parseHeader(b)
		switch {
		case h.XID == 0 && h.Type == 12: // OFPT_PORT_STATUS
			ports++
		case h.XID != next:
			t.Fatalf("reply xid %d type %d, want xid %d", h.XID, h.Type, next)
		case h.Type == typeEchoReply && (len(b) != headerLen+len(payload) || binary.BigEndian.Uint32(b[headerLen:]) != next):
			t.Fatalf("echo reply %d carries % x", next, b[headerLen:headerLen+4])
		default:
			next++
		}
	}
	wg.Wait()
}

// TestWantsFlowChangesFollowsMonitors: the bridge is told to report flow
// changes exactly while some connection has a flow monitor.
func TestWantsFlowChangesFollowsMonitors(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	if m.WantsFlowChanges() {
		t.Fatal("a manager without connections wants flow changes")
	}
	nc, br := dialMgmt13(t, m)
	mon := encode(t, 2, &ofp.FlowMonitorRequest{Monitors: []ofp.FlowMonitor{{ID: 1,
		Flags: ofp.MonitorAdd, TableID: ofp.TableAll, OutPort: 0xffff, OutGroup: ofp.GroupAny}}})
	nc.Write(mon)
	if b, err := readMsg(br); err != nil || parseHeader(b).XID != 2 {
		t.Fatalf("monitor reply: % x, %v", b, err)
	}
	if !m.WantsFlowChanges() {
		t.Fatal("a flow monitor does not make the manager want flow changes")
	}
	nc.Write(append(encode(t, 3, &ofp.FlowMonitorCancel{ID: 1}), encode(t, 4, &ofp.BarrierRequest{})...))
	for {
		b, err := readMsg(br)
		if err != nil {
			t.Fatal(err)
		}
		if parseHeader(b).XID == 4 {
			break
		}
	}
	if m.WantsFlowChanges() {
		t.Fatal("still wants flow changes after the monitor was cancelled")
	}
	nc.Write(mon)
	readMsg(br)
	nc.Close()
	deadline := time.Now().Add(5 * time.Second)
	for m.WantsFlowChanges() {
		if time.Now().After(deadline) {
			t.Fatal("still wants flow changes after the monitoring connection closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCloseWithReadersWaiting: Close returns while readers of busy
// connections wait for the dispatcher lock, and nothing is dispatched
// after it.
func TestCloseWithReadersWaiting(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	var conns []net.Conn
	for range 4 {
		nc, _ := dialMgmt13(t, m)
		conns = append(conns, nc)
		go func() {
			for i := 0; ; i++ {
				if _, err := nc.Write(encode(t, uint32(i), &ofp.BarrierRequest{})); err != nil {
					return
				}
			}
		}()
		go io.Copy(io.Discard, nc)
	}
	time.Sleep(50 * time.Millisecond)
	done := make(chan struct{})
	go func() { m.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs with busy connections")
	}
	ran := false
	m.do(func() { ran = true })
	if ran {
		t.Fatal("the dispatcher ran after Close")
	}
}
