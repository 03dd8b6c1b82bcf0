package storagetest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Debian's Open vSwitch tools.
const (
	debianServer  = "/usr/sbin/ovsdb-server"
	ovsdbTool     = "/usr/bin/ovsdb-tool"
	ovsdbClient   = "/usr/bin/ovsdb-client"
	ovsVsctl      = "/usr/bin/ovs-vsctl"
	ovsAppctl     = "/usr/bin/ovs-appctl"
	vswitchSchema = "/usr/share/openvswitch/vswitch.ovsschema"
)

// bin holds the gvs binaries TestMain builds.
var bin struct {
	server, tool, vswitchd string
	err                    error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gvs-storage-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin.server = filepath.Join(dir, "gvs-ovsdb-server")
	bin.tool = filepath.Join(dir, "gvs-ovsdb-tool")
	bin.vswitchd = filepath.Join(dir, "gvs-vswitchd")
	for _, pkg := range []string{"gvs/cmd/gvs-ovsdb-server", "gvs/cmd/gvs-ovsdb-tool", "gvs/cmd/gvs-vswitchd"} {
		if out, err := exec.Command("go", "build", "-o", dir+"/", pkg).CombinedOutput(); err != nil {
			bin.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func needTools(tb testing.TB, paths ...string) {
	tb.Helper()
	if bin.err != nil {
		tb.Fatal(bin.err)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			tb.Skipf("%s not installed", p)
		}
	}
}

// newDir makes a short private directory (unix socket paths are limited).
func newDir(tb testing.TB) string {
	dir, err := os.MkdirTemp("", "gvsst")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// run runs a tool to completion and returns its stdout; a failure is fatal.
func run(tb testing.TB, env []string, name string, args ...string) string {
	tb.Helper()
	out, err := runErr(env, name, args...)
	if err != nil {
		tb.Fatalf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), err)
	}
	return out
}

func runErr(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%v: %s", err, stderr.String())
	}
	return string(out), nil
}

// server is one running OVSDB server (gvs's or Debian's) in a private
// directory, serving one database file on dir/db.sock.
type server struct {
	cmd    *exec.Cmd
	dir    string
	sock   string
	log    string
	waited chan error
}

func (s *server) env() []string {
	return []string{"OVS_RUNDIR=" + s.dir, "OVS_DBDIR=" + s.dir, "OVS_LOGDIR=" + s.dir}
}

// startServer runs binary on dbFile in the foreground (so the test can
// SIGKILL it) and waits until its socket accepts connections.
func startServer(tb testing.TB, binary, dir, dbFile string, extra ...string) *server {
	tb.Helper()
	s, err := startServerErr(binary, dir, dbFile, extra...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.kill() })
	return s
}

func startServerErr(binary, dir, dbFile string, extra ...string) (*server, error) {
	s := &server{dir: dir, sock: filepath.Join(dir, "db.sock"), log: filepath.Join(dir, filepath.Base(binary)+".log"), waited: make(chan error, 1)}
	args := append([]string{dbFile, "--remote=punix:" + s.sock}, extra...)
	return s.start(binary, args, s.env())
}

// startVswitchd runs gvs-vswitchd with its embedded database, which is
// dbDir/conf.db (OVS_DBDIR), serving dir/db.sock, and waits until it
// serves.
func startVswitchd(tb testing.TB, dir, dbDir string) *server {
	tb.Helper()
	s, err := startVswitchdErr(dir, dbDir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.kill() })
	return s
}

func startVswitchdErr(dir, dbDir string) (*server, error) {
	s := &server{dir: dir, sock: filepath.Join(dir, "db.sock"), log: filepath.Join(dir, "gvs-vswitchd.log"), waited: make(chan error, 1)}
	env := []string{"OVS_RUNDIR=" + dir, "OVS_DBDIR=" + dbDir, "OVS_LOGDIR=" + dir}
	return s.start(bin.vswitchd, nil, env)
}

