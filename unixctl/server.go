package unixctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"gvs/ovsdb/jsonrpc"
)

// closeWriteTimeout bounds how long Close waits for a reply to be written.
const closeWriteTimeout = 5 * time.Second

// CommandFunc runs one command. args excludes the command name. The returned
// text is the reply; a non-nil error is sent as an error reply with the
// error's text.
type CommandFunc func(args []string) (string, error)

type command struct {
	usage            string
	minArgs, maxArgs int
	fn               CommandFunc
}

// Server is a control socket server.
type Server struct {
	logger  *slog.Logger
	version string

	mu       sync.Mutex
	commands map[string]command
	listener *net.UnixListener
	path     string
	conns    map[*net.UnixConn]struct{}
	closed   bool

	wg sync.WaitGroup // one per connection goroutine and accept loop
}

// New returns a server with the built-in commands "list-commands" and
// "version" registered. version is the reply to "version", such as
// "gvs-ovsdb-server (gvs) 0.1.0".
//
// Replies and errors that do not end in a newline get one, as in Open
// vSwitch 3.1.
func New(logger *slog.Logger, version string) *Server {
	s := &Server{
		logger:   logger,
		version:  version,
		commands: make(map[string]command),
		conns:    make(map[*net.UnixConn]struct{}),
	}
	s.Register("list-commands", "", 0, 0, func([]string) (string, error) { return s.listCommands(), nil })
	s.Register("version", "", 0, 0, func([]string) (string, error) { return s.version, nil })
	return s
}

// Register adds a command. usage describes its arguments for list-commands;
// the command accepts between minArgs and maxArgs arguments. Registering a
// name twice replaces the earlier command.
func (s *Server) Register(name, usage string, minArgs, maxArgs int, fn func(args []string) (string, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands[name] = command{usage: usage, minArgs: minArgs, maxArgs: maxArgs, fn: fn}
}

// listCommands formats the command list the way Open vSwitch does.
func (s *Server) listCommands() string {
	s.mu.Lock()
	names := make([]string, 0, len(s.commands))
	for name := range s.commands {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("The available commands are:\n")
	for _, name := range names {
		fmt.Fprintf(&b, "  %-23s %s\n", name, s.commands[name].usage)
	}
	s.mu.Unlock()
	return b.String()
}

// Listen creates the socket at path, readable and writable by its owner only,
// and starts accepting connections. A stale socket left at path by a dead
// process is replaced; any other existing file is an error.
func (s *Server) Listen(path string) error {
	s.mu.Lock()
	if s.closed || s.listener != nil {
		s.mu.Unlock()
		return errors.New("unixctl: server already listening or closed")
	}
	s.mu.Unlock()

	l, err := listenOwnerOnly(path)
	if err != nil {
		return fmt.Errorf("%s: could not initialize control socket: %w", path, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		os.Remove(path)
		return errors.New("unixctl: server closed")
	}
	s.listener, s.path = l, path
	s.wg.Add(1)
	s.mu.Unlock()
	go s.acceptLoop(l)
	return nil
}

// listenOwnerOnly binds the socket inside a fresh 0700 directory next to
// path, sets its mode to 0700 and only then renames it into place, so no
// other user can ever connect to it (the process umask is global and cannot
// be changed safely from one goroutine). It binds through
// /proc/self/fd/DIRFD/s, as Open vSwitch does for long names, so paths
// longer than a sockaddr_un holds work too.
func listenOwnerOnly(path string) (*net.UnixListener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
	}
	private, err := os.MkdirTemp(filepath.Dir(path), ".unixctl-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(private)
	dir, err := os.Open(private)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	short := fmt.Sprintf("/proc/self/fd/%d/s", dir.Fd())
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: short, Net: "unix"})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(false)
	tmp := filepath.Join(private, "s")
	// Open vSwitch's mode for every unix socket: 0770 less the umask (bind
	// made it 0777 less the umask; the private directory hides it until
	// the rename).
	fi, err := os.Lstat(tmp)
	if err == nil {
		err = os.Chmod(tmp, fi.Mode().Perm()&0o770)
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func (s *Server) acceptLoop(l *net.UnixListener) {
	defer s.wg.Done()
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.logger.Warn("control socket accept failed", "error", err)
			}
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

// serve answers the requests of one connection in order.
func (s *Server) serve(c *net.UnixConn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	r := jsonrpc.NewReader(c)
	w := jsonrpc.NewWriter(c)
	for {
		msg, err := r.Read()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.logger.Debug("control connection dropped", "error", err)
			}
			return
		}
		if !msg.IsRequest() {
			// Open vSwitch drops a connection that sends anything but
			// requests.
			s.logger.Warn("control connection sent an unexpected message; closing it")
			return
		}
		if err := w.Write(s.handle(msg)); err != nil {
			s.logger.Debug("control connection reply failed", "error", err)
			return
		}
	}
}

// handle runs one request and builds its reply, with Open vSwitch's texts
// for the errors it detects itself.
func (s *Server) handle(req *jsonrpc.Message) *jsonrpc.Message {
	reply, err := s.run(req.Method, req.Params)
	var msg *jsonrpc.Message
	if err != nil {
		msg, _ = jsonrpc.NewError(req.ID, withNewline(err.Error()))
	} else {
		msg, _ = jsonrpc.NewResult(req.ID, withNewline(reply))
	}
	return msg
}

// withNewline ends a non-empty reply with a newline, as Open vSwitch 3.1
// does for results and errors alike, so ovs-appctl output ends in one.
func withNewline(text string) string {
	if text != "" && !strings.HasSuffix(text, "\n") {
		return text + "\n"
	}
	return text
}

func (s *Server) run(name string, rawParams json.RawMessage) (string, error) {
	s.mu.Lock()
	cmd, ok := s.commands[name]
	s.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("\"%s\" is not a valid command (use \"list-commands\" to see a list of valid commands)", name)
	}
	var params []json.RawMessage
	if err := json.Unmarshal(rawParams, &params); err != nil {
		return "", fmt.Errorf("\"%s\" command has non-string argument", name)
	}
	if len(params) < cmd.minArgs {
		return "", fmt.Errorf("\"%s\" command requires at least %d arguments", name, cmd.minArgs)
	}
	if len(params) > cmd.maxArgs {
		return "", fmt.Errorf("\"%s\" command takes at most %d arguments", name, cmd.maxArgs)
	}
	args := make([]string, len(params))
	for i, p := range params {
		if err := json.Unmarshal(p, &args[i]); err != nil || p[0] != '"' {
			return "", fmt.Errorf("\"%s\" command has non-string argument", name)
		}
	}
	return cmd.fn(args)
}

// Path returns the socket's path, or "" before Listen.
func (s *Server) Path() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path
}

// Close stops accepting connections, waits for running commands to send
// their replies, closes all connections and removes the socket file. It is
// safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	l, path := s.listener, s.path
	var err error
	if l != nil {
		err = l.Close()
		if rmErr := os.Remove(path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) && err == nil {
			err = rmErr
		}
	}
	// Shutting down only the read side lets a command in progress write
	// its reply; the connection's goroutine then sees EOF and closes it.
	for c := range s.conns {
		c.CloseRead()
		// A client that stops reading must not hold shutdown forever.
		c.SetWriteDeadline(time.Now().Add(closeWriteTimeout))
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}
