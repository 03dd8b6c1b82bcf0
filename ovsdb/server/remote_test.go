package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"gvs/ovsdb/jsonrpc"
)

func TestPunixRemote(t *testing.T) {
	srv, _ := newTestServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "db.sock")
	// A stale socket file from a dead server is replaced.
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	remote := "punix:" + path
	if err := srv.AddRemote(remote); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddRemote(remote); err == nil {
		t.Fatal("same remote added twice")
	}
	// Open vSwitch's mode: 0770 less the umask.
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	fi, err := os.Stat(path)
	if want := os.FileMode(0o770 &^ umask); err != nil || fi.Mode().Perm() != want {
		t.Fatalf("socket mode %v %v, want %v", fi.Mode(), err, want)
	}
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, conn)
	var dbs []string
	c.result(c.call("list_dbs"), &dbs)

	if got := srv.Remotes(); !reflect.DeepEqual(got, []string{remote}) {
		t.Fatalf("Remotes() = %v", got)
	}
	if err := srv.RemoveRemote(remote); err != nil {
		t.Fatal(err)
	}
	c.waitFor(0, 2*time.Second, func(*jsonrpc.Message) bool { return false })
	if !c.isClosed() {
		t.Fatal("session of a removed remote still open")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("socket file left behind: %v", err)
	}
	if len(srv.Remotes()) != 0 {
		t.Fatal("remote still listed")
	}
}

func TestPtcpRemotesAndBoundAddr(t *testing.T) {
	srv, _ := newTestServer(t)
	for _, remote := range []string{"ptcp:0:127.0.0.1", "ptcp:0:[::1]"} {
		if err := srv.AddRemote(remote); err != nil {
			if strings.Contains(remote, "::1") {
				t.Logf("no IPv6 loopback: %v", err)
				continue
			}
			t.Fatal(err)
		}
		addr := srv.BoundAddr(remote)
		if addr == nil || addr.(*net.TCPAddr).Port == 0 {
			t.Fatalf("%s: bound address %v", remote, addr)
		}
		conn, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		c := newClient(t, conn)
		var dbs []string
		c.result(c.call("list_dbs"), &dbs)
	}
	if srv.BoundAddr("ptcp:1") != nil {
		t.Fatal("address of an unknown remote")
	}
	for _, bad := range []string{"tcp:1", "ptcp:x", "ptcp:0:notanip", "pssl:0:127.0.0.1", "nocolon"} {
		if err := srv.AddRemote(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestInactivityProbe(t *testing.T) {
	srv, _ := newTestServer(t)
	srv.probeInterval = 100 * time.Millisecond
	if err := srv.AddRemote("ptcp:0:127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	addr := srv.BoundAddr("ptcp:0:127.0.0.1").String()

	// A client that answers stays connected through several probes.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, conn)
	probe, _ := c.waitFor(0, 2*time.Second, func(m *jsonrpc.Message) bool { return m.IsRequest() && m.Method == "echo" })
	if probe == nil || string(probe.ID) != `"echo"` || string(probe.Params) != "[]" {
		t.Fatalf("probe %+v", probe)
	}
	time.Sleep(500 * time.Millisecond)
	if c.isClosed() {
		t.Fatal("answering client was dropped")
	}

	// A silent client is dropped after two intervals.
	conn2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	silent := newClient(t, conn2)
	silent.answerEcho = false
	start := time.Now()
	silent.waitFor(0, 3*time.Second, func(*jsonrpc.Message) bool { return false })
	if !silent.isClosed() {
		t.Fatal("silent client not dropped")
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("dropped after only %v", d)
	}

	// Unix socket sessions are not probed, as in Open vSwitch.
	path := filepath.Join(t.TempDir(), "s")
	if err := srv.AddRemote("punix:" + path); err != nil {
		t.Fatal(err)
	}
	conn3, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	u := newClient(t, conn3)
	u.answerEcho = false
	time.Sleep(400 * time.Millisecond)
	if u.isClosed() || u.count() != 0 {
		t.Fatal("unix session was probed")
	}
}

// testPKI writes a CA, a server certificate and a client certificate.
func testPKI(t *testing.T, dir string) (caFile, srvCert, srvKey, cliCert, cliKey string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	issue := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			KeyUsage: x509.KeyUsageDigitalSignature,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
		return write(name+"-cert.pem", "CERTIFICATE", der), write(name+"-key.pem", "PRIVATE KEY", keyDER)
	}
	caFile = write("ca.pem", "CERTIFICATE", caDER)
	srvCert, srvKey = issue("server", 2, x509.ExtKeyUsageServerAuth)
	cliCert, cliKey = issue("client", 3, x509.ExtKeyUsageClientAuth)
	return
}

func TestSSLRemote(t *testing.T) {
	srv, _ := newTestServer(t)
	dir := t.TempDir()
	caFile, srvCert, srvKey, cliCert, cliKey := testPKI(t, dir)
	if err := srv.SetTLS(TLSFiles{PrivateKey: srvKey, Certificate: srvCert, CACert: caFile}); err != nil {
		t.Fatal(err)
	}
	remote := "pssl:0:127.0.0.1"
	if err := srv.AddRemote(remote); err != nil {
		t.Fatal(err)
	}
	addr := srv.BoundAddr(remote).String()
	caPEM, _ := os.ReadFile(caFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(cliCert, cliKey)
	if err != nil {
		t.Fatal(err)
	}

	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, conn)
	var dbs []string
	c.result(c.call("list_dbs"), &dbs)
	if len(dbs) != 2 {
		t.Fatalf("list_dbs over SSL: %v", dbs)
	}

	// Without a client certificate the server refuses the session.
	conn2, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err == nil {
		c2 := newClient(t, conn2)
		c2.send("list_dbs", 1)
		c2.waitFor(0, 2*time.Second, func(m *jsonrpc.Message) bool { return m.IsResponse() })
		if !c2.isClosed() || c2.count() != 0 {
			t.Fatal("session without client certificate served")
		}
	}
	if err := srv.SetTLS(TLSFiles{PrivateKey: srvKey, Certificate: srvCert, CACert: filepath.Join(dir, "missing")}); err == nil {
		t.Fatal("missing CA file accepted")
	}
}