// start runs binary with args and the daemon options every test uses, and
// waits until its socket accepts connections.
func (s *server) start(binary string, args, env []string) (*server, error) {
	dir := s.dir
	os.Remove(s.sock)
	args = append(args, "--log-file="+s.log,
		"--pidfile="+filepath.Join(dir, "server.pid"), "--unixctl="+filepath.Join(dir, "server.ctl"))
	s.cmd = exec.Command(binary, args...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Dir = dir
	var stderr strings.Builder
	s.cmd.Stderr = &stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.waited <- s.cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("unix", s.sock); err == nil {
			c.Close()
			return s, nil
		}
		select {
		case err := <-s.waited:
			s.waited <- err
			return nil, fmt.Errorf("%s exited before serving: %v\n%s", filepath.Base(binary), err, stderr.String())
		case <-time.After(2 * time.Millisecond):
		}
	}
	s.kill()
	return nil, fmt.Errorf("%s did not serve within 15 s", binary)
}

// kill SIGKILLs the server and waits for it.
func (s *server) kill() {
	if s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case err := <-s.waited:
		s.waited <- err
	case <-time.After(10 * time.Second):
	}
}

// stop asks the server to exit through its control socket and waits.
func (s *server) stop(tb testing.TB) {
	tb.Helper()
	if _, err := runErr(nil, ovsAppctl, "-t", filepath.Join(s.dir, "server.ctl"), "exit"); err != nil {
		tb.Logf("ovs-appctl exit: %v", err)
	}
	select {
	case err := <-s.waited:
		s.waited <- err
	case <-time.After(10 * time.Second):
		tb.Fatal("server did not exit")
	}
}

// client is a minimal OVSDB JSON-RPC client: one request at a time,
// answering the server's echo requests.
type client struct {
	conn net.Conn
	dec  *json.Decoder
	w    *bufio.Writer
	id   int
}

func dial(path string) (*client, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	return &client{conn: c, dec: json.NewDecoder(bufio.NewReader(c)), w: bufio.NewWriter(c)}, nil
}

func (c *client) Close() error { return c.conn.Close() }

type rpcMessage struct {
	ID     any             `json:"id"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

var errConnection = errors.New("connection lost")

// call sends one request and returns its result. A lost connection
// returns errConnection (wrapped), so callers can tell "not acknowledged".
func (c *client) call(method string, params any) (json.RawMessage, error) {
	c.id++
	req, _ := json.Marshal(map[string]any{"id": c.id, "method": method, "params": params})
	c.w.Write(req)
	if err := c.w.Flush(); err != nil {
		return nil, fmt.Errorf("%w: %v", errConnection, err)
	}
	for {
		var m rpcMessage
		if err := c.dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("%w: %v", errConnection, err)
		}
		if m.Method == "echo" {
			reply, _ := json.Marshal(map[string]any{"id": m.ID, "result": m.Params, "error": nil})
			c.w.Write(reply)
			c.w.Flush()
			continue
		}
		if m.Method != "" {
			continue // notifications
		}
		if id, ok := m.ID.(float64); !ok || int(id) != c.id {
			continue
		}
		if len(m.Error) > 0 && string(m.Error) != "null" {
			return nil, fmt.Errorf("rpc error %s", m.Error)
		}
		return m.Result, nil
	}
}

// transact runs one transaction and fails unless every operation
// succeeded.
func (c *client) transact(dbName string, ops ...any) ([]map[string]any, error) {
	raw, err := c.call("transact", append([]any{dbName}, ops...))
	if err != nil {
		return nil, err
	}
	var results []map[string]any
	if err := json.Unmarshal(raw, &results); err != nil {
		return nil, err
	}
	for _, r := range results {
		if r != nil && r["error"] != nil {
			return results, fmt.Errorf("transaction failed: %s", raw)
		}
	}
	return results, nil
}
