package ovsdbd

import (
	"errors"
	"slices"
	"strings"

	"gvs/cmd/internal/daemon"
	"gvs/ovsdb/server"
)

// registerCommands adds ovsdb-server's control commands for remotes and
// databases, with Open vSwitch's usage strings and output formats.
func registerCommands(d *daemon.Daemon, srv *server.Server) {
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
