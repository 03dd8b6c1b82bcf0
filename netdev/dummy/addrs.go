package dummy

import (
	"net/netip"

	"golang.org/x/sys/unix"
)

// inAddrs are a device's addresses as netdev-dummy/ip4addr and ip6addr
// set them: one of each family, each replacing the last, as Open
// vSwitch's netdev-dummy keeps them.
type inAddrs struct{ v4, v6 netip.Prefix }

// setInAddr records p as the device's address of its family.
func (d *Device) setInAddr(p netip.Prefix) {
	for {
		old := d.inAddrs.Load()
		next := inAddrs{}
		if old != nil {
			next = *old
		}
		if p.Addr().Is4() {
			next.v4 = p
		} else {
			next.v6 = p
		}
		if d.inAddrs.CompareAndSwap(old, &next) {
			return
		}
	}
}

// InAddrs returns the device's addresses, IPv4 first (netdev-dummy's
// get_addr_list).
func (d *Device) InAddrs() []netip.Prefix {
	a := d.inAddrs.Load()
	if a == nil {
		return nil
	}
	var out []netip.Prefix
	for _, p := range []netip.Prefix{a.v4, a.v6} {
		if p.IsValid() {
			out = append(out, p)
		}
	}
	return out
}

// Addrs returns the addresses of the dummy device named dev: ENODEV when
// there is none, EADDRNOTAVAIL when it has no address (so it serves as a
// route table's address source before the kernel's).
func (r *Registry) Addrs(dev string) ([]netip.Prefix, error) {
	d := r.Lookup(dev)
	if d == nil {
		return nil, unix.ENODEV
	}
	list := d.InAddrs()
	if len(list) == 0 {
		return nil, unix.EADDRNOTAVAIL
	}
	return list, nil
}
