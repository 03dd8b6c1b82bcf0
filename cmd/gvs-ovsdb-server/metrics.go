package main

import (
	"os"

	"gvs/cmd/internal/daemon"
	"gvs/metrics"
	"gvs/ovsdb/server"
	"gvs/ovsdb/storage"
)

// serveMetrics returns the ovsdbd.Config.Serving hook for
// --metrics-address: once the server listens, it serves the server's
// counters (metrics.OVSDBCollector, with each database file's size) plus
// Go runtime and process metrics at http://ADDR/metrics; the function it
// returns stops serving. Failing to listen is fatal, as a bad --remote is.
func serveMetrics(d *daemon.Daemon, addr string, dbFiles []string) func(*server.Server) func() {
	return func(srv *server.Server) func() {
		reg, err := metrics.NewRegistry(metrics.NewOVSDBCollector(srv, fileSizes(d, dbFiles)))
		if err != nil {
			d.Fatal(err)
		}
		ms, err := metrics.Serve(addr, reg, daemon.Module(d.Logger, "metrics"))
		if err != nil {
			d.Fatal(err)
		}
		return func() { ms.Close() }
	}
}

// fileSizes maps each database's name (read from its file's schema) to
// the current size of its file. A compaction or conversion replaces the
// file under the same path, so the size is looked up on every scrape.
func fileSizes(d *daemon.Daemon, dbFiles []string) map[string]func() int64 {
	sizes := map[string]func() int64{}
	for _, path := range dbFiles {
		sch, err := storage.ReadSchema(path)
		if err != nil {
			d.Logger.Warn("metrics: no size for database file: " + err.Error())
			continue
		}
		sizes[sch.Name] = func() int64 {
			st, err := os.Stat(path)
			if err != nil {
				return -1
			}
			return st.Size()
		}
	}
	return sizes
}
