package daemon

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// readyFDEnv marks the re-executed child of --detach and names the
// descriptor on which it reports readiness.
const readyFDEnv = "GVS_DETACH_READY_FD"

// detach implements --detach without fork (which Go cannot do safely): the
// first process re-executes itself in a new session with a pipe, and exits
// 0 only once the child writes to the pipe, that is once it serves; if the
// child dies first, the first process exits 1. So, as with Open vSwitch, a
// shell script may use the daemon as soon as the command returns.
//
// In the first process detach never returns. In the child it returns the
// function that reports readiness.
func detach(p Program) func() error {
	if fdText := os.Getenv(readyFDEnv); fdText != "" {
		os.Unsetenv(readyFDEnv) // not for our own children
		fd, err := strconv.Atoi(fdText)
		if err != nil {
			Fatal(p, "bad %s=%q", readyFDEnv, fdText)
		}
		pipe := os.NewFile(uintptr(fd), "detach-ready")
		return func() error { return reportReady(pipe) }
	}
	self, err := os.Executable()
	if err != nil {
		Fatal(p, "--detach: cannot find own executable: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		Fatal(p, "--detach: pipe: %v", err)
	}
	child := exec.Command(self, os.Args[1:]...)
	child.Args[0] = os.Args[0]
	// ExtraFiles[0] becomes descriptor 3 in the child.
	child.Env = append(os.Environ(), readyFDEnv+"=3")
	child.ExtraFiles = []*os.File{w}
	child.Stdout, child.Stderr = os.Stdout, os.Stderr // until it is ready
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := child.Start(); err != nil {
		Fatal(p, "--detach: could not start daemon: %v", err)
	}
	w.Close()
	var buf [1]byte
	if n, _ := r.Read(buf[:]); n == 1 {
		os.Exit(0)
	}
	err = child.Wait()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		Fatal(p, "fork child died before signaling startup (%s)", exitErr.ProcessState)
	}
	Fatal(p, "fork child died before signaling startup (%v)", err)
	return nil
}

// reportReady releases the waiting first process and detaches the standard
// descriptors from its terminal.
func reportReady(pipe *os.File) error {
	if _, err := pipe.Write([]byte{1}); err != nil {
		return fmt.Errorf("reporting readiness: %w", err)
	}
	pipe.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	for fd := 0; fd <= 2; fd++ {
		if err := syscall.Dup3(int(null.Fd()), fd, 0); err != nil {
			return fmt.Errorf("redirecting descriptor %d: %w", fd, err)
		}
	}
	return nil
}
