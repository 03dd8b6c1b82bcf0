package ovsdbd

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"gvs/cmd/internal/daemon"
	"gvs/ovsdb/db"
	"gvs/ovsdb/server"
	"gvs/ovsdb/storage"
)

// Config is what to serve.
type Config struct {
	// DBFiles are the database files, absolute paths.
	DBFiles []string
	// CreateSchema, when set, creates missing database files with this
	// schema (gvs-vswitchd's conf.db); otherwise a missing file is fatal,
	// as in ovsdb-server. A file that is a symbolic link to a file that
	// does not exist yet (Debian's /etc/openvswitch/conf.db) counts as
	// missing: its target is created and the link kept.
	CreateSchema []byte
	// LinkTargetSchema, when set and CreateSchema is not, is asked for the
	// schema of a database file that is a dangling symbolic link: its
	// target is created with that schema, as ovs-ctl's `ovsdb-tool create`
	// would before starting ovsdb-server. nil (the function or its result)
	// leaves such a file missing, which is fatal.
	LinkTargetSchema func(path string) []byte
	// CompactMinSize is the size over which a database log is compacted
	// automatically (with the rest of ovsdb-server's rule, see
	// storage.Options); 0 takes Open vSwitch's 10 MB.
	CompactMinSize int64
	// Remotes are the listeners: punix:PATH, ptcp:PORT[:IP], pssl:PORT[:IP].
	Remotes []string
	TLS     server.TLSFiles
	// Commands registers ovsdb-server's ovsdb-server/* control commands.
	Commands bool
	// Sync fsyncs every commit before acknowledging it (by default only
	// transactions with a durable "commit" are fsynced, as in ovsdb-server).
	Sync bool
	// NoColumnDiff writes whole column values instead of diffs
	// (--disable-file-column-diff).
	NoColumnDiff bool
	// UpgradeSchema, when set, converts a database file of the same name
	// but a different schema to it at startup, keeping the data
	// (gvs-vswitchd upgrades conf.db to its embedded schema this way).
	UpgradeSchema []byte
	// RunCommand is --run: a shell command run once the server serves;
	// the daemon exits when it ends, with status 1 if it failed.
	RunCommand string
	// Program names the daemon in the comment of a conversion record.
	Program string
	// Serving, when set, is called once the server listens; the function
	// it returns is called on exit before the server closes (gvs-vswitchd
	// starts and tears down its switch this way, and exports the server's
	// metrics).
	Serving func(srv *server.Server) (stop func())
}

// Run serves until "exit" or a terminating signal. It returns an error, to
// be reported as fatal, when the daemon could not start; otherwise it never
// returns: the daemon exits (see daemon.Close).
func Run(d *daemon.Daemon, cfg Config) error {
	logger := daemon.Module(d.Logger, "ovsdb_server")
	srv := server.New(logger)
	opened, err := addDatabases(srv, logger, cfg)
	files := &fileSet{files: opened}
	closeFiles := func() {
		files.closeAll(func(path string, err error) {
			logger.Error(path + ": close failed: " + err.Error())
		})
	}
	if err != nil {
		closeFiles()
		return err
	}
	srv.SetConverter(fileConverter(files))
	if cfg.TLS != (server.TLSFiles{}) {
		if err := srv.SetTLS(cfg.TLS); err != nil {
			closeFiles()
			return err
		}
	}
	for _, remote := range cfg.Remotes {
		if strings.HasPrefix(remote, "db:") {
			logger.Warn(remote + ": remotes read from the database are not supported yet; ignored")
			continue
		}
		if err := srv.AddRemote(remote); err != nil {
			srv.Close()
			closeFiles()
			return fmt.Errorf("%s: %w", remote, err)
		}
	}
	if cfg.Commands {
		registerCommands(d, srv, files, logger, cfg)
	}
	if err := d.Ready(); err != nil {
		srv.Close()
		closeFiles()
		return err
	}
	stop := func() {}
	if cfg.Serving != nil {
		stop = cfg.Serving(srv)
	}
	finishRun := func() {}
	if cfg.RunCommand != "" {
		if finishRun, err = runCommand(d, cfg.RunCommand); err != nil {
			stop()
			srv.Close()
			closeFiles()
			return err
		}
	}
	sig := d.Wait()
	stop()
	srv.Close()
	closeFiles()
	d.Close(sig)
	finishRun()
	return nil
}

func addDatabases(srv *server.Server, logger *slog.Logger, cfg Config) ([]*storage.Storage, error) {
	var upgrade *db.Schema
	if cfg.UpgradeSchema != nil {
		var err error
		if upgrade, err = db.ParseSchema(cfg.UpgradeSchema); err != nil {
			return nil, fmt.Errorf("embedded schema: %w", err)
		}
	}
	var files []*storage.Storage
	var names []string
	for _, path := range cfg.DBFiles {
		f, err := open(path, logger, cfg, upgrade)
		if err != nil {
			return files, err
		}
		files = append(files, f)
		d := f.Database()
		name := d.Schema().Name
		if slices.Contains(names, name) {
			return files, fmt.Errorf("%s: duplicate database name", name)
		}
		names = append(names, name)
		if err := srv.AddDatabase(d); err != nil {
			return files, fmt.Errorf("%s: %w", path, err)
		}
	}
	return files, nil
}

// fileConverter converts a served database in its file for the "convert"
// method: the file is rewritten atomically with the new schema and the
// converted data, with ovsdb-server's comment, before the server swaps the
// databases.
func fileConverter(files *fileSet) server.ConvertFunc {
	return func(name string, schema *db.Schema) (*db.Database, error) {
		if f := files.byName(name); f != nil {
			return f.Convert(schema, "converted by ovsdb-server")
		}
		return nil, fmt.Errorf("%s: no database file", name)
	}
}

// open loads the database file at path and keeps it up to date, creating
// the file first when it is missing and cfg says with which schema.
func open(path string, logger *slog.Logger, cfg Config, upgrade *db.Schema) (*storage.Storage, error) {
	if schema := createSchema(path, cfg); schema != nil {
		if err := storage.Create(path, schema); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%s: creating database: %w", path, err)
		}
		if target, err := os.Readlink(path); err == nil {
			logger.Info(path + ": created empty database at the symbolic link's target " + target)
		} else {
			logger.Info(path + ": created empty database")
		}
	}
	opts := storage.Options{Sync: cfg.Sync, NoColumnDiff: cfg.NoColumnDiff, Schema: upgrade, CompactMinSize: cfg.CompactMinSize}
	if upgrade != nil {
		opts.ConvertComment = "converted by " + cfg.Program
	}
	f, err := storage.Open(path, logger, opts)
	var pathErr *os.PathError
	if errors.As(err, &pathErr) && pathErr.Path == path {
		return nil, fmt.Errorf("I/O error: %s: open failed (%s)", path, strerror(pathErr.Err))
	}
	return f, err
}

// createSchema is the schema to create the database file at path with, or
// nil when it exists or is not to be created. os.Stat follows links, so a
// dangling link is missing too.
func createSchema(path string, cfg Config) []byte {
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if cfg.CreateSchema != nil {
		return cfg.CreateSchema
	}
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 && cfg.LinkTargetSchema != nil {
		return cfg.LinkTargetSchema(path)
	}
	return nil
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
