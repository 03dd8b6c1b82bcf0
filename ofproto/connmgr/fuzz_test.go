package connmgr

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"gvs/ofproto/ofp"
)

// FuzzDecodeHello: any HELLO body decodes without panicking, and what we
// encode decodes back to the same versions.
func FuzzDecodeHello(f *testing.F) {
	f.Add(encodeHello(DefaultVersions, 1))
	f.Add(encodeHello(1<<OF10|1<<OF13, 2))
	f.Add([]byte{0x04, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8, 0, 0, 0, 0x12})
	f.Add([]byte{0x06, 0, 0, 12, 0, 0, 0, 1, 0, 1, 0, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < headerLen {
			return
		}
		vs, _ := decodeHello(b)
		if vs&1 != 0 {
			t.Fatalf("version 0 decoded from % x", b)
		}
		if vs != 0 {
			if got, ok := decodeHello(encodeHello(vs, 0)); !ok || got != vs {
				t.Fatalf("%v re-decodes as %v", vs, got)
			}
		}
	})
}

// FuzzReadMsg: the stream framing never panics, never returns a message
// shorter than a header or longer than the stream, and returns exactly the
// length the header says.
func FuzzReadMsg(f *testing.F) {
	f.Add(encodeHello(DefaultVersions, 1))
	f.Add([]byte{1, 0, 0, 4, 0, 0, 0, 0})
	f.Add([]byte{1, 0, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			m, err := readMsg(r)
			if err != nil {
				return
			}
			if len(m) < headerLen || int(parseHeader(m).Length) != len(m) {
				t.Fatalf("message of %d bytes, header says %d", len(m), parseHeader(m).Length)
			}
		}
	})
}

// FuzzDispatch: any message a connection sends is answered or refused,
// never a panic, whatever its version and state.
func FuzzDispatch(f *testing.F) {
	for _, v := range []uint8{OF10, OF13, OF15} {
		for _, msg := range []ofp.Msg{
			&ofp.FeaturesRequest{}, &ofp.GetConfigRequest{}, &ofp.SetConfig{SwitchConfig: ofp.SwitchConfig{Flags: 1, MissSendLen: 0xffff}},
			&ofp.RoleRequest{Role: ofp.RolePrimary, GenerationID: 3}, &ofp.BarrierRequest{}, testFlowMod(3),
			&ofp.BundleControl{BundleID: 1, Type: ofp.BundleOpenRequest}, &ofp.DescRequest{},
			&ofp.FlowStatsRequest{TableID: ofp.TableAll, OutPort: 0xffff, OutGroup: ofp.GroupAny},
			&ofp.FlowMonitorRequest{Monitors: []ofp.FlowMonitor{{ID: 1, Flags: ofp.MonitorInitial, TableID: ofp.TableAll, OutPort: 0xffff, OutGroup: ofp.GroupAny}}},
			&ofp.SetPacketInFormat{Format: 2}, &ofp.SetControllerID{ID: 1}, &ofp.GetAsyncRequest{},
		} {
			if b, err := ofp.Encode(v, 1, msg); err == nil {
				f.Add(b)
			}
		}
	}
	br := newFakeBridge()
	m, err := New(Config{Name: "br0", Bridge: br})
	if err != nil {
		f.Fatal(err)
	}
	defer m.Close()
	svc := &service{m: m, target: "punix:fuzz", cfg: ControllerConfig{Type: Service, QueueSize: 100}}
	conns := map[uint8]*ofconn{}
	for _, v := range []uint8{OF10, OF11, OF12, OF13, OF14, OF15} {
		a, b := net.Pipe()
		go io.Copy(io.Discard, b)
		c := newOfconn(m, svc, a, v, Service, 0, "fuzz")
		c.start()
		m.do(func() { m.conns[c.id] = c })
		conns[v] = c
		defer c.close(nil)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < headerLen || len(b) > maxMsgLen {
			return
		}
		binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
		c := conns[b[0]]
		if c == nil {
			return
		}
		m.do(func() {
			m.handleMessage(c, b)
			m.drainEvents()
		})
	})
}
