package tap

import (
	"fmt"
	"net"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"gvs/netdev"
	"gvs/netdev/internal/link"
)

func (d *Device) Name() string     { return d.name }
func (d *Device) Type() string     { return d.typ }
func (d *Device) NumRxQueues() int { return 1 }
func (d *Device) NumTxQueues() int { return 1 }

// PollFD is the tap descriptor: readable when the kernel has a frame.
func (d *Device) PollFD(q int) int { return d.fd }

func (d *Device) Capabilities() netdev.Capabilities {
	return netdev.Capabilities{VnetHdr: true, MaxFrame: maxGSOFrame, RecvSyscall: true}
}

// SetMAC changes the device's Ethernet address (internal ports take the
// bridge's).
func (d *Device) SetMAC(mac net.HardwareAddr) error {
	if err := link.SetMAC(d.ifindex, mac); err != nil {
		return fmt.Errorf("%s: set mac %s: %w", d.name, mac, err)
	}
	return nil
}

// Stats returns the counters. RxKernelDrops is the device's tx_dropped
// since Open: frames the kernel sent towards us but found our queue full,
// read with a netlink query (which also refreshes the cached MTU).
func (d *Device) Stats() netdev.Stats { return d.stats(0) }

// StatsWithin is Stats with tx_dropped as last read when that read is
// younger than maxAge (netdev.SharedStats).
func (d *Device) StatsWithin(maxAge time.Duration) netdev.Stats { return d.stats(maxAge) }

func (d *Device) stats(maxAge time.Duration) netdev.Stats {
	s := netdev.Stats{
		RxPackets: d.ctr.rxPackets.Load(), RxBytes: d.ctr.rxBytes.Load(), RxErrors: d.ctr.rxErrors.Load(),
		TxPackets: d.ctr.txPackets.Load(), TxBytes: d.ctr.txBytes.Load(),
		TxDrops: d.ctr.txDrops.Load(), TxErrors: d.ctr.txErrors.Load(),
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if maxAge <= 0 || now.Sub(d.dropsReadAt) >= maxAge {
		d.dropsReadAt = now
		if l, err := netlink.LinkByIndex(d.ifindex); err == nil && l.Attrs().Statistics != nil {
			d.RefreshMTU(l.Attrs().MTU)
			if drops := l.Attrs().Statistics.TxDropped; drops >= d.baseDrops {
				d.kernelDrops = drops - d.baseDrops
			}
		}
	}
	s.RxKernelDrops = d.kernelDrops
	return s
}

// SetSocketBuffers has nothing to size: a tap device has no socket (its
// queue is txqueuelen frames). It reports the request and no sizes.
func (d *Device) SetSocketBuffers(bytes int) (netdev.SocketBuffers, error) {
	if bytes != 0 {
		bytes = netdev.ClampSocketBuffer(bytes)
	}
	return netdev.SocketBuffers{Requested: bytes}, nil
}

func (d *Device) Status() map[string]string {
	st := link.Driver(d.name)
	st["rx"] = "read"
	st["tx"] = "write"
	return st
}

// Close closes the descriptor; a device we created goes with it.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var persistErr error
	if d.keep {
		// TUNSETPERSIST takes its flag by value. Only a device we made
		// is marked: one someone else made stays theirs.
		if err := unix.IoctlSetInt(d.fd, unix.TUNSETPERSIST, 1); err != nil {
			persistErr = fmt.Errorf("%s: keeping the device: %w", d.name, err)
		} else if d.created {
			link.SetAlias(d.ifindex, keptAlias)
		}
	}
	if err := unix.Close(d.fd); err != nil {
		return fmt.Errorf("%s: close: %w", d.name, err)
	}
	return persistErr
}

// KeepOnClose makes Close leave the device in the kernel (persistent),
// as ovs-vswitchd's plain "exit" leaves the tap devices of its internal
// ports; the next Open attaches to it again. Safe from any goroutine.
func (d *Device) KeepOnClose() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keep = true
}
