// Command gvs-ovsdb-server is gvs's stand-in for Open vSwitch's
// ovsdb-server: an RFC 7047 OVSDB server that ovs-vsctl, ovsdb-client,
// ovs-appctl and the OVS IDLs use unchanged. It takes ovsdb-server's command
// line:
//
//	gvs-ovsdb-server [DATABASE...] [--remote=REMOTE]... [--pidfile[=FILE]]
//	    [--detach] [--no-chdir] [--log-file[=FILE]] [--unixctl=SOCKET]
//	    [-vSPEC]... [--private-key=FILE --certificate=FILE --ca-cert=FILE]
//	    [--run=COMMAND]
//	    [--metrics-address=[HOST:]PORT]
//
// DATABASE defaults to $OVS_DBDIR/conf.db (OVS_DBDIR defaults to
// /etc/openvswitch). Like ovsdb-server it listens on no remote unless told
// to. Its pidfile and control socket are named after ovsdb-server, so
// `ovs-appctl -t ovsdb-server` reaches it. Each database lives in its file,
// in the standalone format of ovsdb-server and ovsdb-tool: every commit is
// written before it is acknowledged (and fsynced when the transaction asks
// for durability, or for every commit with the gvs option --sync), and the
// file is compacted as ovsdb-server does and on `ovsdb-server/compact`.
// A missing DATABASE is fatal as in ovsdb-server, except a conf.db that is
// a symbolic link to a file not created yet (Debian's layout): its target
// is created with the Open_vSwitch schema, as ovs-ctl's
// `ovsdb-tool create` would, and the link kept.
//
// --metrics-address (gvs option) serves Prometheus metrics at
// http://ADDR/metrics: connections, monitors, transactions by result,
// commit durations, database file sizes (package metrics). A PORT alone
// listens on loopback only.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"gvs/cmd/internal/daemon"
	"gvs/cmd/internal/ovsdbd"
)

var program = daemon.Program{Name: "ovsdb-server", Binary: "gvs-ovsdb-server"}

func main() {
	dirs := daemon.DirsFromEnv(os.Getenv)
	opts, cfg, err := parseCommandLine(os.Args[1:], dirs)
	if err != nil {
		daemon.Fatal(program, "%v", err)
	}
	if opts.Help {
		fmt.Print(usage(dirs))
		return
	}
	if opts.ShowVer {
		fmt.Println(program.VersionString())
		return
	}
	d, err := daemon.Start(program, dirs, &opts.Options)
	if err != nil {
		daemon.Fatal(program, "%v", err)
	}
	if opts.MetricsAddress != "" {
		cfg.Serving = serveMetrics(d, opts.MetricsAddress, cfg.DBFiles)
	}
	if err := ovsdbd.Run(d, cfg); err != nil {
		d.Fatal(err)
	}
}

func usage(dirs daemon.Dirs) string {
	return fmt.Sprintf(`%s: Open vSwitch compatible database server (gvs)
usage: %s [OPTIONS] [DATABASE...]
where each DATABASE is a database file in ovsdb format.
The default DATABASE, if none is given, is
%s/conf.db.

Remotes:
  --remote=REMOTE         connect or listen to REMOTE:
                          punix:PATH, ptcp:PORT[:IP], pssl:PORT[:IP]
  --run COMMAND           run COMMAND as subprocess then exit
  --sync                  fsync every commit before replying (gvs option)
  --metrics-address=[HOST:]PORT
                          serve Prometheus metrics on http://HOST:PORT/metrics
                          (loopback when only PORT is given; gvs option)
PKI configuration (required to use SSL):
  -p, --private-key=FILE  file with private key
  -c, --certificate=FILE  file with certificate for private key
  -C, --ca-cert=FILE      file with peer CA certificate
`, program.Binary, program.Binary, filepath.Clean(dirs.DB)) + daemon.DaemonUsage(program, dirs)
}
