package main

import (
	"context"
	"fmt"
	"gvs/timewarp"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"gvs/appctl"
	"gvs/bridge"
	"gvs/bridge/dpadapter"
	"gvs/cmd/internal/daemon"
	"gvs/metrics"
	"gvs/metrics/source"
	"gvs/ovsdb/server"
)

// compatVersion is the Open vSwitch release whose schema and behaviour gvs
// follows; it goes to Open_vSwitch.ovs_version as ovs-vswitchd writes its
// own version there.
const compatVersion = "3.1.0"

// switchConfig is what the command line says about the switch itself.
type switchConfig struct {
	database       string // unix:PATH or tcp:IP:PORT the reconciler follows
	dbFile         string // the embedded database's file ("" for an external server)
	metricsAddress string // --metrics-address, "" for none
	// dummy is --enable-dummy's level (dpadapter.DummyDisabled without).
	dummy dpadapter.DummyMode
	// disableSystem: --disable-system, which takes "system" out of
	// datapath_types. disableSystemRoute: --disable-system-route: the
	// tunnel route table keeps no kernel routes.
	disableSystem, disableSystemRoute bool
}

// startSwitch starts the userspace datapath, the bridge reconciler
// following sc.database, the netlink link watcher, the switch's
// ovs-appctl commands and, with --metrics-address, the metrics endpoint
// (with the embedded server's figures when srv is not nil). The function
// it returns stops them and tears the datapath down: every port removed,
// the tap devices gone, XDP programs detached.
func startSwitch(d *daemon.Daemon, sc switchConfig, srv *server.Server) (stop func()) {
	logger := daemon.Module(d.Logger, "bridge")
	// The clock ovs-appctl time/stop and time/warp control: only with
	// --enable-dummy, as Open vSwitch registers them.
	var clock *timewarp.Clock
	var now func() time.Time
	if sc.dummy != dpadapter.DummyDisabled {
		clock = timewarp.New(nil)
		now = clock.Now
	}
	dp := dpadapter.New(dpadapter.Config{Logger: daemon.Module(d.Logger, "dpif_netdev"), Dummy: sc.dummy, RunDir: d.Dirs.Run, Now: now})
	passes := source.NewReconciler()
	rec, err := bridge.New(bridge.Config{
		Remote:     sc.database,
		Datapath:   dp,
		Logger:     logger,
		OVSVersion: compatVersion,
		Metrics:    passes,
		RunDir:     d.Dirs.Run,
		DummyTypes: sc.dummy != dpadapter.DummyDisabled,
		// Bridges of datapath_type system still get gvs's userspace
		// datapath: only the reported types change.
		NoSystemDatapath: sc.disableSystem,
	})
	if err != nil {
		d.Fatal(err)
	}
	view := dpadapter.View{DP: dp, OFPorts: rec.OFPorts}
	commands := appctl.New(appctl.Config{Switch: view, Program: program.Name, Logger: daemon.Module(d.Logger, "appctl")})
	commands.Register(d.Control)
	_, neigh, stopTunnelRouting := startTunnelRouting(d, sc, dp, now)
	if sc.dummy != dpadapter.DummyDisabled {
		dp.Dummies().RegisterCommands(d.Control)
		// Neighbour expiry runs after each step too, as in Open vSwitch's
		// main loop.
		appctl.NewTimeCommands(clock, func() { dp.RunTimers(); neigh.Expire() }).Register(d.Control)
	}
	var metricsServer *metrics.Server
	if sc.metricsAddress != "" {
		if metricsServer, err = serveMetrics(d, sc, view, passes, srv); err != nil {
			d.Fatal(err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		rec.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		dp.Watch(ctx, daemon.Module(d.Logger, "netdev_linux"), rec)
	}()
	return func() {
		cancel()
		wg.Wait()
		if metricsServer != nil {
			metricsServer.Close()
		}
		commands.Close()
		stopTunnelRouting()
		// ovs-vswitchd's plain "exit" leaves its internal ports' tap
		// devices in place; "exit --cleanup" deletes the datapath and
		// them. On a signal gvs tears everything down (Open vSwitch
		// leaves the taps then too): a killed test or service leaves
		// nothing behind.
		byCommand, cleanup := d.ExitRequest()
		if byCommand && !cleanup {
			if err := dp.Detach(); err != nil {
				logger.Warn("datapath teardown: " + err.Error())
			}
			logger.Info("datapath torn down; tap devices of internal and tap ports kept (exit without --cleanup)")
			return
		}
		if err := dp.Close(); err != nil {
			logger.Warn("datapath teardown: " + err.Error())
		}
		logger.Info("datapath torn down")
	}
}

// serveMetrics serves the switch's, the reconciler's and (embedded) the
// database server's metrics.
func serveMetrics(d *daemon.Daemon, sc switchConfig, view dpadapter.View, passes *source.Reconciler, srv *server.Server) (*metrics.Server, error) {
	collectors := []prometheus.Collector{metrics.NewSwitchCollector(view), metrics.NewReconcilerCollector(passes)}
	if srv != nil {
		size := func() int64 {
			st, err := os.Stat(sc.dbFile)
			if err != nil {
				return -1
			}
			return st.Size()
		}
		collectors = append(collectors, metrics.NewOVSDBCollector(srv, map[string]func() int64{"Open_vSwitch": size}))
	}
	reg, err := metrics.NewRegistry(collectors...)
	if err != nil {
		return nil, err
	}
	return metrics.Serve(sc.metricsAddress, reg, daemon.Module(d.Logger, "metrics"))
}

// runClient runs the switch against an external database server until
// "exit" or a terminating signal.
func runClient(d *daemon.Daemon, sc switchConfig) {
	if err := d.Ready(); err != nil {
		d.Fatal(err)
	}
	stop := startSwitch(d, sc, nil)
	sig := d.Wait()
	stop()
	d.Close(sig)
}

// databaseOperand checks ovs-vswitchd's DATABASE operand: unix:PATH (made
// absolute, since a daemon changes directory) or tcp:IP:PORT.
func databaseOperand(s string) (string, error) {
	if path, ok := strings.CutPrefix(s, "unix:"); ok && path != "" {
		abs, err := filepath.Abs(path)
		return "unix:" + abs, err
	}
	if hostport, ok := strings.CutPrefix(s, "tcp:"); ok {
		if _, _, err := net.SplitHostPort(hostport); err == nil {
			return s, nil
		}
	}
	return "", fmt.Errorf("%s: DATABASE must be unix:PATH or tcp:IP:PORT", s)
}
