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

// FlowSenders is how many hosts send in the new-flow test: the client and
// FlowSenders-1 extra sender namespaces, each with its own veth (and so its
// own MAC) into the switch.
const FlowSenders = 3

// FragTimeSeconds replaces net.ipv4.ipfrag_time (30 s) inside the end-host
// namespaces, so fragments left over from a lossy UDP run do not block
// reassembly in the next one.
const FragTimeSeconds = 2

// NamePrefix is the prefix of every name this package creates; the pid
// follows it.
const NamePrefix = "gb"

// Sender is one host of the new-flow test.
type Sender struct {
	NS   string // its namespace
	Dev  string // its veth end, in NS
	Port string // the outer end of its veth, in Switch (switched only)
	// ServerDev is the server's end of this sender's own veth pair (Direct
	// only, extra senders only: the client uses ServerDev of Topo).
	ServerDev string
	index     int // 0 for the client
}

// IP is the sender's address: the client's for the first sender; switched,
// 198.18.0.(2+i) in the hosts' subnet; direct, 198.18.i.1 in a subnet of
// its own pair.
func (s Sender) IP(direct bool) string {
	switch {
	case s.index == 0:
		return ClientIP
	case direct:
		return fmt.Sprintf("198.18.%d.1", s.index)
	default:
		return fmt.Sprintf("198.18.0.%d", 2+s.index)
	}
}

// Target is the server address the sender sends to.
func (s Sender) Target(direct bool) string {
	if s.index == 0 || !direct {
		return ServerIP
	}
	return fmt.Sprintf("198.18.%d.2", s.index)
}

// Topo is the set of namespaces and links of one benchmark session.
type Topo struct {
	Prefix string // gb<pid>
	Client string // namespace of the iperf3 client and other senders
	Server string // namespace of the receivers
	Switch string // namespace where a switch joins the hosts' outer ends

	ClientDev  string // client's veth end, in Client
	ServerDev  string // server's veth end, in Server
	ClientPort string // outer end of the client's veth, in Switch (switched only)
	ServerPort string // outer end of the server's veth, in Switch (switched only)

	// Senders are the hosts of the new-flow test; Senders[0] is the client,
	// the others have namespaces of their own (gb<pid>f<i>).
	Senders []Sender

	created []string // namespaces created so far
	linked  bool
	direct  bool // the current links are LinkDirect's
}

// New names a topology for this process; Create makes it.
func New() *Topo {
	p := NamePrefix + strconv.Itoa(os.Getpid())
	t := &Topo{
		Prefix: p, Client: p + "c", Server: p + "s", Switch: p + "w",
		ClientDev: p + "c0", ServerDev: p + "s0", ClientPort: p + "c1", ServerPort: p + "s1",
	}
	t.Senders = append(t.Senders, Sender{NS: t.Client, Dev: t.ClientDev, Port: t.ClientPort})
	for i := 1; i < FlowSenders; i++ {
		role := fmt.Sprintf("f%d", i)
		t.Senders = append(t.Senders, Sender{NS: p + role, Dev: p + role + "0", Port: p + role + "1", ServerDev: p + "r" + strconv.Itoa(i), index: i})
	}
	return t
}

// Direct reports whether the current links are a direct veth pair (no
// switch namespace in the path).
func (t *Topo) Direct() bool { return t.direct }

// SwitchPorts are the outer veth ends a switch joins: client, server and
// the extra flow senders.
func (t *Topo) SwitchPorts() []string {
	ports := []string{t.ClientPort, t.ServerPort}
	for _, s := range t.Senders[1:] {
		ports = append(ports, s.Port)
	}
	return ports
}

// HostDev is an end host's veth end.
type HostDev struct{ NS, Dev string }

// HostDevs are the end hosts' veth ends when switched: client, server and
// the extra flow senders.
func (t *Topo) HostDevs() []HostDev {
	devs := []HostDev{{t.Client, t.ClientDev}, {t.Server, t.ServerDev}}
	for _, s := range t.Senders[1:] {
		devs = append(devs, HostDev{s.NS, s.Dev})
	}
	return devs
}

