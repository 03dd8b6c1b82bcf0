package tap

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"gvs/netdev"
	"gvs/netdev/internal/link"
)

// offloads are what we tell the kernel we accept from it: partial
// checksums and TCP segmentation, so TCP from the host through an
// internal port moves 64 KiB frames without per-segment work.
const offloads = unix.TUN_F_CSUM | unix.TUN_F_TSO4 | unix.TUN_F_TSO6 | unix.TUN_F_TSO_ECN

// Config opens one tap device.
type Config struct {
	Name string
	// Type is "internal" (brought up when we create it) or "tap".
	Type string
	// MAC, if set, is given to the device once open.
	MAC    net.HardwareAddr
	Logger *slog.Logger // nil: slog.Default()
}

// Device is an "internal" or "tap" port: a tap device read and written
// through its /dev/net/tun file descriptor, one packet per system call.
type Device struct {
	name, typ  string
	fd         int
	ifindex    int
	created    bool // we made it; closing our descriptor removes it
	log        *slog.Logger
	link.Attrs // MAC, MTU, SetMTU, Link
	ctr        counters
	baseDrops  uint64 // the device's tx_dropped when we opened it

	mu     sync.Mutex // guards closed, keep, dropsReadAt and kernelDrops
	closed bool
	keep   bool // KeepOnClose: Close makes the device persistent first
	// dropsReadAt is when Stats last read tx_dropped, kernelDrops what
	// it found (less baseDrops).
	dropsReadAt time.Time
	kernelDrops uint64
}

var (
	_ netdev.Device      = (*Device)(nil)
	_ netdev.MTUFollower = (*Device)(nil)
	_ netdev.SharedStats = (*Device)(nil)
)

// Open attaches to the tap device cfg.Name, creating it if missing. A
// device we create is not persistent: it disappears when Close closes
// our descriptor. One that existed is left in place.
func Open(cfg Config) (*Device, error) {
	if cfg.Type != "internal" && cfg.Type != "tap" {
		return nil, fmt.Errorf("tap: unknown type %q", cfg.Type)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	l, err := link.ByName(cfg.Name)
	existed := err == nil
	if err != nil && !errors.Is(err, netdev.ErrNoDevice) {
		return nil, err
	}
	// A device an earlier run kept (KeepOnClose) is ours again: closing
	// removes it, as if we had just created it.
	ours := existed && l.Attrs().Alias == keptAlias
	fd, err := attach(cfg.Name)
	if err != nil {
		return nil, err
	}
	if ours {
		if err := unix.IoctlSetInt(fd, unix.TUNSETPERSIST, 0); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("%s: taking back a kept tap: %w", cfg.Name, err)
		}
		link.SetAlias(l.Attrs().Index, "")
	}
	d := &Device{name: cfg.Name, typ: cfg.Type, fd: fd, created: !existed || ours, log: cfg.Logger}
	if err := d.setup(cfg); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	return d, nil
}

// attach opens /dev/net/tun and binds it to the named tap device.
func attach(name string) (int, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("open /dev/net/tun", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err == nil {
		ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI | unix.IFF_VNET_HDR)
		err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
	}
	if err == nil {
		err = unix.IoctlSetPointerInt(fd, unix.TUNSETVNETHDRSZ, vnetHdrLen)
	}
	if err == nil {
		// TUNSETOFFLOAD takes its flags by value, not by pointer.
		err = unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, offloads)
	}
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("%s: attaching tap: %w", name, err)
	}
	return fd, nil
}

func (d *Device) setup(cfg Config) error {
	l, err := link.ByName(d.name)
	if err != nil {
		return err
	}
	d.ifindex = l.Attrs().Index
	d.Init(d.name, d.ifindex, l.Attrs().MTU)
	if s := l.Attrs().Statistics; s != nil {
		d.baseDrops = s.TxDropped
	}
	if cfg.MAC != nil {
		if err := link.SetMAC(d.ifindex, cfg.MAC); err != nil {
			return fmt.Errorf("set mac: %w", err)
		}
	}
	if d.created && d.typ == "internal" {
		if err := link.SetUp(d.ifindex); err != nil {
			return fmt.Errorf("set up: %w", err)
		}
	}
	return nil
}

// keptAlias marks a tap device KeepOnClose left in the kernel, so that
// the next Open takes it back as its own rather than as a device someone
// else made.
const keptAlias = "gvs: kept by exit"

// vnetHdrLen is passed by pointer to TUNSETVNETHDRSZ.
const vnetHdrLen = 10
