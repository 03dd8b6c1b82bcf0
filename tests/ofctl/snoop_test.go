package ofctl

import (
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// testController is the smallest OpenFlow 1.3 controller: on each
// connection it says HELLO, asks for the features, sends an echo request
// and one flow mod, answers echo requests, and reads everything else.
// ovs-ofctl snoop prints what it and the switch exchange.
type testController struct {
	ln   net.Listener
	done chan struct{}
}

func startController(tb testing.TB, path string) *testController {
	tb.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		tb.Fatal(err)
	}
	c := &testController{ln: ln, done: make(chan struct{})}
	go c.serve()
	tb.Cleanup(func() {
		ln.Close()
		<-c.done
	})
	return c
}

func (c *testController) serve() {
	defer close(c.done)
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		go c.talk(conn)
	}
}

func ofMsg(typ byte, xid uint32, body []byte) []byte {
	m := make([]byte, 8, 8+len(body))
	m[0], m[1] = 0x04, typ
	binary.BigEndian.PutUint16(m[2:], uint16(8+len(body)))
	binary.BigEndian.PutUint32(m[4:], xid)
	return append(m, body...)
}

func (c *testController) talk(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	const (
		hello, echoRequest, echoReply, featuresRequest, flowMod = 0, 2, 3, 5, 14
	)
	// HELLO with a version bitmap of OpenFlow 1.3 only.
	helloBody := []byte{0, 1, 0, 8, 0, 0, 0, 1 << 4}
	// FLOW_MOD add, table 0, priority 7, match in_port=1, no instructions.
	fm := make([]byte, 40)
	binary.BigEndian.PutUint16(fm[22:], 7)                              // priority
	binary.BigEndian.PutUint32(fm[24:], 0xffffffff)                     // buffer_id: none
	binary.BigEndian.PutUint32(fm[28:], 0xffffffff)                     // out_port: any
	binary.BigEndian.PutUint32(fm[32:], 0xffffffff)                     // out_group: any
	fm = append(fm, 0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0) // OXM in_port=1, padded to 8
	msgs := [][]byte{ofMsg(hello, 1, helloBody), ofMsg(featuresRequest, 2, nil), ofMsg(echoRequest, 3, []byte("ping")), ofMsg(flowMod, 4, fm)}
	for _, m := range msgs {
		if _, err := conn.Write(m); err != nil {
			return
		}
	}
	hdr := make([]byte, 8)
	for {
		if _, err := io.ReadFull(conn, hdr); err != nil {
			return
		}
		body := make([]byte, int(binary.BigEndian.Uint16(hdr[2:]))-8)
		if _, err := io.ReadFull(conn, body); err != nil {
			return
		}
		if hdr[1] == echoRequest {
			conn.Write(ofMsg(echoReply, binary.BigEndian.Uint32(hdr[4:]), body))
		}
	}
}

// TestOpenFlowSnoopAndController: ovs-ofctl snoop shows the exchange with a
// controller from the Controller table, which is_connected and role report.
func TestOpenFlowSnoopAndController(t *testing.T) {
	p := startPair(t, addPortsArgs(1)...)
	p.requireOpenFlow(t)
	for _, s := range []*vswitch{p.ref, p.sut} {
		startController(t, filepath.Join(s.dir, "controller.sock"))
		s.extraPidfiles = append(s.extraPidfiles, filepath.Join(s.dir, "ovs-ofctl.pid"))
	}
	p.compare(t,
		// Without a controller to watch, the switch closes a snooper
		// (ovs-ofctl's message depends on when it notices).
		"ovs-ofctl snoop br0 >/dev/null 2>&1; echo exit=$?",
		"ovs-vsctl set-controller br0 unix:$DIR/controller.sock -- set controller br0 inactivity_probe=0",
		// The controller's flow mod says it is connected.
		"!for i in $(seq 200); do ovs-ofctl dump-flows br0 | grep -q priority=7 && break; sleep 0.01; done",
		"ovs-ofctl --no-stats dump-flows br0",
		"ovs-ofctl snoop br0 --detach --no-chdir --pidfile 2>$DIR/snoop.log",
		"ovs-ofctl add-flow br0 'priority=10,in_port=1,actions=controller'",
		"ovs-appctl netdev-dummy/receive p1 "+icmpFrame,
		"ovs-ofctl mod-port br0 p1 down",
		"!sleep 0.2",
		"noxid:ovs-appctl -t ovs-ofctl exit; sleep 0.1; cat $DIR/snoop.log",
		// The database hears of the connection on the switch's next
		// status update (every few seconds in Open vSwitch).
		"!for i in $(seq 120); do [ \"$(ovs-vsctl get controller br0 is_connected)\" = true ] && break; sleep 0.05; done",
		"ovs-vsctl get controller br0 is_connected role",
		"ovs-vsctl del-controller br0",
		"ovs-vsctl get bridge br0 controller",
	)
}
