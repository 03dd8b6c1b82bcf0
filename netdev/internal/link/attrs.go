package link

import (
	"fmt"
	"net"
	"sync/atomic"

	"gvs/netdev"
)

// Attrs gives a device known by its kernel index the link-level methods
// of netdev.Device (MAC, MTU, SetMTU, Link), and caches the MTU for the
// transmit path's size check, which must not ask the kernel per packet.
// Embed it; Init before use. Safe from any goroutine.
type Attrs struct {
	attrName    string
	attrIfindex int
	mtu         atomic.Int64
}

// Init records the device's name (for errors), index and current MTU.
func (a *Attrs) Init(name string, ifindex, mtu int) {
	a.attrName, a.attrIfindex = name, ifindex
	a.mtu.Store(int64(mtu))
}

func (a *Attrs) MAC() net.HardwareAddr  { return MAC(a.attrIfindex) }
func (a *Attrs) Link() netdev.LinkState { return State(a.attrIfindex) }

// MTU reads the kernel's MTU (0 if the device is gone) and refreshes the
// cached one.
func (a *Attrs) MTU() int {
	m := MTU(a.attrIfindex)
	if m > 0 {
		a.mtu.Store(int64(m))
	}
	return m
}

// SetMTU changes the kernel's MTU and the cached one.
func (a *Attrs) SetMTU(mtu int) error {
	if err := SetMTU(a.attrIfindex, mtu); err != nil {
		return fmt.Errorf("%s: set mtu %d: %w", a.attrName, mtu, err)
	}
	a.mtu.Store(int64(mtu))
	return nil
}

// CachedMTU is the MTU last read or set, without a system call.
func (a *Attrs) CachedMTU() int { return int(a.mtu.Load()) }

// RefreshMTU stores an MTU read elsewhere (for example with statistics).
func (a *Attrs) RefreshMTU(mtu int) { a.mtu.Store(int64(mtu)) }
