package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Commands maps each hidden sub-command name to its implementation.
var commands = map[string]func(args []string, stdout io.Writer) error{
	"_ping":        pingMain,
	"_rr-server":   rrServerMain,
	"_rr-client":   rrClientMain,
	"_flow-recv":   flowRecvMain,
	"_flow-send":   flowSendMain,
	"_txoff":       txOffMain,
	"_l2check":     l2CheckMain,
	"_conn-server": connServerMain,
	"_conn-client": connClientMain,
	"_conn-hold":   connHoldMain,
}

// IsCommand reports whether name is a hidden sub-command.
func IsCommand(name string) bool {
	_, ok := commands[name]
	return ok
}

// Main runs sub-command args[0] and returns the process exit status.
func Main(args []string) int {
	fn, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "gvs-bench: unknown sub-command %s\n", args[0])
		return 2
	}
	if err := fn(args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "gvs-bench %s: %v\n", strings.TrimPrefix(args[0], "_"), err)
		return 1
	}
	return 0
}

func writeJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}

// waitStdinClosed returns a channel closed when standard input reaches EOF
// (the parent closed its end): the stop signal of every server here.
func waitStdinClosed() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	return done
}
