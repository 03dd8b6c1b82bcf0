package pstream

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestParseTCP(t *testing.T) {
	cases := []struct {
		arg, network, addr, err string
	}{
		{"", "tcp4", "0.0.0.0:6640", ""},
		{"0", "tcp4", "0.0.0.0:0", ""},
		{"6641:127.0.0.1", "tcp4", "127.0.0.1:6641", ""},
		{"0:0.0.0.0", "tcp4", "0.0.0.0:0", ""},
		{":127.0.0.1", "tcp4", "127.0.0.1:6640", ""},
		{"0:[::1]", "tcp6", "[::1]:0", ""},
		{"0:[::]", "tcp6", "[::]:0", ""},
		{"abc", "", "", `abc: bad port number "abc"`},
		{"99999", "", "", `99999: bad port number "99999"`},
		{"-1", "", "", `-1: bad port number "-1"`},
		{"0:::1", "", "", "0:::1: port must be specified"},
		{"0:[127.0.0.1]", "tcp4", "127.0.0.1:0", ""},
		{"0:[::1", "tcp6", "[::1]:0", ""},
		{"0:[fe80::1%lo]", "tcp6", "[fe80::1%lo]:0", ""},
		{"0:::", "", "", "0:::: port must be specified"},
		{"0:1.2.3", "", "", `0:1.2.3: bad IP address "1.2.3"`},
		{"0:nohost", "", "", `0:nohost: bad IP address "nohost"`},
	}
	for _, c := range cases {
		a, err := ParseTCP(c.arg, 6640)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.arg, err, c.err)
			}
			continue
		}
		if err != nil || a.Network != c.network || a.String() != c.addr {
			t.Errorf("%q: %v %q %v, want %v %q", c.arg, a.Network, a.String(), err, c.network, c.addr)
		}
	}
}

func FuzzParseTCP(f *testing.F) {
	for _, s := range []string{"", "0", "0:127.0.0.1", "0:[::1]", "abc", "0:::1", "1:[", "1:]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		a, err := ParseTCP(arg, 6640)
		if err != nil {
			if !strings.HasPrefix(err.Error(), arg+": ") {
				t.Fatalf("%q: error %q does not name the target", arg, err)
			}
			return
		}
		if a.Port < 0 || a.Port > 65535 || (a.Network == "tcp4") != a.IP.Is4() {
			t.Fatalf("%q: %+v", arg, a)
		}
	})
}

func TestListenTCPLogsOpenVSwitchsLine(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	ln, err := ListenTCP("0:127.0.0.1", 6640, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	want := `level=INFO msg="0:127.0.0.1: listening on port ` + strconv.Itoa(port) + `" module=socket_util` + "\n"
	if buf.String() != want {
		t.Fatalf("log %q, want %q", buf.String(), want)
	}
	// IPv4 only: the same port on ::1 is not this listener.
	if c, err := net.Dial("tcp6", net.JoinHostPort("::1", strconv.Itoa(port))); err == nil {
		c.Close()
		t.Fatal("ptcp:0:127.0.0.1 answers on ::1")
	}

	// A port given is not logged.
	buf.Reset()
	ln2, err := ListenTCP(strconv.Itoa(port)+":[::1]", 6640, logger)
	if err != nil {
		t.Fatal(err)
	}
	ln2.Close()
	if buf.Len() != 0 {
		t.Fatalf("logged a port that was given: %q", buf.String())
	}

	buf.Reset()
	_, err = ListenTCP("0:198.18.0.1", 6640, logger)
	if err == nil {
		t.Skip("198.18.0.1 is assigned on this host")
	}
	if err.Error() != "Cannot assign requested address" || !strings.Contains(buf.String(), `msg="0:198.18.0.1: bind: Cannot assign requested address"`) {
		t.Fatalf("bind failure: %v, log %q", err, buf.String())
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno != syscall.EADDRNOTAVAIL {
		t.Fatalf("the system error is not kept: %#v", err)
	}
}

func TestListenUnixMode(t *testing.T) {
	umask := syscall.Umask(0o027)
	defer syscall.Umask(umask)
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o750 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("mode %v under umask 027, want Srwxr-x---", fi.Mode())
	}
}
