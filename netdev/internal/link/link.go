// Package link reads and changes kernel network interface attributes
// (MAC, MTU, administrative and carrier state, speed, driver) for the
// netdev backends, through rtnetlink and SIOCETHTOOL. Every call reads the
// kernel fresh and may be made from any goroutine; none is on the packet
// path.
package link

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"gvs/netdev"
)

// ByName returns the interface called name, wrapping netdev.ErrNoDevice
// when there is none.
func ByName(name string) (netlink.Link, error) {
	l, err := netlink.LinkByName(name)
	var nf netlink.LinkNotFoundError
	if errors.As(err, &nf) || errors.Is(err, unix.ENODEV) {
		return nil, fmt.Errorf("%s: %w", name, netdev.ErrNoDevice)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return l, nil
}

func byIndex(ifindex int) (netlink.Link, error) {
	l, err := netlink.LinkByIndex(ifindex)
	if err != nil {
		return nil, fmt.Errorf("ifindex %d: %w", ifindex, err)
	}
	return l, nil
}

// MAC returns the interface's Ethernet address, or nil if it is gone.
func MAC(ifindex int) net.HardwareAddr {
	l, err := byIndex(ifindex)
	if err != nil {
		return nil
	}
	return l.Attrs().HardwareAddr
}

// MTU returns the interface's MTU, or 0 if it is gone.
func MTU(ifindex int) int {
	l, err := byIndex(ifindex)
	if err != nil {
		return 0
	}
	return l.Attrs().MTU
}

// SetMTU changes the interface's MTU.
func SetMTU(ifindex, mtu int) error {
	l, err := byIndex(ifindex)
	if err != nil {
		return err
	}
	return netlink.LinkSetMTU(l, mtu)
}

// SetMAC changes the interface's Ethernet address.
func SetMAC(ifindex int, mac net.HardwareAddr) error {
	l, err := byIndex(ifindex)
	if err != nil {
		return err
	}
	return netlink.LinkSetHardwareAddr(l, mac)
}

// SetAlias sets the interface's alias (IFLA_IFALIAS; "" clears it).
func SetAlias(ifindex int, alias string) error {
	l, err := byIndex(ifindex)
	if err != nil {
		return err
	}
	return netlink.LinkSetAlias(l, alias)
}

// SetUp brings the interface administratively up.
func SetUp(ifindex int) error {
	l, err := byIndex(ifindex)
	if err != nil {
		return err
	}
	return netlink.LinkSetUp(l)
}

// State reports the interface's link, read fresh; a vanished interface
// reports everything down and its old index.
func State(ifindex int) netdev.LinkState {
	st := netdev.LinkState{IfIndex: ifindex}
	l, err := byIndex(ifindex)
	if err != nil {
		return st
	}
	a := l.Attrs()
	st.AdminUp = a.Flags&net.FlagUp != 0
	st.CarrierUp = a.RawFlags&unix.IFF_LOWER_UP != 0
	st.SpeedMbps = speed(a.Name)
	return st
}

// speed reads /sys/class/net/NAME/speed (Mbit/s); 0 when unknown (-1 or
// unreadable, as for a device without carrier).
func speed(name string) int {
	b, err := os.ReadFile("/sys/class/net/" + name + "/speed")
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Driver returns the ethtool driver name, version and firmware version of
// name (SIOCETHTOOL ETHTOOL_GDRVINFO), in the keys Open vSwitch puts into
// Interface.status. Missing values are left out.
func Driver(name string) map[string]string {
	out := map[string]string{}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return out
	}
	defer unix.Close(fd)
	info, err := unix.IoctlGetEthtoolDrvinfo(fd, name)
	if err != nil {
		return out
	}
	put := func(k string, b []byte) {
		if s := unix.ByteSliceToString(b); s != "" {
			out[k] = s
		}
	}
	put("driver_name", info.Driver[:])
	put("driver_version", info.Version[:])
	put("firmware_version", info.Fw_version[:])
	return out
}
