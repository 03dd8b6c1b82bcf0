package ovsdbd

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"gvs/cmd/internal/daemon"
	"gvs/cmd/internal/dbfile"
	"gvs/ovsdb/db"
	"gvs/ovsdb/server"
)

// Config is what to serve.
type Config struct {
	// DBFiles are the database files, absolute paths.
	DBFiles []string
	// CreateSchema, when set, creates missing database files with this
	// schema (gvs-vswitchd's conf.db); otherwise a missing file is fatal,
	// as in ovsdb-server.
	CreateSchema []byte
	// Remotes are the listeners: punix:PATH, ptcp:PORT[:IP], pssl:PORT[:IP].
	Remotes []string
	TLS     server.TLSFiles
	// Commands registers ovsdb-server's ovsdb-server/* control commands.
	Commands bool
}

// Run serves until "exit" or a terminating signal. It returns an error, to
// be reported as fatal, when the daemon could not start; otherwise it never
// returns: the daemon exits (see daemon.Close).
func Run(d *daemon.Daemon, cfg Config) error {
	logger := daemon.Module(d.Logger, "ovsdb_server")
	srv := server.New(logger)
	if err := addDatabases(srv, logger, cfg); err != nil {
		return err
	}
	if cfg.TLS != (server.TLSFiles{}) {
		if err := srv.SetTLS(cfg.TLS); err != nil {
			return err
		}
	}
	for _, remote := range cfg.Remotes {
		if strings.HasPrefix(remote, "db:") {
			logger.Warn(remote + ": remotes read from the database are not supported yet; ignored")
			continue
		}
		if err := srv.AddRemote(remote); err != nil {
			return fmt.Errorf("%s: %w", remote, err)
		}
	}
	if cfg.Commands {
		registerCommands(d, srv)
	}
	if err := d.Ready(); err != nil {
		srv.Close()
		return err
	}
	sig := d.Wait()
	srv.Close()
	d.Close(sig)
	return nil
}

func addDatabases(srv *server.Server, logger *slog.Logger, cfg Config) error {
	var names []string
	for _, path := range cfg.DBFiles {
		d, err := load(path, logger, cfg.CreateSchema)
		if err != nil {
			return err
		}
		name := d.Schema().Name
		if slices.Contains(names, name) {
			return fmt.Errorf("%s: duplicate database name", name)
		}
		names = append(names, name)
		if err := srv.AddDatabase(d); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// load reads the schema of the file at path, creating the file first when
// it is missing and create is set.
func load(path string, logger *slog.Logger, create []byte) (*db.Database, error) {
	raw, hasData, err := dbfile.ReadSchema(path)
	if errors.Is(err, os.ErrNotExist) && create != nil {
		if err := dbfile.Create(path, create); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%s: creating database: %w", path, err)
		}
		logger.Info(path + ": created empty database")
		raw, hasData, err = dbfile.ReadSchema(path)
	}
	var pathErr *os.PathError
	if errors.As(err, &pathErr) {
		return nil, fmt.Errorf("I/O error: %s: open failed (%s)", path, strerror(pathErr.Err))
	}
	if err != nil {
		return nil, err
	}
	schema, err := db.ParseSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if hasData {
		logger.Warn(path + ": the file holds data records that gvs cannot load yet (storage comes with a later issue); serving an empty database")
	}
	logger.Warn(path + ": changes are kept in memory only and are lost when the daemon exits (storage comes with a later issue)")
	return db.New(schema, logger), nil
}

// strerror capitalises an errno text as C's strerror does ("No such file or
// directory"), which is how Open vSwitch reports them.
func strerror(err error) string {
	text := err.Error()
	if text == "" {
		return text
	}
	return strings.ToUpper(text[:1]) + text[1:]
}