// Create makes the namespaces with loopback up and a short ipfrag_time in
// the end hosts.
func (t *Topo) Create(ctx context.Context) error {
	namespaces := []string{t.Client, t.Server, t.Switch}
	for _, s := range t.Senders[1:] {
		namespaces = append(namespaces, s.NS)
	}
	for _, ns := range namespaces {
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

// LinkDirect joins client and server with one veth pair. There is no
// switch to join more hosts, so each extra flow sender gets a veth pair of
// its own straight to the server, in a subnet of its own (198.18.i.0/24):
// the server then has one veth per sender.
func (t *Topo) LinkDirect(ctx context.Context) error {
	t.linked, t.direct = true, true
	if err := ip(ctx, "link", "add", t.ClientDev, "netns", t.Client, "type", "veth", "peer", "name", t.ServerDev, "netns", t.Server); err != nil {
		return err
	}
	if err := t.configure(ctx, t.Client, t.ClientDev, ClientIP); err != nil {
		return err
	}
	if err := t.configure(ctx, t.Server, t.ServerDev, ServerIP); err != nil {
		return err
	}
	for _, s := range t.Senders[1:] {
		if err := ip(ctx, "link", "add", s.Dev, "netns", s.NS, "type", "veth", "peer", "name", s.ServerDev, "netns", t.Server); err != nil {
			return err
		}
		if err := t.configure(ctx, s.NS, s.Dev, s.IP(true)); err != nil {
			return err
		}
		if err := t.configure(ctx, t.Server, s.ServerDev, s.Target(true)); err != nil {
			return err
		}
	}
	return nil
}

// LinkSwitched gives every end host (client, server, extra flow senders) a
// veth pair into the switch namespace; the outer ends are up and belong to
// no switch yet.
func (t *Topo) LinkSwitched(ctx context.Context) error {
	t.linked, t.direct = true, false
	hosts := []struct{ ns, dev, port, addr string }{
		{t.Client, t.ClientDev, t.ClientPort, ClientIP},
		{t.Server, t.ServerDev, t.ServerPort, ServerIP},
	}
	for _, s := range t.Senders[1:] {
		hosts = append(hosts, struct{ ns, dev, port, addr string }{s.NS, s.Dev, s.Port, s.IP(false)})
	}
	for _, h := range hosts {
		if err := ip(ctx, "link", "add", h.dev, "netns", h.ns, "type", "veth", "peer", "name", h.port, "netns", t.Switch); err != nil {
			return err
		}
		if err := ip(ctx, "-n", t.Switch, "link", "set", h.port, "up"); err != nil {
			return err
		}
		if err := t.configure(ctx, h.ns, h.dev, h.addr); err != nil {
			return err
		}
	}
	return nil
}

func (t *Topo) configure(ctx context.Context, ns, dev, addr string) error {
	if err := ip(ctx, "-n", ns, "addr", "add", addr+prefixLen, "dev", dev); err != nil {
		return err
	}
	return ip(ctx, "-n", ns, "link", "set", dev, "up")
}

// Unlink deletes every veth this topology may have created, outer ends
// first; missing links are not an error.
func (t *Topo) Unlink(ctx context.Context) error {
	if !t.linked {
		return nil
	}
	links := []HostDev{{t.Switch, t.ClientPort}, {t.Switch, t.ServerPort}}
	for _, s := range t.Senders[1:] {
		links = append(links, HostDev{t.Switch, s.Port}, HostDev{t.Server, s.ServerDev})
	}
	links = append(links, t.HostDevs()...)
	var errs []error
	for _, l := range links {
		if err := ip(ctx, "-n", l.NS, "link", "del", l.Dev); err != nil && !isMissing(err) {
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

// stalePID extracts the pid from a name gb<pid><role>, role one of c, s,
// w or f<digit> (an extra flow sender), or k or h (the scale test's switch
// and host namespaces).
func stalePID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, NamePrefix)
	if !ok {
		return 0, false
	}
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	role := rest[digits:]
	known := role == "c" || role == "s" || role == "w" || role == "k" || role == "h" ||
		(len(role) == 2 && role[0] == 'f' && role[1] >= '1' && role[1] <= '9')
	if digits == 0 || !known {
		return 0, false
	}
	pid, err := strconv.Atoi(rest[:digits])
	return pid, err == nil && pid > 0
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
