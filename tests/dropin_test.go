package tests

// Side-by-side tests of what issue 14 calls "drop-in" behaviour outside
// the JSON-RPC protocol: the log lines scripts parse, the addresses
// listeners bind, the modes of the files and sockets the server and
// ovsdb-tool create, ovsdb-tool create on a dangling symbolic link, and
// what the Python IDL does across a reconnect. Each runs the same thing
// against Debian's binaries and gvs's and requires the same result.

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonRun is one server process started with arguments of the test's
// choosing under a given umask, in a private directory.
type daemonRun struct {
	kind    serverKind
	dir     string
	db      string
	sock    string
	ctl     string
	logFile string
	pidfile string
	cmd     *exec.Cmd
	stderr  *os.File
	exited  chan struct{}
}

// newDaemonDir makes the private directory and a database created by the
// side's own ovsdb-tool (Debian's or gvs-ovsdb-tool) under umask.
func newDaemonDir(t *testing.T, kind serverKind, umask string) *daemonRun {
	t.Helper()
	dir, err := os.MkdirTemp("", "gvsd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := &daemonRun{
		kind:    kind,
		dir:     dir,
		db:      filepath.Join(dir, "conf.db"),
		sock:    filepath.Join(dir, "db.sock"),
		ctl:     filepath.Join(dir, "ctl"),
		logFile: filepath.Join(dir, "ovsdb-server.log"),
		pidfile: filepath.Join(dir, "ovsdb-server.pid"),
	}
	if out, err := underUmask(umask, toolFor(t, kind), "create", d.db, vswitchSchema).CombinedOutput(); err != nil {
		t.Fatalf("%s: ovsdb-tool create: %v\n%s", kind.name, err, out)
	}
	return d
}

// underUmask is a command that runs binary with args under umask.
func underUmask(umask, binary string, args ...string) *exec.Cmd {
	return exec.Command("/bin/sh", append([]string{"-c", `umask "$0"; exec "$@"`, umask, binary}, args...)...)
}

// toolFor is the side's ovsdb-tool: Debian's for the reference, a
// gvs-ovsdb-tool built for this test for ours.
func toolFor(t *testing.T, kind serverKind) string {
	t.Helper()
	if kind.binary == debianServer {
		return toolPath
	}
	return gvsTool(t)
}

func gvsTool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gvs-ovsdb-tool")
	if out, err := exec.Command("go", "build", "-o", bin, "gvs/cmd/gvs-ovsdb-tool").CombinedOutput(); err != nil {
		t.Fatalf("go build gvs/cmd/gvs-ovsdb-tool: %v\n%s", err, out)
	}
	return bin
}

// start runs the server on d.db with the control socket, pidfile and log
// file in d.dir and the extra arguments, under umask; it returns at once.
func (d *daemonRun) start(t *testing.T, umask string, extra ...string) {
	t.Helper()
	args := append([]string{d.db, "--unixctl=" + d.ctl, "--pidfile=" + d.pidfile, "--log-file=" + d.logFile, "--no-chdir"}, extra...)
	d.cmd = underUmask(umask, d.kind.binary, args...)
	d.cmd.Dir = d.dir
	d.cmd.Env = append(os.Environ(), "OVS_RUNDIR="+d.dir, "OVS_DBDIR="+d.dir, "OVS_LOGDIR="+d.dir)
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var err error
	if d.stderr, err = os.Create(filepath.Join(d.dir, "stderr")); err != nil {
		t.Fatal(err)
	}
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", d.kind.name, err)
	}
	d.exited = make(chan struct{})
	go func() {
		d.cmd.Wait()
		d.stderr.Close()
		close(d.exited)
	}()
	t.Cleanup(func() {
		d.cmd.Process.Kill()
		<-d.exited
		if t.Failed() {
			for _, name := range []string{d.logFile, filepath.Join(d.dir, "stderr")} {
				b, _ := os.ReadFile(name)
				t.Logf("=== %s %s ===\n%s", d.kind.name, filepath.Base(name), b)
			}
		}
	})
}

