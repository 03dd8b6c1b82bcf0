package daemon

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// Environment of a daemon started by a --monitor process: monitoredEnv
// marks it, monitorReadyFDEnv names the descriptor on which it reports
// readiness to the monitor.
const (
	monitoredEnv      = "GVS_MONITORED"
	monitorReadyFDEnv = "GVS_MONITOR_READY_FD"
)

// crashSignals are the signals after which --monitor restarts the daemon,
// Open vSwitch's list (daemon.man): a death by any other signal, or an
// exit, ends the monitor too.
var crashSignals = []syscall.Signal{
	syscall.SIGABRT, syscall.SIGALRM, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL,
	syscall.SIGPIPE, syscall.SIGSEGV, syscall.SIGXCPU, syscall.SIGXFSZ,
}

// restartThrottle is the least time between two restarts.
const restartThrottle = 10 * time.Second

// isMonitored reports whether this process is the daemon of a --monitor
// process.
func isMonitored() bool { return os.Getenv(monitoredEnv) != "" }

// monitoredReady is the readiness report of a monitored daemon: it tells
// the monitor, and with --detach also leaves the terminal.
func monitoredReady(p Program, detached bool) func() error {
	fdText := os.Getenv(monitorReadyFDEnv)
	os.Unsetenv(monitorReadyFDEnv)
	os.Unsetenv(monitoredEnv) // not for our own children
	fd, err := strconv.Atoi(fdText)
	if err != nil {
		Fatal(p, "bad %s=%q", monitorReadyFDEnv, fdText)
	}
	pipe := os.NewFile(uintptr(fd), "monitor-ready")
	return func() error {
		if detached {
			return reportReady(pipe)
		}
		_, err := pipe.Write([]byte{1})
		pipe.Close()
		return err
	}
}

// dieLikeC makes the daemon die of the signals a C daemon dies of, so a
// monitor sees the crash: a kill -SEGV (which Go would turn into exit
// status 2) ends the process by SIGSEGV, and a Go panic ends it by SIGABRT
// (traceback "crash"), as an Open vSwitch assertion failure does.
// Synchronous faults are unaffected: the runtime still reports them.
func dieLikeC() {
	debug.SetTraceback("crash")
	sigs := make(chan os.Signal, 1)
	notify := make([]os.Signal, 0, len(crashSignals))
	for _, s := range crashSignals {
		if s != syscall.SIGPIPE { // Go's own SIGPIPE handling stays
			notify = append(notify, s)
		}
	}
	signal.Notify(sigs, notify...)
	go func() {
		sig := (<-sigs).(syscall.Signal)
		// signal.Reset would hand the signal back to the runtime, which
		// turns it into a crash by SIGABRT: set the kernel's default
		// action (a zeroed sigaction is SIG_DFL) and raise it again.
		var dfl [4]uint64
		syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
		syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second)
		os.Exit(1)
	}()
}

// monitor is --monitor: this process runs the daemon as its child and
// starts it again when it dies of a crash signal (at most once every 10
// seconds), exiting when it exits or dies otherwise, as Open vSwitch's
// monitor_daemon does. ready, when set, is this process's own readiness
// report (to the --detach parent), made once the first daemon serves.
// Terminating signals sent to the monitor go to the daemon. It never
// returns.
func (d *Daemon) monitor(ready func() error) {
	logger := Module(d.Logger, "daemon_unix(monitor)")
	self, err := os.Executable()
	if err != nil {
		Fatal(d.Program, "--monitor: cannot find own executable: %v", err)
	}
	signal.Ignore(syscall.SIGHUP)
	forward := make(chan os.Signal, 1)
	signal.Notify(forward, syscall.SIGTERM, syscall.SIGINT)
	crashes := 0
	var lastRestart time.Time
	first := true
	for {
		child, readyPipe, err := d.startMonitored(self)
		if err != nil {
			Fatal(d.Program, "--monitor: could not start daemon: %v", err)
		}
		exited := make(chan struct{})
		go func() { child.Wait(); close(exited) }()
		started := make(chan bool, 1)
		go func() {
			var buf [1]byte
			n, _ := readyPipe.Read(buf[:])
			readyPipe.Close()
			started <- n == 1
		}()
		waiting := true
		for waiting {
			select {
			case ok := <-started:
				if ok && first && ready != nil {
					if err := ready(); err != nil {
						logger.Error("reporting readiness: " + err.Error())
					}
					d.Log.DetachConsole()
				}
				started = nil
			case sig := <-forward:
				child.Process.Signal(sig)
			case <-exited:
				waiting = false
			}
		}
		ws, _ := child.ProcessState.Sys().(syscall.WaitStatus)
		status := WaitStatusMessage(ws)
		if first && started != nil {
			// The first daemon died before it served: fail as a daemon
			// that cannot start does.
			select {
			case ok := <-started:
				if !ok {
					Fatal(d.Program, "fork child died before signaling startup (%s)", status)
				}
			default:
				Fatal(d.Program, "fork child died before signaling startup (%s)", status)
			}
		}
		first = false
		pid := child.Process.Pid
		if !ws.Signaled() || !slices.Contains(crashSignals, ws.Signal()) {
			logger.Info(fmt.Sprintf("pid %d died, %s, exiting", pid, status))
			d.Log.Close()
			os.Exit(0)
		}
		crashes++
		msg := fmt.Sprintf("%d crashes: pid %d died, %s", crashes, pid, status)
		if wait := time.Until(lastRestart.Add(restartThrottle)); wait > 0 {
			logger.Warn(msg + ", waiting until 10 seconds since last restart")
			time.Sleep(wait)
		}
		lastRestart = time.Now()
		logger.Error(msg + ", restarting")
	}
}

// startMonitored starts the daemon child with the pipe on which it reports
// readiness.
func (d *Daemon) startMonitored(self string) (*exec.Cmd, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	child := exec.Command(self, os.Args[1:]...)
	child.Args[0] = os.Args[0]
	child.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, readyFDEnv+"=")
	}), monitoredEnv+"=1", monitorReadyFDEnv+"=3")
	child.ExtraFiles = []*os.File{w}
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := child.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, nil, err
	}
	w.Close()
	return child, r, nil
}

// WaitStatusMessage describes a wait status as Open vSwitch's
// process_status_msg does: "exit status N", "killed (Segmentation
// fault)", with ", core dumped".
func WaitStatusMessage(ws syscall.WaitStatus) string {
	var msg string
	switch {
	case ws.Exited():
		msg = fmt.Sprintf("exit status %d", ws.ExitStatus())
	case ws.Signaled():
		msg = fmt.Sprintf("killed (%s)", signalName(ws.Signal()))
	case ws.Stopped():
		msg = fmt.Sprintf("stopped (%s)", signalName(ws.StopSignal()))
	default:
		msg = fmt.Sprintf("terminated abnormally (%x)", uint32(ws))
	}
	if ws.CoreDump() {
		msg += ", core dumped"
	}
	return msg
}
