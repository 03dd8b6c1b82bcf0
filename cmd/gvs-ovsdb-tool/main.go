// Command gvs-ovsdb-tool is gvs's stand-in for the standalone-database
// subcommands of Open vSwitch's ovsdb-tool, with the same arguments,
// defaults and output, so scripts (and `make run`) can create, inspect and
// upgrade a database without Open vSwitch installed:
//
//	gvs-ovsdb-tool [-m]... COMMAND [ARG...]
//	  create [DB [SCHEMA]]            create DB with the given SCHEMA
//	  compact [DB [DST]]              compact DB in-place (or to DST)
//	  convert [DB [SCHEMA [DST]]]     convert DB to SCHEMA (to DST)
//	  needs-conversion [DB [SCHEMA]]  "yes" or "no"
//	  db-name|db-version|db-cksum [DB]
//	  db-is-standalone DB, db-is-clustered DB   (exit status 2 when not)
//	  schema-name|schema-version|schema-cksum [SCHEMA]
//	  query [DB] TRNS, transact [DB] TRNS
//	  show-log [DB]                   print DB's records (-m, -mm: more)
//
// DB defaults to $OVS_DBDIR/conf.db, SCHEMA to
// $OVS_PKGDATADIR/vswitch.ovsschema (/usr/share/openvswitch), or the copy
// of Open vSwitch 3.1's schema built into gvs when that is missing. Errors are
// printed as "gvs-ovsdb-tool: MESSAGE" with exit status 1. Clustered
// databases are not supported.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gvs/cmd/internal/daemon"
)

const program = "gvs-ovsdb-tool"

// tool is one run: its options, defaults and output.
type tool struct {
	verbosity int
	dbDefault string
	schemaDef string
	stdout    io.Writer
}

// exitError carries an exit status other than 1 (db-is-standalone's 2).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	t := &tool{stdout: os.Stdout}
	dirs := daemon.DirsFromEnv(os.Getenv)
	t.dbDefault = filepath.Join(dirs.DB, "conf.db")
	pkgdata := os.Getenv("OVS_PKGDATADIR")
	if pkgdata == "" {
		pkgdata = "/usr/share/openvswitch"
	}
	t.schemaDef = filepath.Join(pkgdata, "vswitch.ovsschema")
	if err := t.run(os.Args[1:]); err != nil {
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(exit.code)
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", program, err)
		os.Exit(1)
	}
}

func (t *tool) run(args []string) error {
	help, version := false, false
	opts := []daemon.Option{
		{Long: "more", Short: 'm', Set: func(string, bool) error { t.verbosity++; return nil }},
		{Long: "rbac-role", Arg: daemon.RequiredArg, Set: func(string, bool) error { return nil }},
		{Long: "verbose", Short: 'v', Arg: daemon.OptionalArg, Set: func(string, bool) error { return nil }},
		{Long: "help", Short: 'h', Set: func(string, bool) error { help = true; return nil }},
		{Long: "version", Short: 'V', Set: func(string, bool) error { version = true; return nil }},
	}
	operands, err := daemon.ParseArgs(args, opts)
	if err != nil {
		return err
	}
	switch {
	case help:
		fmt.Fprint(t.stdout, t.usage())
		return nil
	case version:
		fmt.Fprintf(t.stdout, "%s (gvs) %s\n", program, daemon.Version)
		return nil
	case len(operands) == 0:
		return errors.New("missing command name; use --help for help")
	}
	cmd, ok := commands[operands[0]]
	if !ok {
		return fmt.Errorf("unknown command '%s'; use --help for help", operands[0])
	}
	n := len(operands) - 1
	if n < cmd.min {
		return fmt.Errorf("'%s' command requires at least %d arguments", operands[0], cmd.min)
	}
	if n > cmd.max {
		return fmt.Errorf("'%s' command takes at most %d arguments", operands[0], cmd.max)
	}
	return cmd.run(t, operands[1:])
}

// arg returns args[i], or def when there are not that many.
func arg(args []string, i int, def string) string {
	if i < len(args) {
		return args[i]
	}
	return def
}

func (t *tool) usage() string {
	return fmt.Sprintf(`%s: Open vSwitch database management utility (gvs)
usage: %s [OPTIONS] COMMAND [ARG...]
  create [DB [SCHEMA]]    create DB with the given SCHEMA
  compact [DB [DST]]      compact DB in-place (or to DST)
  convert [DB [SCHEMA [DST]]]   convert DB to SCHEMA (to DST)
  needs-conversion [DB [SCHEMA]]  report whether DB needs conversion to SCHEMA
  db-name [DB]            report name of schema used by DB
  db-version [DB]         report version of schema used by DB
  db-cksum [DB]           report checksum of schema used by DB
  db-is-clustered DB      test whether DB is clustered
  db-is-standalone DB     test whether DB is standalone
  schema-name [SCHEMA]    report SCHEMA's name
  schema-version [SCHEMA] report SCHEMA's schema version
  schema-cksum [SCHEMA]   report SCHEMA's checksum
  query [DB] TRNS         execute read-only transaction on DB
  transact [DB] TRNS      execute read/write transaction on DB
  [-m]... show-log [DB]   print DB's log entries
The default DB is %s.
The default SCHEMA is %s.

Other options:
  -m, --more                  increase show-log verbosity
  -h, --help                  display this help message
  -V, --version               display version information
`, program, program, t.dbDefault, t.schemaDef)
}