// waitLog waits until the log file holds a line for which match holds, or
// the process has exited, or the start timeout passes.
func (d *daemonRun) waitLog(t *testing.T, what string, match func(lines []string) bool) []string {
	t.Helper()
	var lines []string
	ok := waitFor(startTimeout, func() bool {
		lines = readLines(d.logFile)
		if match(lines) {
			return true
		}
		select {
		case <-d.exited:
			lines = readLines(d.logFile)
			return true
		default:
			return false
		}
	})
	if !ok || !match(lines) {
		t.Fatalf("%s: %s not in the log within %v:\n%s", d.kind.name, what, startTimeout, strings.Join(lines, "\n"))
	}
	return lines
}

func (d *daemonRun) waitSocket(t *testing.T) {
	t.Helper()
	if !waitFor(startTimeout, func() bool {
		c, err := net.Dial("unix", d.sock)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatalf("%s: %s does not accept connections", d.kind.name, d.sock)
	}
}

func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// listeningPort reads the port of target's listener from the log the way
// Open vSwitch's test suite does (PARSE_LISTENING_PORT in ovs-macros.at:
// the number last on a "...0:...: listening on port N" line): here for the
// line of one target, so that several listeners can be told apart.
func listeningPort(lines []string, target string) (int, bool) {
	re := regexp.MustCompile(`\|socket_util\|INFO\|` + regexp.QuoteMeta(target) + `: listening on port ([0-9]+)$`)
	for _, l := range lines {
		if m := re.FindStringSubmatch(l); m != nil {
			p, _ := strconv.Atoi(m[1])
			return p, true
		}
	}
	return 0, false
}

// Open vSwitch's own PARSE_LISTENING_PORT pattern, as its sed applies it.
var ovsParseListeningPortRE = regexp.MustCompile(`^.*0:.*: listening on port ([0-9]*)$`)

// versionRE is the server's version line, the last of its start-up,
// logged under the same module by both: "ovsdb-server (Open vSwitch) 3.1.0"
// and "gvs-ovsdb-server (gvs) 0.1.0".
var (
	versionRE   = regexp.MustCompile(`^(ovsdb_server\|INFO\|)\S*ovsdb-server \((?:Open vSwitch|gvs)\) \S+$`)
	logPrefixRE = regexp.MustCompile(`^[0-9T:.Z-]+\|[0-9]+\|`)
	portNumRE   = regexp.MustCompile(`port [0-9]+`)
)

// logShape is the lines of the given modules (all lines if none is given)
// with time, sequence number
// and port numbers masked, sorted (Open vSwitch opens its remotes in hash
// order), and with d's directory as $DIR.
func logShape(d *daemonRun, lines []string, modules ...string) []string {
	var out []string
	for _, l := range lines {
		l = logPrefixRE.ReplaceAllString(l, "")
		keep := len(modules) == 0
		for _, m := range modules {
			keep = keep || strings.HasPrefix(l, m+"|")
		}
		if keep {
			l = portNumRE.ReplaceAllString(l, "port N")
			l = versionRE.ReplaceAllString(l, "$1<program and version>")
			out = append(out, strings.ReplaceAll(l, d.dir, "$DIR"))
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

func hasVersionLine(lines []string) bool {
	for _, l := range lines {
		if versionRE.MatchString(logPrefixRE.ReplaceAllString(l, "")) {
			return true
		}
	}
	return false
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// speaksTLS reports whether the listener on 127.0.0.1:port answers a TLS
// client hello with its certificate (a ptcp: listener does not).
func speaksTLS(t *testing.T, port int) bool {
	t.Helper()
	c, err := net.DialTimeout("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sawCert := false
	tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true, VerifyPeerCertificate: func([][]byte, [][]*x509.Certificate) error {
		sawCert = true
		return nil
	}})
	tc.SetDeadline(time.Now().Add(2 * time.Second))
	tc.Handshake()
	return sawCert
}

// freePort is a TCP port on 127.0.0.1 that nothing listens on just now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func dials(network, addr string) bool {
	c, err := net.DialTimeout(network, addr, time.Second)
	if err == nil {
		c.Close()
	}
	return err == nil
}

// selfSignedCert makes a key and a self-signed certificate for pssl:.
func selfSignedCert(t *testing.T) (key, cert string) {
	t.Helper()
	requireTools(t, "/usr/bin/openssl")
	dir := t.TempDir()
	key, cert = filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	out, err := exec.Command("/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
		"-subj", "/CN=dropin", "-keyout", key, "-out", cert).CombinedOutput()
	if err != nil {
		t.Fatalf("openssl: %v\n%s", err, out)
	}
	return key, cert
}

// The listener lines are Open vSwitch's, in module and text
// ("socket_util|INFO|0:127.0.0.1: listening on port N", nothing for
// punix:), the port parses with Open vSwitch's own pattern, stderr at
// start-up holds the same lines and nothing else, and each listener binds
// exactly the address given: ptcp:0 and ptcp:0:0.0.0.0 IPv4 only,
// ptcp:0:[::1] IPv6 only.
func TestDropinListenerLogAndAddresses(t *testing.T) {
	ref, ours := sides(t)
	targets := []string{"0:127.0.0.1", "0", "0:0.0.0.0", "0:[::1]", "0:[127.0.0.1]"}
	type outcome struct {
		logShape, stderrShape []string
		reach                 map[string]bool
	}
	key, cert := selfSignedCert(t)
	var got [2]outcome
	for i, kind := range []serverKind{ref, ours} {
		d := newDaemonDir(t, kind, "022")
		args := []string{"--remote=punix:" + d.sock, "--private-key=" + key, "--certificate=" + cert, "--ca-cert=" + cert}
		for _, tg := range targets {
			args = append(args, "--remote=ptcp:"+tg)
		}
		// pssl: logs the same socket_util line; a port given is not
		// logged at all.
		args = append(args, "--remote=pssl:0:127.0.0.2", "--remote=ptcp:"+strconv.Itoa(freePort(t))+":127.0.0.1")
		targets := append(targets, "0:127.0.0.2")
		d.start(t, "022", args...)
		d.waitSocket(t)
		lines := d.waitLog(t, "every listening line and the version line", func(lines []string) bool {
			if !hasVersionLine(lines) {
				return false
			}
			for _, tg := range targets {
				if _, ok := listeningPort(lines, tg); !ok {
					return false
				}
			}
			return true
		})
		o := outcome{reach: map[string]bool{}}
		o.logShape = logShape(d, lines, "socket_util", "vlog", "ovsdb_jsonrpc_server", "reconnect")
		o.stderrShape = logShape(d, readLines(filepath.Join(d.dir, "stderr")))
		if len(o.stderrShape) == 0 {
			t.Errorf("%s: nothing on stderr at start-up; Open vSwitch logs its listeners there", kind.name)
		}
		for _, tg := range targets {
			port, _ := listeningPort(lines, tg)
			o.reach[tg+" via 127.0.0.1"] = dials("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			o.reach[tg+" via ::1"] = dials("tcp", net.JoinHostPort("::1", strconv.Itoa(port)))
		}
		// Open vSwitch's pattern reads the port of a lone 127.0.0.1 line.
		for _, l := range lines {
			if strings.Contains(l, "|0:127.0.0.1: listening") {
				m := ovsParseListeningPortRE.FindStringSubmatch(l)
				if p, _ := listeningPort(lines, "0:127.0.0.1"); m == nil || m[1] != strconv.Itoa(p) {
					t.Errorf("%s: PARSE_LISTENING_PORT does not read %q", kind.name, l)
				}
			}
		}
		got[i] = o
	}
	if fmt.Sprint(got[0].logShape) != fmt.Sprint(got[1].logShape) {
		t.Errorf("log lines differ:\ndebian: %q\nours:   %q", got[0].logShape, got[1].logShape)
	}
	if fmt.Sprint(got[0].stderrShape) != fmt.Sprint(got[1].stderrShape) {
		t.Errorf("stderr at start-up differs:\ndebian: %q\nours:   %q", got[0].stderrShape, got[1].stderrShape)
	}
	if fmt.Sprint(got[0].reach) != fmt.Sprint(got[1].reach) {
		t.Errorf("reachability differs:\ndebian: %v\nours:   %v", got[0].reach, got[1].reach)
	}
	// What the comparison stands on: Open vSwitch binds exactly the
	// address given.
	for _, k := range []string{"0 via ::1", "0:0.0.0.0 via ::1", "0:[::1] via 127.0.0.1"} {
		if got[0].reach[k] {
			t.Errorf("debian: %s answers; the test's premise is wrong", k)
		}
	}
}

// A remote that does not parse or cannot be bound is reported with Open
// vSwitch's socket_util (and ovsdb_jsonrpc_server) lines.
func TestDropinBadRemoteLogLines(t *testing.T) {
	ref, ours := sides(t)
	unassigned := "198.18.0.1"
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if strings.HasPrefix(a.String(), unassigned+"/") {
				t.Skipf("%s is assigned on this host", unassigned)
			}
		}
	}
	for _, remote := range []string{"ptcp:abc", "ptcp:99999", "ptcp:0:" + unassigned, "ptcp:0:::1", "ptcp:0:[fe80::1%lo]"} {
		// Addresses that parse but cannot be bound here also get
		// ovsdb_jsonrpc_server's "listen failed" line.
		bindFails := strings.Contains(remote, unassigned) || strings.Contains(remote, "fe80::")
		t.Run(remote, func(t *testing.T) {
			var shapes [2][]string
			for i, kind := range []serverKind{ref, ours} {
				d := newDaemonDir(t, kind, "022")
				d.start(t, "022", "--remote="+remote)
				lines := d.waitLog(t, "a socket_util error", func(lines []string) bool {
					return len(logShape(d, lines, "socket_util")) > 0 &&
						(!bindFails || len(logShape(d, lines, "ovsdb_jsonrpc_server")) > 0)
				})
				shapes[i] = logShape(d, lines, "socket_util", "ovsdb_jsonrpc_server")
			}
			if fmt.Sprint(shapes[0]) != fmt.Sprint(shapes[1]) {
				t.Errorf("%s: lines differ:\ndebian: %q\nours:   %q", remote, shapes[0], shapes[1])
			}
		})
	}
}

// The database file (also after the server compacts it), db.sock, the
// control socket, the pidfile and the log file get Open vSwitch's modes
// under each umask: sockets 0770, files 0660
// and the pidfile 0666, less the umask (db.sock is 0750 under Debian's
// service umask 027).
func TestDropinFileModes(t *testing.T) {
	ref, ours := sides(t)
	for _, umask := range []string{"027", "022", "002", "000"} {
		t.Run("umask"+umask, func(t *testing.T) {
			var modes [2]map[string]os.FileMode
			for i, kind := range []serverKind{ref, ours} {
				d := newDaemonDir(t, kind, umask)
				d.start(t, umask, "--remote=punix:"+d.sock)
				d.waitSocket(t)
				waitFor(startTimeout, func() bool { _, err := os.Stat(d.pidfile); return err == nil })
				waitFor(startTimeout, func() bool { _, err := os.Stat(d.ctl); return err == nil })
				m := map[string]os.FileMode{}
				for name, path := range map[string]string{"database": d.db, "db.sock": d.sock, "control socket": d.ctl, "pidfile": d.pidfile, "log file": d.logFile} {
					fi, err := os.Lstat(path)
					if err != nil {
						t.Fatalf("%s: %s: %v", kind.name, name, err)
					}
					m[name] = fi.Mode()
				}
				// Compaction writes a new file under the server's umask.
				if out, err := exec.Command(appctlPath, "-t", d.ctl, "ovsdb-server/compact").CombinedOutput(); err != nil {
					t.Fatalf("%s: compact: %v\n%s", kind.name, err, out)
				}
				fi, err := os.Lstat(d.db)
				if err != nil {
					t.Fatal(err)
				}
				m["database after compaction"] = fi.Mode()
				modes[i] = m
			}
			if fmt.Sprint(modes[0]) != fmt.Sprint(modes[1]) {
				t.Errorf("umask %s: modes differ:\ndebian: %v\nours:   %v", umask, modes[0], modes[1])
			}
		})
	}
}

// ovsdb-tool create on a dangling symbolic link creates the link's target
// (the link stays a link, the target gets the tool's mode), and when the
// target's directory is missing both fail alike.
func TestDropinToolCreateThroughDanglingLink(t *testing.T) {
	requireTools(t, toolPath)
	tools := []struct{ name, path string }{{"debian", toolPath}, {"ours", gvsTool(t)}}
	type outcome struct {
		linkKept, targetMode, dbName string
		missingDir                   result
	}
	var got [2]outcome
	for i, tool := range tools {
		dir := t.TempDir()
		target := filepath.Join(dir, "lib", "conf.db")
		if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "conf.db")
		if err := os.Symlink("lib/conf.db", link); err != nil { // relative, as Debian's package has it
			t.Fatal(err)
		}
		if out, err := underUmask("027", tool.path, "create", link, vswitchSchema).CombinedOutput(); err != nil {
			t.Fatalf("%s create: %v\n%s", tool.name, err, out)
		}
		var o outcome
		dest, err := os.Readlink(link)
		o.linkKept = fmt.Sprint(dest, err)
		if fi, err := os.Lstat(target); err == nil {
			o.targetMode = fi.Mode().String()
		} else {
			o.targetMode = err.Error()
		}
		out, _ := exec.Command(toolPath, "db-name", target).CombinedOutput()
		o.dbName = string(out)

		missing := filepath.Join(dir, "missing")
		if err := os.Symlink(filepath.Join(dir, "nodir", "x.db"), missing); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(tool.path, "create", missing, vswitchSchema)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		r := result{stdout: stdout.String(), stderr: stderr.String(), exit: exitStatus(cmd.ProcessState)}
		r.stderr = strings.ReplaceAll(r.stderr, dir, "$DIR")
		r.stderr = strings.ReplaceAll(r.stderr, filepath.Base(tool.path)+":", "TOOL:")
		r.stderr = timestampRE.ReplaceAllString(r.stderr, "<time>")
		o.missingDir = r
		got[i] = o
	}
	if got[0].dbName != "Open_vSwitch\n" {
		t.Fatalf("debian's create did not create the target: %+v", got[0])
	}
	if got[0].linkKept != got[1].linkKept || got[0].targetMode != got[1].targetMode || got[0].dbName != got[1].dbName {
		t.Errorf("create through a dangling link:\ndebian: %+v\nours:   %+v", got[0], got[1])
	}
	compareResults(t, "create through a link into a missing directory", got[0].missingDir, got[1].missingDir)
}

// The Python IDL across a reconnect, over unix, tcp and tcp6: with no
// transaction history on a standalone database (last-txn-id all zeros) it
// is sent the full state again; the transcript (testdata/idl_reconnect.py)
// must match Debian's. The TCP ports are read from the servers' logs as
// Open vSwitch's tests read them.
func TestDropinPythonIDLReconnect(t *testing.T) {
	requireTools(t, systemPython)
	if out, err := exec.Command(systemPython, "-c", "import ovs.db.idl").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import ovs (install python3-openvswitch): %v\n%s", systemPython, err, out)
	}
	ref, ours := sides(t)
	script, err := filepath.Abs(filepath.Join("testdata", "idl_reconnect.py"))
	if err != nil {
		t.Fatal(err)
	}
	transports := []string{"unix", "tcp", "tcp6", "ssl"}
	key, cert := selfSignedCert(t)
	var res [2]map[string]result
	for i, kind := range []serverKind{ref, ours} {
		d := newDaemonDir(t, kind, "022")
		d.start(t, "022", "--remote=punix:"+d.sock, "--remote=ptcp:0:127.0.0.1", "--remote=ptcp:0:[::1]", "--remote=pssl:0:127.0.0.1",
			"--private-key="+key, "--certificate="+cert, "--ca-cert="+cert)
		d.waitSocket(t)
		lines := d.waitLog(t, "the listening lines", func(lines []string) bool {
			_, ok4 := listeningPort(lines, "0:127.0.0.1")
			_, ok6 := listeningPort(lines, "0:[::1]")
			return ok4 && ok6 && strings.Count(strings.Join(lines, "\n"), "0:127.0.0.1: listening on port") == 2
		})
		port6, _ := listeningPort(lines, "0:[::1]")
		// ptcp: and pssl: on 127.0.0.1 log the same text: which port is
		// TLS is found by trying.
		var ports []int
		re := regexp.MustCompile(`\|0:127\.0\.0\.1: listening on port ([0-9]+)$`)
		for _, l := range lines {
			if m := re.FindStringSubmatch(l); m != nil {
				p, _ := strconv.Atoi(m[1])
				ports = append(ports, p)
			}
		}
		plain, tlsPort := ports[0], ports[1]
		if !speaksTLS(t, tlsPort) {
			plain, tlsPort = tlsPort, plain
		}
		remotes := map[string]string{
			"unix": "unix:" + d.sock,
			"tcp":  "tcp:127.0.0.1:" + strconv.Itoa(plain),
			"tcp6": "tcp:[::1]:" + strconv.Itoa(port6),
			"ssl":  "ssl:127.0.0.1:" + strconv.Itoa(tlsPort),
		}
		res[i] = map[string]result{}
		for _, tr := range transports {
			// Each transport starts from an empty database.
			r, err := runToolInput(&server{dir: d.dir}, strings.NewReader(""), clientPath, "--timeout=5", "transact", remotes["unix"],
				`["Open_vSwitch",{"op":"delete","table":"Bridge","where":[]},{"op":"delete","table":"Open_vSwitch","where":[]}]`)
			if err != nil || r.exit != 0 {
				t.Fatalf("%s %s: emptying the database: %v %v", kind.name, tr, err, r)
			}
			cmd := exec.Command(systemPython, script, remotes[tr], vswitchSchema)
			cmd.Env = append(os.Environ(), "IDL_SSL_KEY="+key, "IDL_SSL_CERT="+cert)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			res[i][tr] = result{stdout: stdout.String(), stderr: stderr.String(), exit: exitStatus(cmd.ProcessState)}
		}
	}
	for _, tr := range transports {
		if r := res[0][tr]; r.exit != 0 || !strings.Contains(r.stdout, "rows sent as new=['br-a', 'br-b']") {
			t.Fatalf("%s: against Debian's server the IDL did not replay the full state (a test bug):\n%s", tr, r)
		}
		compareResults(t, "idl_reconnect.py over "+tr, res[0][tr], res[1][tr])
	}
}

