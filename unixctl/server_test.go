package unixctl

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gvs/ovsdb/jsonrpc"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startServer listens in a fresh directory; the socket name is short
// because Unix socket paths are limited to 107 bytes.
func startServer(t *testing.T) (*Server, string) {
	t.Helper()
	s := New(testLogger(t), "test-daemon (gvs) 9.9.9")
	path := filepath.Join(t.TempDir(), "t.ctl")
	if err := s.Listen(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

type client struct {
	conn net.Conn
	r    *jsonrpc.Reader
	w    *jsonrpc.Writer
}

func dial(t *testing.T, path string) *client {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{conn: c, r: jsonrpc.NewReader(c), w: jsonrpc.NewWriter(c)}
}

// call sends one request and returns the reply's result or error text.
func (c *client) call(t *testing.T, method string, params any, id int) (result string, errText string) {
	t.Helper()
	req, err := jsonrpc.NewRequest(method, params, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.w.Write(req); err != nil {
		t.Fatal(err)
	}
	reply, err := c.r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if string(reply.ID) != string(req.ID) {
		t.Fatalf("reply id %s, want %s", reply.ID, req.ID)
	}
	if string(reply.Error) != "null" && len(reply.Error) != 0 {
		if err := json.Unmarshal(reply.Error, &errText); err != nil {
			t.Fatalf("error is not a string: %s", reply.Error)
		}
		return "", errText
	}
	if err := json.Unmarshal(reply.Result, &result); err != nil {
		t.Fatalf("result is not a string: %s", reply.Result)
	}
	return result, ""
}

func TestBuiltins(t *testing.T) {
	s, path := startServer(t)
	s.Register("zzz/last", "ARG", 1, 1, func([]string) (string, error) { return "", nil })
	c := dial(t, path)
	got, errText := c.call(t, "version", []string{}, 1)
	if errText != "" || got != "test-daemon (gvs) 9.9.9\n" {
		t.Fatalf("version: %q %q", got, errText)
	}
	got, _ = c.call(t, "list-commands", []string{}, 2)
	want := "The available commands are:\n" +
		"  list-commands           \n" +
		"  version                 \n" +
		"  zzz/last                ARG\n"
	if got != want {
		t.Fatalf("list-commands:\n%q\nwant\n%q", got, want)
	}
}

func TestErrorsMatchOpenVSwitch(t *testing.T) {
	s, path := startServer(t)
	s.Register("two-or-three", "A B [C]", 2, 3, func(args []string) (string, error) {
		return strings.Join(args, ","), nil
	})
	s.Register("fails", "", 0, 0, func([]string) (string, error) { return "", errors.New("it broke") })
	c := dial(t, path)
	cases := []struct {
		method  string
		params  any
		result  string
		errText string
	}{
		{"no-such", []string{}, "", `"no-such" is not a valid command (use "list-commands" to see a list of valid commands)` + "\n"},
		{"two-or-three", []string{"a"}, "", `"two-or-three" command requires at least 2 arguments` + "\n"},
		{"two-or-three", []string{"a", "b", "c", "d"}, "", `"two-or-three" command takes at most 3 arguments` + "\n"},
		{"two-or-three", []any{"a", 1}, "", `"two-or-three" command has non-string argument` + "\n"},
		{"two-or-three", []string{"a", "b"}, "a,b\n", ""},
		{"fails", []string{}, "", "it broke\n"},
	}
	for i, tc := range cases {
		got, errText := c.call(t, tc.method, tc.params, i)
		if got != tc.result || errText != tc.errText {
			t.Errorf("%s %v: got (%q, %q), want (%q, %q)", tc.method, tc.params, got, errText, tc.result, tc.errText)
		}
	}
}

// The socket has Open vSwitch's mode for unix sockets: 0770 less the
// umask (0750 under Debian's 027); tests/dropin_test.go compares it with
// Debian's ovsdb-server under several umasks.
func TestSocketModeIsOpenVSwitchs(t *testing.T) {
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	_, path := startServer(t)
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := os.FileMode(0o770 &^ umask); fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != want {
		t.Fatalf("mode %v, want a socket with %v", fi.Mode(), want)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".unixctl-*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary directories left behind: %v", leftovers)
	}
}

func TestReplacesStaleSocketButNotFiles(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale.ctl")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	s := New(testLogger(t), "x")
	if err := s.Listen(stale); err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	s.Close()

	regular := filepath.Join(dir, "file")
	if err := os.WriteFile(regular, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := New(testLogger(t), "x")
	if err := s2.Listen(regular); err == nil {
		s2.Close()
		t.Fatal("Listen replaced a regular file")
	}
	if b, _ := os.ReadFile(regular); string(b) != "keep me" {
		t.Fatal("regular file clobbered")
	}
}

// TestCloseLetsRunningCommandReply checks that an "exit"-style command that
// triggers shutdown still gets its reply out.
func TestCloseLetsRunningCommandReply(t *testing.T) {
	s, path := startServer(t)
	started := make(chan struct{})
	release := make(chan struct{})
	s.Register("slow", "", 0, 0, func([]string) (string, error) {
		close(started)
		<-release
		return "done", nil
	})
	c := dial(t, path)
	result := make(chan string, 1)
	go func() {
		req, _ := jsonrpc.NewRequest("slow", []string{}, 1)
		c.w.Write(req)
		reply, err := c.r.Read()
		if err != nil {
			result <- "read error: " + err.Error()
			return
		}
		result <- string(reply.Result)
	}()
	<-started
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a command was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if got := <-result; got != `"done\n"` {
		t.Fatalf("reply: %s", got)
	}
	<-closed
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket file not removed: %v", err)
	}
	if _, err := net.Dial("unix", path); err == nil {
		t.Fatal("still accepting after Close")
	}
}

func TestNonRequestClosesConnection(t *testing.T) {
	_, path := startServer(t)
	c := dial(t, path)
	reply, _ := jsonrpc.NewResult(json.RawMessage("1"), "x")
	c.w.Write(reply)
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.r.Read(); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
}

// TestLongPath checks a socket path longer than sockaddr_un's 108 bytes,
// which ovs-appctl also reaches through /proc/self/fd.
func TestLongPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "long.ctl")
	s := New(testLogger(t), "long")
	if err := s.Listen(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(appctlBin); err == nil {
		if r := appctl(t, path, "version"); r.stdout != "long\n" {
			t.Fatalf("ovs-appctl: %+v", r)
		}
	}
}
