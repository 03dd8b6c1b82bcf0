package daemon

import (
	"strings"
	"testing"
)

// FuzzParseArgs feeds arbitrary command lines to the option parser: it
// must return an error or a result, never panic, and every operand it
// returns must be one of the words it was given.
func FuzzParseArgs(f *testing.F) {
	f.Add("a.db --remote=punix:/x -vconsole:off --pidfile -- --y")
	f.Add("--pid --log-file= -v -vfile:dbg,ovsdb_server --det")
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, " ")
		o := &Options{}
		opts := append(o.DaemonOptions(Program{Name: "p", Binary: "gvs-p"}, Dirs{Run: "/r", DB: "/d", Log: "/l"}),
			Option{Long: "remote", Arg: RequiredArg, Set: func(string, bool) error { return nil }})
		operands, err := ParseArgs(args, opts)
		if err != nil {
			return
		}
		given := map[string]bool{}
		for _, a := range args {
			given[a] = true
		}
		for _, op := range operands {
			if !given[op] {
				t.Fatalf("operand %q not among the arguments", op)
			}
		}
	})
}