// A database log with a corrupt tail or a record that does not replay is
// reported with Open vSwitch's ERR line, which its tests grep for
// (`syntax error: db: parse error.* in header line "xxx"`, `syntax
// "{"invalid":{}}": unknown table: No table named invalid.`).
func TestDropinCorruptLogLines(t *testing.T) {
	ref, ours := sides(t)
	crap := map[string]string{
		"header": "xxx\n",
		"record": "OVSDB JSON 15 ffbcdae4b0386265f9ea3280dd7c8f0b72a20e56\n{\"invalid\":{}}\n",
	}
	for _, what := range []string{"header", "record"} {
		t.Run(what, func(t *testing.T) {
			var shapes [2][]string
			for i, kind := range []serverKind{ref, ours} {
				d := newDaemonDir(t, kind, "022")
				// The same file for both (offsets are in the message).
				os.Remove(d.db)
				if out, err := exec.Command(toolPath, "create", d.db, vswitchSchema).CombinedOutput(); err != nil {
					t.Fatalf("ovsdb-tool create: %v\n%s", err, out)
				}
				if out, err := exec.Command(toolPath, "transact", d.db, `["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{}}]`).CombinedOutput(); err != nil {
					t.Fatalf("ovsdb-tool transact: %v\n%s", err, out)
				}
				f, err := os.OpenFile(d.db, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(crap[what])
				f.Close()
				d.start(t, "022", "--remote=punix:"+d.sock)
				d.waitSocket(t)
				lines := d.waitLog(t, "the syntax error", func(lines []string) bool {
					return len(logShape(d, lines, "ovsdb_server")) > 1 // the version line and the error
				})
				for _, l := range logShape(d, lines, "ovsdb_server") {
					if strings.Contains(l, "|ERR|") {
						shapes[i] = append(shapes[i], l)
					}
				}
			}
			if len(shapes[0]) == 0 || fmt.Sprint(shapes[0]) != fmt.Sprint(shapes[1]) {
				t.Errorf("ERR lines differ:\ndebian: %q\nours:   %q", shapes[0], shapes[1])
			}
		})
	}
}
