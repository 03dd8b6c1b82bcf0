package tnlroute

import (
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestConcurrentReadersAndWriters runs lookups while the kernel writer,
// user commands and snooping change the structures (run with -race):
// readers always see a whole table.
func TestConcurrentReadersAndWriters(t *testing.T) {
	tb := newTestTable()
	base := []KernelRoute{kroute(t, "198.18.1.0/24", "br-phy", "", false), kroute(t, "0.0.0.0/0", "eth9", "198.19.0.254", false)}
	tb.ReplaceSystem(base)
	c := NewCache(nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst, other := addr("198.18.1.9"), addr("8.8.8.8")
			ip := ip16("198.18.1.92")
			for {
				select {
				case <-stop:
					return
				default:
				}
				// The kernel's routes are replaced in one step: some
				// route always answers.
				if _, ok := tb.Lookup(0, dst, netip.Addr{}); !ok {
					t.Error("no route to the connected network")
					return
				}
				if r, ok := tb.Lookup(0, other, netip.Addr{}); !ok || (r.Dev != "eth9" && r.Dev != "br-phy") {
					t.Errorf("default: %+v %v", r, ok)
					return
				}
				c.Lookup("br0", ip)
			}
		}()
	}
	deadline := time.Now().Add(200 * time.Millisecond)
	for i := 0; time.Now().Before(deadline); i++ {
		tb.ReplaceSystem(base)
		if i%2 == 0 {
			_ = tb.AddUser(RouteSpec{Dst: addr("0.0.0.0").As16(), Plen: 96, Dev: "br-phy", GW: addr("198.18.1.254").As16()})
		} else {
			_ = tb.DelUser(RouteSpec{Dst: addr("0.0.0.0").As16(), Plen: 96})
		}
		c.Set("br0", ip16("198.18.1.92"), [6]byte{byte(i)})
		if i%7 == 0 {
			c.Flush()
			c.SetAging(time.Duration(i%5+1) * time.Second)
		}
		c.Expire()
	}
	close(stop)
	wg.Wait()
}

func TestAddrSourcesFirstThatKnowsTheDevice(t *testing.T) {
	noAddr := addrFunc(func(dev string) ([]netip.Prefix, error) {
		if dev == "br0" {
			return nil, unix.EADDRNOTAVAIL
		}
		return nil, unix.ENODEV
	})
	s := AddrSources{noAddr, fakeAddrs{"br0": {pfx("198.18.1.1/24")}, "eth0": {pfx("198.19.0.1/24")}}}
	if _, err := s.Addrs("br0"); !errors.Is(err, unix.EADDRNOTAVAIL) {
		t.Errorf("br0 (a dummy without address): %v", err)
	}
	if l, err := s.Addrs("eth0"); err != nil || len(l) != 1 {
		t.Errorf("eth0: %v %v", l, err)
	}
	if _, err := s.Addrs("nope"); !errors.Is(err, unix.ENODEV) {
		t.Errorf("unknown: %v", err)
	}
}

type addrFunc func(string) ([]netip.Prefix, error)

func (f addrFunc) Addrs(dev string) ([]netip.Prefix, error) { return f(dev) }
