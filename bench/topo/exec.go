package topo

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// commandTimeout bounds every ip(8) invocation.
const commandTimeout = 10 * time.Second

// Command returns a command that runs argv inside namespace ns (the root
// namespace when ns is ""). It is killed when ctx ends and when this process
// dies.
func Command(ctx context.Context, ns string, argv ...string) *exec.Cmd {
	if ns != "" {
		argv = append([]string{"ip", "netns", "exec", ns}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// Run runs argv in ns with a bounded time and returns its standard output;
// the error carries standard error.
func Run(ctx context.Context, ns string, argv ...string) (string, error) {
	return RunFor(ctx, commandTimeout, ns, argv...)
}

// RunFor is Run with a time limit of its own, for commands that may
// legitimately take long (a switch applying hundreds of ports).
func RunFor(ctx context.Context, limit time.Duration, ns string, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := Command(ctx, ns, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// ip runs ip(8) in the root namespace.
func ip(ctx context.Context, args ...string) error {
	_, err := Run(ctx, "", append([]string{"ip"}, args...)...)
	return err
}
