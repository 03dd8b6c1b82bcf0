package tnlroute

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// KernelAddrs is the AddrSource of a network namespace's devices, read
// over rtnetlink (Open vSwitch reads them with getifaddrs).
type KernelAddrs struct {
	// Handle is the namespace's netlink handle; nil for the process's.
	Handle *netlink.Handle
}

var _ AddrSource = KernelAddrs{}

// Addrs implements AddrSource.
func (k KernelAddrs) Addrs(dev string) ([]netip.Prefix, error) {
	h := k.Handle
	if h == nil {
		h = &netlink.Handle{}
	}
	link, err := h.LinkByName(dev)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			return nil, unix.ENODEV
		}
		return nil, err
	}
	var list []netlink.Addr
	for range dumpAttempts {
		if list, err = h.AddrList(link, netlink.FAMILY_ALL); !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	out := make([]netip.Prefix, 0, len(list))
	for _, a := range list {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || a.IPNet == nil {
			continue
		}
		ones, _ := a.Mask.Size()
		out = append(out, netip.PrefixFrom(ip.Unmap(), ones))
	}
	return out, nil
}

// AddrSources tries each source in turn: the first that knows the device
// answers, also when it has no address (dummy devices before the
// kernel's, as Open vSwitch opens an existing netdev by name before a
// system one). A source that does not know a device says unix.ENODEV.
type AddrSources []AddrSource

// Addrs implements AddrSource.
func (s AddrSources) Addrs(dev string) ([]netip.Prefix, error) {
	var err error = unix.ENODEV
	for _, src := range s {
		var list []netip.Prefix
		if list, err = src.Addrs(dev); !errors.Is(err, unix.ENODEV) {
			return list, err
		}
	}
	return nil, err
}

// Kernel keeps a Table's kernel routes following a network namespace's
// routing tables, as Open vSwitch's route-table.c: every table, IPv4 and
// IPv6, unicast and local routes of a scope other than nowhere, each with
// its output device (routes without one, such as multipath ones, are
// left out); any route or link change re-reads them all.
type Kernel struct {
	Table *Table
	// NS is the namespace to follow; a closed handle (netns.None()) for
	// the process's.
	NS     netns.NsHandle
	Logger *slog.Logger
	// Settle is how long to wait after a change for more before
	// re-reading (a burst of changes costs one dump); default 10 ms.
	Settle time.Duration
}

// Run follows the kernel until ctx ends. It returns an error when it
// cannot subscribe; read errors are logged and retried on the next change.
func (k *Kernel) Run(ctx context.Context) error {
	if k.Logger == nil {
		k.Logger = slog.New(slog.DiscardHandler)
	}
	if k.Settle <= 0 {
		k.Settle = 10 * time.Millisecond
	}
	h, err := netlink.NewHandleAt(k.NS)
	if err != nil {
		return err
	}
	defer h.Close()
	done := make(chan struct{})
	defer close(done)
	routes := make(chan netlink.RouteUpdate, 256)
	links := make(chan netlink.LinkUpdate, 256)
	ns := k.NS
	errs := func(err error) { k.Logger.Warn("route table: netlink: " + err.Error()) }
	if err := netlink.RouteSubscribeWithOptions(routes, done, netlink.RouteSubscribeOptions{Namespace: &ns, ErrorCallback: errs}); err != nil {
		return err
	}
	if err := netlink.LinkSubscribeWithOptions(links, done, netlink.LinkSubscribeOptions{Namespace: &ns, ErrorCallback: errs}); err != nil {
		return err
	}
	k.reset(h)
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-routes:
			if !ok {
				routes = nil
			}
		case _, ok := <-links:
			if !ok {
				links = nil
			}
		case <-settle:
			settle = nil
			k.reset(h)
			continue
		}
		if settle == nil {
			settle = time.After(k.Settle)
		}
	}
}

// dumpAttempts is how often a dump the kernel interrupted (the tables
// changed under it) is retried at once; a later change retries anyway.
const dumpAttempts = 3

// reset re-reads every route (route_table_reset).
func (k *Kernel) reset(h *netlink.Handle) {
	var routes []KernelRoute
	var err error
	for range dumpAttempts {
		if routes, err = ReadKernelRoutes(h); !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		k.Logger.Warn("route table: dump: " + err.Error())
		return
	}
	k.Table.ReplaceSystem(routes)
}

// ReadKernelRoutes dumps the routes Open vSwitch 3.1 takes from the
// kernel, through h. An error (netlink.ErrDumpInterrupted when the tables
// changed during the dump) means nothing is returned.
func ReadKernelRoutes(h *netlink.Handle) ([]KernelRoute, error) {
	list, err := h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, err
	}
	links, err := h.LinkList()
	if err != nil {
		return nil, err
	}
	names := make(map[int]string, len(links))
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	out := make([]KernelRoute, 0, len(list))
	for _, r := range list {
		kr, ok := kernelRoute(&r, names)
		if ok {
			out = append(out, kr)
		}
	}
	return out, nil
}

// kernelRoute converts a route, false for one Open vSwitch ignores.
func kernelRoute(r *netlink.Route, names map[int]string) (KernelRoute, bool) {
	if r.Scope == netlink.SCOPE_NOWHERE || (r.Type != unix.RTN_UNICAST && r.Type != unix.RTN_LOCAL) {
		return KernelRoute{}, false
	}
	if r.Family != unix.AF_INET && r.Family != unix.AF_INET6 {
		return KernelRoute{}, false
	}
	v4 := r.Family == unix.AF_INET
	kr := KernelRoute{Local: r.Type == unix.RTN_LOCAL}
	if r.LinkIndex != 0 {
		name, ok := names[r.LinkIndex]
		if !ok {
			return KernelRoute{}, false // the device is gone (ENXIO)
		}
		kr.Dev = name
	}
	if r.Dst != nil {
		ones, _ := r.Dst.Mask.Size()
		kr.Dst = to16(r.Dst.IP, v4)
		kr.Plen = uint8(ones)
	} else if v4 {
		kr.Dst = mapped4([4]byte{})
	}
	if v4 {
		kr.Plen += 96
	}
	if r.Gw != nil {
		kr.GW = to16(r.Gw, v4)
	}
	return kr, true
}

func to16(ip net.IP, v4 bool) [16]byte {
	if v4 {
		if b := ip.To4(); b != nil {
			return mapped4([4]byte(b))
		}
	}
	var a [16]byte
	copy(a[:], ip.To16())
	return a
}
