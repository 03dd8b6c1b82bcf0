package dummy

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
)

// Registry is the set of open dummy devices, by name, and the counter that
// gives each new one its MAC. The daemon keeps one (in its datapath
// adapter) for the netdev-dummy/* commands; it is safe from any goroutine.
type Registry struct {
	mu     sync.Mutex
	next   uint32
	devs   map[string]*Device
	notify func(name string)
}

// OnLinkChange sets the function told the name of a device whose
// administrative state changed (netdev-dummy/set-admin-state), as a kernel
// device's link event would tell; nil stops it. It is called without the
// registry's lock held.
func (r *Registry) OnLinkChange(fn func(name string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notify = fn
}

func (r *Registry) linkChanged(name string) {
	r.mu.Lock()
	fn := r.notify
	r.mu.Unlock()
	if fn != nil {
		fn(name)
	}
}

// NewRegistry returns an empty registry whose first device gets
// aa:55:aa:55:00:00, as Open vSwitch's first dummy device does.
func NewRegistry() *Registry {
	return &Registry{next: 0xaa550000, devs: map[string]*Device{}}
}

// Open creates a device and registers it under its name.
func (r *Registry) Open(cfg Config) (*Device, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.devs[cfg.Name] != nil {
		return nil, fmt.Errorf("%s: dummy device already open", cfg.Name)
	}
	mac := cfg.MAC
	if mac == nil {
		mac = r.nextMACLocked()
	}
	d, err := open(r, cfg, mac)
	if err != nil {
		return nil, err
	}
	r.devs[cfg.Name] = d
	return d, nil
}

// ReserveMACs takes the next n addresses of the sequence Open gives
// devices without a MAC, for a caller that opens several devices at once
// and wants them numbered in its own order, not in the order the opens
// happen to run.
func (r *Registry) ReserveMACs(n int) []net.HardwareAddr {
	r.mu.Lock()
	defer r.mu.Unlock()
	macs := make([]net.HardwareAddr, n)
	for i := range macs {
		macs[i] = r.nextMACLocked()
	}
	return macs
}

func (r *Registry) nextMACLocked() net.HardwareAddr {
	n := r.next
	r.next++
	return net.HardwareAddr{0xaa, 0x55, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
}

// Lookup returns the open device of that name, or nil.
func (r *Registry) Lookup(name string) *Device {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.devs[name]
}

// Devices returns the open devices sorted by name.
func (r *Registry) Devices() []*Device {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Device, 0, len(r.devs))
	for _, d := range r.devs {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Device) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

func (r *Registry) forget(d *Device) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.devs[d.Name()] == d {
		delete(r.devs, d.Name())
	}
}
