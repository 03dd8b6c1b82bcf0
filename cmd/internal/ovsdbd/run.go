package ovsdbd

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"gvs/cmd/internal/daemon"
)

// runCommand is ovsdb-server --run: once the server serves, COMMAND runs
// under /bin/sh -c and the daemon exits when it ends. The returned
// function, called after the server closed, reports the command's end as
// ovsdb-server does: nothing when it exited 0, otherwise
// "COMMAND: child exited, exit status N" (or "killed (SIGNAME)") and exit
// status 1. An "exit" command or a signal may end the daemon first; the
// command is then left running, as in ovsdb-server.
func runCommand(d *daemon.Daemon, command string) (finish func(), err error) {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: process failed to start (%w)", command, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
		d.RequestExit()
	}()
	return func() {
		select {
		case <-exited:
		default:
			return
		}
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws == 0 {
			return
		}
		daemon.Fatal(d.Program, "%s: child exited, %s", command, daemon.WaitStatusMessage(ws))
	}, nil
}
