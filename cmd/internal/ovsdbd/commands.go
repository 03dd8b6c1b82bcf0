package ovsdbd

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"gvs/cmd/internal/daemon"
	"gvs/ovsdb/server"
	"gvs/ovsdb/storage"
)

// remoteSet is ovsdb-server's configured remotes: what list-remotes shows,
// including remotes read from the database and listeners that failed to
// start (ovsdb-server keeps those configured and logs the failure).
type remoteSet struct {
	mu      sync.Mutex
	remotes []string
}

func (r *remoteSet) add(remote string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(r.remotes, remote) {
		return false
	}
	r.remotes = append(r.remotes, remote)
	return true
}

func (r *remoteSet) remove(remote string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.Index(r.remotes, remote)
	if i < 0 {
		return false
	}
	r.remotes = slices.Delete(r.remotes, i, i+1)
	return true
}

func (r *remoteSet) sorted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.remotes)
	slices.Sort(out)
	return out
}

// registerCommands adds ovsdb-server's control commands for remotes and
// databases, with Open vSwitch 3.1's usage strings, replies and errors.
// The replication commands answer as a standalone active server does.
func registerCommands(d *daemon.Daemon, srv *server.Server, files *fileSet, logger *slog.Logger, cfg Config) {
	remotes := &remoteSet{}
	for _, r := range cfg.Remotes {
		remotes.add(r)
	}
	c := d.Control
	c.Register("ovsdb-server/add-remote", "REMOTE", 1, 1, func(args []string) (string, error) {
		remote := args[0]
		if strings.HasPrefix(remote, "db:") {
			if err := checkDBRemote(srv, remote); err != nil {
				return "", err
			}
			if remotes.add(remote) {
				logger.Warn(remote + ": remotes read from the database are not supported yet; ignored")
			}
			return "", nil
		}
		if !remotes.add(remote) {
			return "", nil
		}
		// As in ovsdb-server, a remote that cannot listen stays
		// configured; the server logs the failure.
		srv.AddRemote(remote)
		return "", nil
	})
	c.Register("ovsdb-server/remove-remote", "REMOTE", 1, 1, func(args []string) (string, error) {
		if !remotes.remove(args[0]) {
			return "", errors.New("no such remote")
		}
		if slices.Contains(srv.Remotes(), args[0]) {
			return "", srv.RemoveRemote(args[0])
		}
		return "", nil
	})
	c.Register("ovsdb-server/list-remotes", "", 0, 0, func([]string) (string, error) {
		return lines(remotes.sorted()), nil
	})
	c.Register("ovsdb-server/list-dbs", "", 0, 0, func([]string) (string, error) {
		return lines(srv.Databases()), nil
	})
	c.Register("ovsdb-server/add-db", "DB", 1, 1, func(args []string) (string, error) {
		return "", addDB(srv, files, logger, cfg, args[0])
	})
	c.Register("ovsdb-server/remove-db", "DB", 1, 1, func(args []string) (string, error) {
		name := args[0]
		if strings.HasPrefix(name, "_") && slices.Contains(srv.Databases(), name) {
			return "", errors.New("Cannot remove reserved database.")
		}
		f := files.byName(name)
		if f == nil {
			return "", errors.New("Failed to find the database.")
		}
		if err := srv.RemoveDatabase(name); err != nil {
			return "", errors.New("Failed to find the database.")
		}
		files.remove(f)
		if err := f.Close(); err != nil {
			logger.Error(f.Path() + ": close failed: " + err.Error())
		}
		return "", nil
	})
	c.Register("ovsdb-server/compact", "", 0, 1, func(args []string) (string, error) {
		return "", compact(files.list(), args, logger)
	})
	c.Register("ovsdb-server/reconnect", "", 0, 0, func([]string) (string, error) {
		srv.Reconnect("user ran ovsdb-server/reconnect")
		return "", nil
	})
	c.Register("ovsdb-server/disable-monitor-cond", "", 0, 0, func([]string) (string, error) {
		srv.DisableMonitorCond()
		return "", nil
	})
	// gvs reads no hardware performance counters; this is the reply of an
	// ovsdb-server that could not open them (Debian's in a container).
	c.Register("ovsdb-server/perf-counters-show", "", 0, 0, func([]string) (string, error) {
		return "performance counter is not supported on this platform", nil
	})
	c.Register("ovsdb-server/perf-counters-clear", "", 0, 0, func([]string) (string, error) {
		return "", nil
	})
	// A standalone server without --sync-from is the active server.
	c.Register("ovsdb-server/sync-status", "", 0, 0, func([]string) (string, error) {
		return "state: active\n", nil
	})
	c.Register("ovsdb-server/get-active-ovsdb-server", "", 0, 0, func([]string) (string, error) {
		return "", nil
	})
	c.Register("ovsdb-server/get-sync-exclude-tables", "", 0, 0, func([]string) (string, error) {
		return "", nil
	})
	// gvs-vswitchd replaces this with the switch's report once it runs.
	c.Register("memory/show", "", 0, 0, func([]string) (string, error) {
		return server.FormatMemoryUsage(srv.MemoryUsage()) + "\n", nil
	})
}

// checkDBRemote validates a db:DB,TABLE,COLUMN remote as ovsdb-server's
// parse_db_column does, with its error texts.
func checkDBRemote(srv *server.Server, remote string) error {
	parts := strings.Split(strings.TrimPrefix(remote, "db:"), ",")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return fmt.Errorf("\"%s\": invalid syntax", remote)
	}
	schema := srv.Schema(parts[0])
	if schema == nil {
		return fmt.Errorf("\"%s\": no database named %s", remote, parts[0])
	}
	t := schema.Tables[parts[1]]
	if t == nil {
		return fmt.Errorf("\"%s\": no table named %s", remote, parts[1])
	}
	if t.Column(parts[2]) == nil {
		return fmt.Errorf("\"%s\": table \"%s\" has no column \"%s\"", remote, parts[1], parts[2])
	}
	return nil
}

// addDB is ovsdb-server/add-db: it opens the file and serves its
// database, with ovsdb-server's errors for a file already open, a
// reserved or duplicate name.
func addDB(srv *server.Server, files *fileSet, logger *slog.Logger, cfg Config, path string) error {
	if files.isOpen(path) {
		return fmt.Errorf("ovsdb error: %s: already open", path)
	}
	addCfg := cfg
	addCfg.CreateSchema, addCfg.LinkTargetSchema = nil, nil
	f, err := open(path, logger, addCfg, nil)
	if err != nil {
		return err
	}
	name := f.Database().Schema().Name
	var failure error
	switch {
	case strings.HasPrefix(name, "_"):
		failure = fmt.Errorf("ovsdb error: %s: names beginning with \"_\" are reserved", name)
	case files.byName(name) != nil || slices.Contains(srv.Databases(), name):
		failure = fmt.Errorf("ovsdb error: %s: duplicate database name", name)
	default:
		failure = srv.AddDatabase(f.Database())
	}
	if failure != nil {
		f.Close()
		return failure
	}
	files.add(f)
	return nil
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
