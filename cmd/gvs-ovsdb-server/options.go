package main

import (
	"errors"
	"path/filepath"
	"strings"

	"gvs/cmd/internal/daemon"
	"gvs/cmd/internal/ovsdbd"
	"gvs/metrics"
	"gvs/schema"
)

type options struct {
	daemon.Options
	// MetricsAddress is --metrics-address (gvs option): "" serves no
	// metrics.
	MetricsAddress string
}

// parseCommandLine reads ovsdb-server's options. Options gvs does not
// implement are either accepted with a warning (when ignoring them is
// harmless) or refused.
func parseCommandLine(args []string, dirs daemon.Dirs) (*options, ovsdbd.Config, error) {
	o := &options{}
	cfg := ovsdbd.Config{Commands: true, LinkTargetSchema: linkTargetSchema}
	noDBs := false
	tlsFile := func(dst *string, name string) func(string, bool) error {
		return func(v string, _ bool) error {
			if strings.HasPrefix(v, "db:") {
				o.Notes = append(o.Notes, name+"="+v+": settings read from the database are not supported yet; ignored")
				return nil
			}
			abs, err := filepath.Abs(v)
			*dst = abs
			return err
		}
	}
	unsupported := func(name string) func(string, bool) error {
		return func(string, bool) error { return errors.New(name + " is not supported by gvs") }
	}
	opts := append(o.DaemonOptions(program, dirs),
		daemon.Option{Long: "remote", Arg: daemon.RequiredArg, Set: func(v string, _ bool) error {
			cfg.Remotes = append(cfg.Remotes, v)
			return nil
		}},
		daemon.Option{Long: "private-key", Short: 'p', Arg: daemon.RequiredArg, Set: tlsFile(&cfg.TLS.PrivateKey, "--private-key")},
		daemon.Option{Long: "certificate", Short: 'c', Arg: daemon.RequiredArg, Set: tlsFile(&cfg.TLS.Certificate, "--certificate")},
		daemon.Option{Long: "ca-cert", Short: 'C', Arg: daemon.RequiredArg, Set: tlsFile(&cfg.TLS.CACert, "--ca-cert")},
		daemon.Option{Long: "bootstrap-ca-cert", Arg: daemon.RequiredArg, Set: o.Ignored("--bootstrap-ca-cert")},
		daemon.Option{Long: "peer-ca-cert", Arg: daemon.RequiredArg, Set: o.Ignored("--peer-ca-cert")},
		daemon.Option{Long: "ssl-protocols", Arg: daemon.RequiredArg, Set: o.Ignored("--ssl-protocols")},
		daemon.Option{Long: "ssl-ciphers", Arg: daemon.RequiredArg, Set: o.Ignored("--ssl-ciphers")},
		daemon.Option{Long: "disable-file-column-diff", Set: func(string, bool) error { cfg.NoColumnDiff = true; return nil }},
		daemon.Option{Long: "metrics-address", Arg: daemon.RequiredArg, Set: func(v string, _ bool) error {
			if _, err := metrics.ListenAddress(v); err != nil {
				return err
			}
			o.MetricsAddress = v
			return nil
		}},
		daemon.Option{Long: "sync", Set: func(string, bool) error { cfg.Sync = true; return nil }},
		daemon.Option{Long: "no-dbs", Set: func(string, bool) error { noDBs = true; return nil }},
		daemon.Option{Long: "run", Arg: daemon.RequiredArg, Set: func(v string, _ bool) error {
			cfg.RunCommand, o.Transient = v, true
			return nil
		}},
		daemon.Option{Long: "sync-from", Arg: daemon.RequiredArg, Set: unsupported("--sync-from")},
		daemon.Option{Long: "sync-exclude-tables", Arg: daemon.RequiredArg, Set: unsupported("--sync-exclude-tables")},
		daemon.Option{Long: "active", Set: unsupported("--active")},
	)
	dbs, err := daemon.ParseArgs(args, opts)
	if err != nil {
		return nil, cfg, err
	}
	if len(dbs) == 0 && !noDBs {
		dbs = []string{filepath.Join(dirs.DB, "conf.db")}
	}
	for _, path := range dbs {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, cfg, err
		}
		cfg.DBFiles = append(cfg.DBFiles, abs)
	}
	return o, cfg, nil
}

// linkTargetSchema creates the Open_vSwitch database behind a conf.db that
// is a dangling symbolic link: Debian's package installs
// /etc/openvswitch/conf.db that way, and ovs-ctl runs `ovsdb-tool create`
// on it before starting the server. A missing file that is not a link, or
// one with another name, is fatal as in ovsdb-server.
func linkTargetSchema(path string) []byte {
	if filepath.Base(path) == "conf.db" {
		return schema.VSwitch()
	}
	return nil
}
