package ovsdbd

import (
	"errors"
	"log/slog"
	"slices"
	"strings"

	"gvs/cmd/internal/daemon"
	"gvs/ovsdb/server"
	"gvs/ovsdb/storage"
)

// registerCommands adds ovsdb-server's control commands for remotes and
// databases, with Open vSwitch's usage strings and output formats.
func registerCommands(d *daemon.Daemon, srv *server.Server, files []*storage.Storage, logger *slog.Logger) {
	d.Control.Register("ovsdb-server/add-remote", "REMOTE", 1, 1, func(args []string) (string, error) {
		remote := args[0]
		if strings.HasPrefix(remote, "db:") {
			return "", errors.New("remotes read from the database (db:) are not supported yet")
		}
		if slices.Contains(srv.Remotes(), remote) {
			return "", nil
		}
		return "", srv.AddRemote(remote)
	})
	d.Control.Register("ovsdb-server/remove-remote", "REMOTE", 1, 1, func(args []string) (string, error) {
		if !slices.Contains(srv.Remotes(), args[0]) {
			return "", errors.New("no such remote")
		}
		return "", srv.RemoveRemote(args[0])
	})
	d.Control.Register("ovsdb-server/list-remotes", "", 0, 0, func([]string) (string, error) {
		return lines(srv.Remotes()), nil
	})
	d.Control.Register("ovsdb-server/list-dbs", "", 0, 0, func([]string) (string, error) {
		return lines(srv.Databases()), nil
	})
	d.Control.Register("ovsdb-server/compact", "[DB]", 0, 1, func(args []string) (string, error) {
		return "", compact(files, args, logger)
	})
}

// compact is ovsdb-server/compact: it compacts the named database, or all
// of them, and reports the errors one a line.
func compact(files []*storage.Storage, args []string, logger *slog.Logger) error {
	name := ""
	if len(args) > 0 {
		name = args[0]
	}
	if strings.HasPrefix(name, "_") {
		return errors.New("cannot compact built-in databases")
	}
	var failures []string
	n := 0
	for _, f := range files {
		dbName := f.Database().Schema().Name
		if name != "" && dbName != name {
			continue
		}
		n++
		logger.Info("compacting " + dbName + " database by user request")
		if err := f.Compact(); err != nil {
			failures = append(failures, err.Error())
		}
	}
	switch {
	case n == 0:
		return errors.New("no database by that name")
	case len(failures) > 0:
		return errors.New(lines(failures))
	}
	return nil
}

// lines formats a list one item a line, as ovsdb-server does.
func lines(items []string) string {
	var b strings.Builder
	for _, item := range items {
		b.WriteString(item)
		b.WriteByte('\n')
	}
	return b.String()
}
