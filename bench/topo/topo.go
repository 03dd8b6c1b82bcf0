package topo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Addresses of the two end hosts, in the benchmarking range 198.18.0.0/15.
const (
	ClientIP  = "198.18.0.1"
	ServerIP  = "198.18.0.2"
	prefixLen = "/24"
)

// FragTimeSeconds replaces net.ipv4.ipfrag_time (30 s) inside the end-host
// namespaces, so fragments left over from a lossy UDP run do not block
// reassembly in the next one.
const FragTimeSeconds = 2

// NamePrefix is the prefix of every name this package creates; the pid
// follows it.
const NamePrefix = "gb"

// Topo is the set of namespaces and links of one benchmark session.
type Topo struct {
	Prefix string // gb<pid>
	Client string // namespace of the iperf3 client and other senders
	Server string // namespace of the receivers
	Switch string // namespace where a switch joins ClientPort and ServerPort

	ClientDev  string // client's veth end, in Client
	ServerDev  string // server's veth end, in Server
	ClientPort string // outer end of the client's veth, in Switch (switched only)
	ServerPort string // outer end of the server's veth, in Switch (switched only)

	created []string // namespaces created so far
	linked  bool
}

// New names a topology for this process; Create makes it.
func New() *Topo {
	p := NamePrefix + strconv.Itoa(os.Getpid())
	return &Topo{
		Prefix: p, Client: p + "c", Server: p + "s", Switch: p + "w",
		ClientDev: p + "c0", ServerDev: p + "s0", ClientPort: p + "c1", ServerPort: p + "s1",
	}
}

// Create makes the three namespaces with loopback up and a short
// ipfrag_time in the end hosts.
func (t *Topo) Create(ctx context.Context) error {
	for _, ns := range []string{t.Client, t.Server, t.Switch} {
		if err := ip(ctx, "netns", "add", ns); err != nil {
			return err
		}
		t.created = append(t.created, ns)
		if err := ip(ctx, "-n", ns, "link", "set", "lo", "up"); err != nil {
			return err
		}
	}
	for _, ns := range []string{t.Client, t.Server} {
		script := fmt.Sprintf("echo %d > /proc/sys/net/ipv4/ipfrag_time", FragTimeSeconds)
		if _, err := Run(ctx, ns, "sh", "-c", script); err != nil {
			return err
		}
	}
	return nil
}

// LinkDirect joins client and server with one veth pair.
func (t *Topo) LinkDirect(ctx context.Context) error {
	t.linked = true
	if err := ip(ctx, "link", "add", t.ClientDev, "netns", t.Client, "type", "veth", "peer", "name", t.ServerDev, "netns", t.Server); err != nil {
		return err
	}
	return t.configureHosts(ctx)
}

// LinkSwitched gives client and server each a veth pair into the switch
// namespace; the outer ends are up and belong to no switch yet.
func (t *Topo) LinkSwitched(ctx context.Context) error {
	t.linked = true
	if err := ip(ctx, "link", "add", t.ClientDev, "netns", t.Client, "type", "veth", "peer", "name", t.ClientPort, "netns", t.Switch); err != nil {
		return err
	}
	if err := ip(ctx, "link", "add", t.ServerDev, "netns", t.Server, "type", "veth", "peer", "name", t.ServerPort, "netns", t.Switch); err != nil {
		return err
	}
	for _, dev := range []string{t.ClientPort, t.ServerPort} {
		if err := ip(ctx, "-n", t.Switch, "link", "set", dev, "up"); err != nil {
			return err
		}
	}
	return t.configureHosts(ctx)
}

func (t *Topo) configureHosts(ctx context.Context) error {
	for _, h := range []struct{ ns, dev, addr string }{{t.Client, t.ClientDev, ClientIP}, {t.Server, t.ServerDev, ServerIP}} {
		if err := ip(ctx, "-n", h.ns, "addr", "add", h.addr+prefixLen, "dev", h.dev); err != nil {
			return err
		}
		if err := ip(ctx, "-n", h.ns, "link", "set", h.dev, "up"); err != nil {
			return err
		}
	}
	return nil
}

// Unlink deletes every veth this topology may have created, outer ends
// first; missing links are not an error.
func (t *Topo) Unlink(ctx context.Context) error {
	if !t.linked {
		return nil
	}
	var errs []error
	for _, l := range []struct{ ns, dev string }{{t.Switch, t.ClientPort}, {t.Switch, t.ServerPort}, {t.Client, t.ClientDev}, {t.Server, t.ServerDev}} {
		if err := ip(ctx, "-n", l.ns, "link", "del", l.dev); err != nil && !isMissing(err) {
			errs = append(errs, err)
		}
	}
	t.linked = false
	return errors.Join(errs...)
}

// Destroy removes links and namespaces. It uses a fresh context so that it
// still works after the run's context was cancelled.
func (t *Topo) Destroy() error {
	ctx := context.Background()
	t.linked = true
	errs := []error{t.Unlink(ctx)}
	for _, ns := range t.created {
		if err := ip(ctx, "netns", "del", ns); err != nil && !isMissing(err) {
			errs = append(errs, err)
		}
	}
	t.created = nil
	return errors.Join(errs...)
}

func isMissing(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Cannot find device") || strings.Contains(s, "No such file") ||
		strings.Contains(s, "does not exist") || strings.Contains(s, "Cannot open network namespace")
}

// RemoveStale deletes namespaces left by an earlier run of this program
// that died without cleaning up: names with NamePrefix whose pid is gone.
func RemoveStale(ctx context.Context) []string {
	out, err := Run(ctx, "", "ip", "netns", "list")
	if err != nil {
		return nil
	}
	var removed []string
	for _, line := range strings.Split(out, "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		pid, ok := stalePID(name)
		if !ok || processAlive(pid) {
			continue
		}
		if ip(ctx, "netns", "del", name) == nil {
			removed = append(removed, name)
		}
	}
	return removed
}

// stalePID extracts the pid from a name gb<pid><role>, role one of c, s, w.
func stalePID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, NamePrefix)
	if !ok || len(rest) < 2 || !strings.ContainsAny(rest[len(rest)-1:], "csw") {
		return 0, false
	}
	pid, err := strconv.Atoi(rest[:len(rest)-1])
	return pid, err == nil && pid > 0
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
