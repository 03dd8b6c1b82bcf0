package daemon

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"gvs/unixctl"
)

// Daemon is what both gvs binaries share: logging, the pidfile, the control
// socket, --detach, and the wait for "exit" or a terminating signal.
//
// Contract: Start, Ready, Wait and Close are called in that order from
// main's goroutine. Control may be given commands from any goroutine.
type Daemon struct {
	Program Program
	Dirs    Dirs
	Options *Options
	Logger  *slog.Logger // module named after the program
	Log     *LogHandler
	Control *unixctl.Server

	pidfile *Pidfile
	ready   func() error // non-nil in a detached child
	exit    chan struct{}
	// exitCleanup: an "exit --cleanup" came (ovs-vswitchd only).
	exitCleanup atomic.Bool
	signals     chan os.Signal
}

// Start sets up logging and, with --detach, moves into the background child
// (the calling process exits there once the child is ready). It then
// writes the pidfile, so that a second instance stops before touching the
// first one's sockets.
func Start(p Program, dirs Dirs, opts *Options) (*Daemon, error) {
	d := &Daemon{Program: p, Dirs: dirs, Options: opts, exit: make(chan struct{})}
	monitored := opts.Monitor && isMonitored()
	if opts.Detach && !monitored {
		d.ready = detach(p)
	}
	d.signals = make(chan os.Signal, 1)
	signal.Notify(d.signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	d.Log = NewLogHandler(os.Stderr, strings.ReplaceAll(p.Name, "-", "_"))
	d.Logger = slog.New(d.Log)
	var notes []string
	for _, v := range opts.Verbose {
		if note := v.Apply(d.Log); note != "" {
			notes = append(notes, note)
		}
	}
	if opts.LogFile != "" {
		if err := d.Log.OpenFile(opts.LogFile); err != nil {
			return nil, fmt.Errorf("failed to open %s for logging: %w", opts.LogFile, err)
		}
	}
	for _, note := range append(opts.Notes, notes...) {
		d.Logger.Warn(note)
	}
	switch {
	case monitored:
		d.ready = monitoredReady(p, opts.Detach)
		dieLikeC()
	case opts.Monitor:
		d.monitor(d.ready) // never returns
	}
	if opts.Pidfile != "" {
		pf, err := CreatePidfile(opts.Pidfile, opts.OverwritePidfile)
		if err != nil {
			return nil, err
		}
		d.pidfile = pf
	}
	d.Control = unixctl.New(Module(d.Logger, "unixctl"), p.VersionString())
	d.registerCommands()
	return d, nil
}

func (d *Daemon) registerCommands() {
	exitMax := 0
	exitUsage := ""
	if d.Program.ExitCleanup {
		// With no datapath yet there is nothing for --cleanup to remove.
		exitMax, exitUsage = 1, "[--cleanup]"
	}
	d.Control.Register("exit", exitUsage, 0, exitMax, func(args []string) (string, error) {
		// As ovs-vswitchd: only "--cleanup" itself asks for it; another
		// argument is a plain exit.
		if d.Program.ExitCleanup && len(args) == 1 && args[0] == "--cleanup" {
			d.exitCleanup.Store(true)
		}
		d.requestExit()
		return "", nil
	})
	d.Control.Register("vlog/reopen", "", 0, 0, func([]string) (string, error) {
		if d.Options.LogFile == "" {
			return "", fmt.Errorf("Logging to file not configured")
		}
		return "", d.Log.Reopen()
	})
	d.Control.Register("vlog/set", "{spec | PATTERN:destination:pattern}", 0, 1<<16, func(args []string) (string, error) {
		for _, a := range args {
			spec, err := ParseVerbose(a)
			if err != nil {
				return "", err
			}
			for _, m := range spec.Modules {
				if !d.Log.HasModule(m) {
					return "", fmt.Errorf("no destination, level, or module \"%s\"", m)
				}
			}
			if note := spec.Apply(d.Log); note != "" {
				d.Logger.Warn(note)
			}
		}
		return "", nil
	})
	d.Control.Register("vlog/list", "", 0, 0, func([]string) (string, error) {
		return d.Log.ListLevels(), nil
	})
}

func levelWord(l slog.Level) string {
	if l >= LevelOff {
		return "OFF"
	}
	return levelName(l)
}

// ExitRequest reports whether the daemon is ending because of an "exit"
// command (not a signal), and whether one of them said --cleanup.
func (d *Daemon) ExitRequest() (byCommand, cleanup bool) {
	select {
	case <-d.exit:
		byCommand = true
	default:
	}
	return byCommand, d.exitCleanup.Load()
}

// requestExit makes Wait return; repeated requests are harmless.
func (d *Daemon) requestExit() {
	select {
	case <-d.exit:
	default:
		close(d.exit)
	}
}

// Ready opens the control socket and, for a detached child, releases the
// waiting parent, drops the terminal and (without --no-chdir) moves to "/".
// Call it once the daemon serves.
func (d *Daemon) Ready() error {
	if path := d.Options.ControlSocket(d.Program, d.Dirs, os.Getpid()); path != "" {
		if err := d.Control.Listen(path); err != nil {
			return err
		}
	}
	if d.ready != nil {
		if d.Options.Detach {
			d.Log.DetachConsole()
		}
		if err := d.ready(); err != nil {
			return err
		}
		if d.Options.Detach && !d.Options.NoChdir {
			if err := os.Chdir("/"); err != nil {
				return err
			}
		}
	}
	if !d.Options.Transient {
		d.Logger.Info(d.Program.VersionString())
	}
	return nil
}

// Wait blocks until an "exit" command or a terminating signal, and returns
// the signal (nil for "exit").
func (d *Daemon) Wait() os.Signal {
	select {
	case <-d.exit:
		return nil
	case sig := <-d.signals:
		Module(d.Logger, "fatal_signal").Warn(fmt.Sprintf("terminating with signal %d (%s)", sig.(syscall.Signal), signalName(sig)))
		return sig
	}
}

func signalName(sig os.Signal) string {
	s := sig.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

// Close removes the control socket and the pidfile and closes the log. With
// the signal Wait returned, it then dies of that signal, as Open vSwitch's
// daemons do, so the exit status tells how the daemon ended.
func (d *Daemon) Close(sig os.Signal) {
	d.Control.Close()
	if d.pidfile != nil {
		d.pidfile.Remove()
	}
	d.Log.Close()
	if s, ok := sig.(syscall.Signal); ok {
		signal.Reset(s)
		syscall.Kill(os.Getpid(), s)
		time.Sleep(time.Second) // the signal ends the process meanwhile
		os.Exit(1)
	}
}

// Fatal logs err, cleans up and exits 1, for failures after Start.
func (d *Daemon) Fatal(err error) {
	d.Logger.Error(err.Error())
	d.Close(nil)
	os.Exit(1)
}
