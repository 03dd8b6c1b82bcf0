package main

import (
	"context"
	"sync"
	"time"

	"github.com/vishvananda/netns"

	"gvs/appctl"
	"gvs/bridge/dpadapter"
	"gvs/cmd/internal/daemon"
	"gvs/ofproto/tnlroute"
)

// neighExpiryInterval is how often expired tunnel neighbours are removed
// (Open vSwitch does it on every main loop iteration).
const neighExpiryInterval = time.Second

// startTunnelRouting creates native tunnelling's route table (following
// the kernel's routes unless --disable-system-route) and neighbour cache,
// and registers their ovs/route/* and tnl/neigh/* commands. Source
// addresses come from dummy devices (netdev-dummy/ip4addr) before the
// kernel's. now is the clock time/warp moves (nil without --enable-dummy):
// neighbours age by it. The function it returns stops the kernel
// follower.
func startTunnelRouting(d *daemon.Daemon, sc switchConfig, dp *dpadapter.Datapath, now func() time.Time) (*tnlroute.Table, *tnlroute.Cache, func()) {
	var addrs tnlroute.AddrSources
	if sc.dummy != dpadapter.DummyDisabled {
		addrs = append(addrs, dp.Dummies())
	}
	addrs = append(addrs, tnlroute.KernelAddrs{})
	routes := tnlroute.NewTable(addrs, !sc.disableSystemRoute)
	var neighClock func() int64 // nil: the cache's monotonic clock
	if now != nil {
		start := now()
		neighClock = func() int64 { return int64(now().Sub(start)) }
	}
	neigh := tnlroute.NewCache(neighClock)
	appctl.RegisterTunnelRouting(d.Control, routes, neigh)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		neigh.Run(ctx, neighExpiryInterval)
	}()
	if routes.UsesSystem() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := &tnlroute.Kernel{Table: routes, NS: netns.None(), Logger: daemon.Module(d.Logger, "route_table")}
			if err := k.Run(ctx); err != nil {
				k.Logger.Warn("not following the kernel's routes: " + err.Error())
			}
		}()
	}
	return routes, neigh, func() {
		cancel()
		wg.Wait()
	}
}
