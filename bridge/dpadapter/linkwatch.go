package dpadapter

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"gvs/netdev"
)

// LinkUpdate is one kernel link event (RTM_NEWLINK, RTM_DELLINK) as the
// adapter keeps it.
type LinkUpdate struct {
	Name      string
	IfIndex   int
	Deleted   bool // RTM_DELLINK
	AdminUp   bool // IFF_UP
	CarrierUp bool // IFF_LOWER_UP
	MTU       int
	MAC       net.HardwareAddr
}

// PortWatcher is told which ports' devices changed: bridge.Reconciler.
type PortWatcher interface {
	// PortsChanged names devices that link events reported.
	PortsChanged(names ...string)
	// ResyncPorts: events may have been lost; look at every port.
	ResyncPorts()
}

// linkEventBuffer is the netlink socket's receive buffer for link events,
// so a burst (hundreds of veths created by a script) does not overflow it
// (ENOBUFS, answered by a full resync). The kernel caps it at rmem_max.
const linkEventBuffer = 4 << 20

// WatchLinks delivers the kernel's link events to handle until ctx ends,
// in batches (the events that have arrived). At every subscription — the
// first, and again after the netlink socket failed or overflowed, when
// events may have been lost — it first calls handle(nil, true): anything
// may have changed. handle runs on WatchLinks' goroutine and should not
// block for long.
func WatchLinks(ctx context.Context, logger *slog.Logger, handle func(updates []LinkUpdate, resync bool)) {
	for ctx.Err() == nil {
		updates := make(chan netlink.LinkUpdate, 256)
		done := make(chan struct{})
		failed := make(chan error, 1)
		err := netlink.LinkSubscribeWithOptions(updates, done, netlink.LinkSubscribeOptions{
			ReceiveBufferSize: linkEventBuffer,
			ErrorCallback: func(err error) {
				select {
				case failed <- err:
				default:
				}
			},
		})
		if err != nil {
			logger.Warn("netlink link subscription failed: " + err.Error())
		} else {
			handle(nil, true)
			watch(ctx, updates, failed, logger, handle)
		}
		close(done)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func watch(ctx context.Context, updates <-chan netlink.LinkUpdate, failed <-chan error, logger *slog.Logger, handle func([]LinkUpdate, bool)) {
	var batch []LinkUpdate
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-failed:
			logger.Warn("netlink link events: " + err.Error() + "; resubscribing, all ports to be checked again")
			return
		case u, ok := <-updates:
			if !ok {
				return
			}
			batch = append(batch[:0], linkUpdate(u))
			// Take what else has arrived, to handle a burst at once.
			for more := true; more && len(batch) < cap(updates); {
				select {
				case u, ok := <-updates:
					if !ok {
						handle(batch, false)
						return
					}
					batch = append(batch, linkUpdate(u))
				default:
					more = false
				}
			}
			handle(batch, false)
		}
	}
}

func linkUpdate(u netlink.LinkUpdate) LinkUpdate {
	a := u.Attrs()
	return LinkUpdate{
		Name:      a.Name,
		IfIndex:   a.Index,
		Deleted:   u.Header.Type == unix.RTM_DELLINK,
		AdminUp:   a.Flags&net.FlagUp != 0,
		CarrierUp: a.RawFlags&unix.IFF_LOWER_UP != 0,
		MTU:       a.MTU,
		MAC:       a.HardwareAddr,
	}
}

// Watch follows the kernel's link events until ctx ends (WatchLinks),
// keeps the ports' link state with them (LinkEvents), and tells w which
// device names changed, or to look at every port after events may have
// been lost.
func (d *Datapath) Watch(ctx context.Context, logger *slog.Logger, w PortWatcher) {
	// Dummy devices have no kernel link: their registry reports
	// set-admin-state instead.
	d.dummies.OnLinkChange(func(name string) { w.PortsChanged(name) })
	defer d.dummies.OnLinkChange(nil)
	WatchLinks(ctx, logger, func(updates []LinkUpdate, resync bool) {
		names := d.LinkEvents(updates, resync)
		if resync {
			w.ResyncPorts()
		} else if len(names) > 0 {
			w.PortsChanged(names...)
		}
	})
}

// LinkEvents applies link events to the ports' state and returns the
// device names they concern: every name in updates (a device appearing
// may be one an interface waits for), and the port's name when its
// device was renamed. resync (events lost) reads every link once (one
// netlink dump) and brings every port up to date, marking gone the ones
// whose device is missing or has another index.
func (d *Datapath) LinkEvents(updates []LinkUpdate, resync bool) []string {
	var names []string
	if resync {
		links, err := netlink.LinkList()
		if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
			return nil // nothing is marked gone on a failed dump
		}
		byName := make(map[string]LinkUpdate, len(links))
		for _, l := range links {
			u := linkUpdate(netlink.LinkUpdate{Link: l})
			byName[u.Name] = u
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		for name, p := range d.ports {
			if p.virtual {
				continue
			}
			u, ok := byName[name]
			if !ok {
				u = LinkUpdate{Name: name, IfIndex: p.ifindex, Deleted: true}
			}
			d.applyLocked(p, u)
			names = append(names, name)
		}
		slices.Sort(names)
		return names
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	for _, u := range updates {
		add(u.Name)
		if p := d.ports[u.Name]; p != nil && !p.virtual {
			d.applyLocked(p, u)
		}
		if p := d.byIndex[u.IfIndex]; p != nil && p.spec.Name != u.Name {
			// Our device, renamed: the port's name no longer opens it.
			p.gone = true
			add(p.spec.Name)
		}
	}
	return names
}

// applyLocked brings p up to date with an event for its name.
func (d *Datapath) applyLocked(p *port, u LinkUpdate) {
	switch {
	case u.Deleted && (p.ifindex == 0 || u.IfIndex == p.ifindex):
		p.gone = true
	case p.ifindex != 0 && u.IfIndex != p.ifindex:
		if !u.Deleted {
			p.gone = true // another device under the port's name
		}
	default:
		carrierWas := p.link.CarrierUp
		p.link.AdminUp, p.link.CarrierUp = u.AdminUp, u.CarrierUp
		if u.MTU > 0 {
			p.mtu = u.MTU
			// The device's transmit size check follows too, so
			// nothing asks the kernel for the MTU on a timer.
			if f, ok := p.dev.(netdev.MTUFollower); ok {
				f.RefreshMTU(u.MTU)
			}
		}
		if len(u.MAC) > 0 {
			p.mac = slices.Clone(u.MAC)
		}
		if carrierWas != u.CarrierUp {
			p.resets++ // link_resets
			// The speed comes with the carrier (sysfs reads -1 without).
			p.link.SpeedMbps = p.dev.Link().SpeedMbps
			// OpenFlow's OFPPS_LINK_DOWN and liveness (fast failover).
			if br := d.bridges[p.spec.Bridge]; br != nil && p.ofport != 0 {
				br.SetPortLink(p.spec.Name, u.CarrierUp)
			}
		}
	}
}
