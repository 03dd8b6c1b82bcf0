package connmgr

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const ofctlPath = "/usr/bin/ovs-ofctl"

func needOfctl(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(ofctlPath); err != nil {
		t.Skip("ovs-ofctl not installed")
	}
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// newTestManager starts a Manager for bridge "br0" with its sockets in a
// temporary directory.
func newTestManager(t *testing.T, br Bridge) *Manager {
	t.Helper()
	dir := t.TempDir()
	m, err := New(Config{Name: "br0", RunDir: dir, Bridge: br,
		Logger: slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// ofctl runs ovs-ofctl with args and returns its stdout and stderr.
func ofctl(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ofctlPath, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func TestOfctlProbeOnMgmt(t *testing.T) {
	needOfctl(t)
	m := newTestManager(t, newFakeBridge())
	for _, v := range []string{"OpenFlow10", "OpenFlow13", "OpenFlow15"} {
		out, errs, err := ofctl(t, "-O", v, "probe", "unix:"+m.MgmtPath())
		if err != nil {
			t.Fatalf("%s: ovs-ofctl probe: %v\n%s%s", v, err, out, errs)
		}
	}
}

func TestVersionNegotiationRefused(t *testing.T) {
	needOfctl(t)
	m := newTestManager(t, newFakeBridge())
	m.SetVersions(1 << OF13)
	if _, errs, err := ofctl(t, "-O", "OpenFlow13", "probe", "unix:"+m.MgmtPath()); err != nil {
		t.Fatalf("OpenFlow13 against protocols=OpenFlow13: %v\n%s", err, errs)
	}
	_, errs, err := ofctl(t, "-O", "OpenFlow10", "probe", "unix:"+m.MgmtPath())
	if err == nil {
		t.Fatal("OpenFlow10 against protocols=OpenFlow13 was accepted")
	}
	// What Debian's ovs-vswitchd makes ovs-ofctl print: our HELLO_FAILED
	// text is the one Open vSwitch sends.
	want := "version negotiation failed (we support version 0x01, peer supports version 0x04)"
	if !strings.Contains(errs, want) {
		t.Errorf("ovs-ofctl said %q, want it to contain %q", errs, want)
	}
}

func TestHelloEncodeDecode(t *testing.T) {
	for _, vs := range []Versions{DefaultVersions, 1 << OF13, 1<<OF10 | 1<<OF13, 1<<OF10 | 1<<OF11, 1 << OF15} {
		b := encodeHello(vs, 7)
		got, ok := decodeHello(b)
		if !ok || got != vs {
			t.Errorf("hello for %v decodes as %v (ok %v): % x", vs, got, ok, b)
		}
		contiguous := vs == DefaultVersions || vs == 1<<OF10|1<<OF11 || vs == 1<<OF10
		if contiguous != (len(b) == headerLen) {
			t.Errorf("hello for %v is %d bytes", vs, len(b))
		}
	}
	if s := Versions(1<<OF10 | 1<<OF13).String(); s != "versions 0x01, 0x04" {
		t.Errorf("String: %q", s)
	}
	if s := DefaultVersions.String(); s != "version 0x06 and earlier" {
		t.Errorf("String: %q", s)
	}
	if s := Versions(1 << OF13).String(); s != "version 0x04" {
		t.Errorf("String: %q", s)
	}
}

// testController is an OpenFlow controller listening on TCP for the
// switch's active connection.
type testController struct {
	t     *testing.T
	ln    net.Listener
	conns chan net.Conn
}

func newTestController(t *testing.T) *testController {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tc := &testController{t: t, ln: ln, conns: make(chan net.Conn, 16)}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			tc.conns <- nc
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return tc
}

func (tc *testController) target() string { return "tcp:" + tc.ln.Addr().String() }

// accept waits for the switch's next connection and negotiates.
func (tc *testController) accept(vs Versions) (net.Conn, uint8) {
	tc.t.Helper()
	select {
	case nc := <-tc.conns:
		v, err := negotiate(nc, vs)
		if err != nil {
			tc.t.Fatalf("negotiate: %v", err)
		}
		tc.t.Cleanup(func() { nc.Close() })
		return nc, v
	case <-time.After(10 * time.Second):
		tc.t.Fatal("the switch did not connect")
	}
	return nil, 0
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestActiveControllerReconnects(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	tc := newTestController(t)
	m.SetControllers(map[string]ControllerConfig{tc.target(): {Type: Primary, ProbeInterval: 5 * time.Second}})
	nc, v := tc.accept(1 << OF13)
	if v != OF13 {
		t.Fatalf("negotiated %#x", v)
	}
	waitFor(t, "is_connected", func() bool { return m.ControllerInfo()[tc.target()].IsConnected })
	info := m.ControllerInfo()[tc.target()]
	if info.Status["state"] != "ACTIVE" || info.Role != RoleEqual {
		t.Errorf("connected: %+v", info)
	}
	// A barrier is answered (the controller is admitted by it).
	nc.Write(encodeEcho(OF13, 20, 42, nil))
	reply, err := readMsg(nc)
	if err != nil || parseHeader(reply).Type != 21 || parseHeader(reply).XID != 42 {
		t.Fatalf("barrier reply % x, %v", reply, err)
	}
	waitFor(t, "ControllerConnected", m.ControllerConnected)

	start := time.Now()
	nc.Close()
	waitFor(t, "disconnection", func() bool { return !m.ControllerInfo()[tc.target()].IsConnected })
	info = m.ControllerInfo()[tc.target()]
	if info.Status["last_error"] != "End of file" || info.Status["state"] != "BACKOFF" {
		t.Errorf("after the controller closed: %+v", info)
	}
	if _, ok := info.Status["sec_since_disconnect"]; !ok {
		t.Errorf("no sec_since_disconnect: %+v", info)
	}
	// The connection had lasted longer than its backoff (0): the next
	// attempt comes after 1 s.
	tc.accept(DefaultVersions)
	if d := time.Since(start); d < 900*time.Millisecond || d > 8*time.Second {
		t.Errorf("reconnected after %v, want about 1 s", d)
	}
	if m.ControllerConnected() {
		t.Error("a new connection counts as admitted before it sent anything")
	}
}

func TestActiveControllerBackoffAndStatus(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	// A port nobody listens on.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	target := "tcp:" + ln.Addr().String()
	ln.Close()
	m.SetControllers(map[string]ControllerConfig{target: {Type: Primary, MaxBackoff: 2 * time.Second}})
	waitFor(t, "a failed attempt", func() bool {
		return m.ControllerInfo()[target].Status["last_error"] == "Connection refused"
	})
	info := m.ControllerInfo()[target]
	if info.IsConnected || info.Status["state"] != "BACKOFF" {
		t.Errorf("%+v", info)
	}
	if _, ok := info.Status["sec_since_connect"]; ok {
		t.Errorf("never connected, yet %+v", info)
	}
	// ssl: without SSL configuration fails as Open vSwitch's does.
	m.SetControllers(map[string]ControllerConfig{"ssl:127.0.0.1:1": {Type: Primary}})
	waitFor(t, "ssl failure", func() bool {
		return m.ControllerInfo()["ssl:127.0.0.1:1"].Status["last_error"] == "Protocol not available"
	})
	if _, ok := m.ControllerInfo()[target]; ok {
		t.Error("removed controller still reported")
	}
}

func TestInactivityProbe(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	tc := newTestController(t)
	probe := 300 * time.Millisecond
	m.SetControllers(map[string]ControllerConfig{tc.target(): {Type: Primary, ProbeInterval: probe}})
	nc, v := tc.accept(DefaultVersions)
	start := time.Now()
	// The controller stays silent: an echo request comes after one
	// interval, the disconnection after another.
	b, err := readMsg(nc)
	if err != nil || parseHeader(b).Type != typeEchoRequest || parseHeader(b).Version != v {
		t.Fatalf("expected an echo request, got % x, %v", b, err)
	}
	if d := time.Since(start); d < probe*8/10 {
		t.Errorf("probed after %v", d)
	}
	_, err = readMsg(nc)
	if err == nil {
		t.Fatal("still connected after the probe went unanswered")
	}
	if d := time.Since(start); d < 2*probe*8/10 || d > 2*probe+3*time.Second {
		t.Errorf("disconnected after %v, want about %v", d, 2*probe)
	}
	waitFor(t, "status", func() bool {
		return m.ControllerInfo()[tc.target()].Status["last_error"] == "Connection timed out"
	})

	// A controller that answers stays connected.
	nc, _ = tc.accept(DefaultVersions)
	deadline := time.Now().Add(4 * probe)
	for time.Now().Before(deadline) {
		nc.SetReadDeadline(deadline)
		b, err := readMsg(nc)
		if err != nil {
			break
		}
		if h := parseHeader(b); h.Type == typeEchoRequest {
			nc.Write(encodeEcho(h.Version, typeEchoReply, h.XID, b[headerLen:]))
		}
	}
	if !m.ControllerInfo()[tc.target()].IsConnected {
		t.Error("a controller answering probes was disconnected")
	}
}

func TestSnoop(t *testing.T) {
	needOfctl(t)
	m := newTestManager(t, newFakeBridge())
	tc := newTestController(t)
	m.SetControllers(map[string]ControllerConfig{tc.target(): {Type: Primary}})
	nc, _ := tc.accept(1 << OF13)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, ofctlPath, "snoop", "unix:"+filepath.Join(m.rundir, "br0.snoop"))
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+m.rundir) // its unixctl socket
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cancel()
	t.Cleanup(func() { t.Logf("ovs-ofctl snoop:\n%s", out.String()) })
	var svc *service
	m.do(func() { svc = m.services[tc.target()] })
	waitFor(t, "the snooper", func() bool {
		svc.monMu.Lock()
		defer svc.monMu.Unlock()
		return len(svc.monitors) == 1
	})
	nc.Write(encodeEcho(OF13, 20, 77, nil)) // barrier request
	readMsg(nc)
	waitFor(t, "snooped messages", func() bool {
		s := out.String()
		return strings.Contains(s, "OFPT_BARRIER_REQUEST (OF1.3) (xid=0x4d)") && strings.Contains(s, "OFPT_BARRIER_REPLY (OF1.3) (xid=0x4d)")
	})
}

func TestFailModeDefaultFlow(t *testing.T) {
	br := newFakeBridge()
	m := newTestManager(t, br)
	if len(br.normalFlows()) != 0 {
		t.Fatal("flows before the fail mode was set")
	}
	m.SetFailMode(false)
	if got := br.normalFlows(); !slices.Equal(got, []uint32{0}) {
		t.Fatalf("standalone without controllers: NORMAL flows at %v, want [0]", got)
	}
	m.SetFailMode(true)
	if got := br.normalFlows(); len(got) != 0 {
		t.Fatalf("secure: NORMAL flows at %v", got)
	}
	m.SetFailMode(false)
	// A controller takes the default flow away; fail-open brings a hidden
	// one after three probe intervals without a controller.
	tc := newTestController(t)
	m.SetControllers(map[string]ControllerConfig{tc.target(): {Type: Primary, ProbeInterval: 400 * time.Millisecond}})
	if got := br.normalFlows(); len(got) != 0 {
		t.Fatalf("with a controller: NORMAL flows at %v", got)
	}
	waitFor(t, "fail-open", func() bool { return slices.Equal(br.normalFlows(), []uint32{failOpenPriority}) })
	nc, _ := tc.accept(DefaultVersions)
	nc.Write(encodeEcho(OF15, 20, 1, nil))
	waitFor(t, "recovery", func() bool { return len(br.normalFlows()) == 0 })
	// Removing the controller brings the default flow back.
	m.SetControllers(nil)
	if got := br.normalFlows(); !slices.Equal(got, []uint32{0}) {
		t.Fatalf("controller removed: NORMAL flows at %v, want [0]", got)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestSocketsThatCannotOpenAreNotFatal(t *testing.T) {
	br := newFakeBridge()
	m, err := New(Config{Name: "br0", RunDir: "/nonexistent/gvs-test", Bridge: br})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.SetFailMode(false)
	if got := br.normalFlows(); !slices.Equal(got, []uint32{0}) {
		t.Errorf("NORMAL flows %v without sockets", got)
	}
}
