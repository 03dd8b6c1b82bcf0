package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"gvs/pstream"
)

// TLSFiles names the PEM files for pssl: remotes, like ovsdb-server's
// --private-key, --certificate and --ca-cert.
type TLSFiles struct {
	PrivateKey  string
	Certificate string
	CACert      string
}

// SetTLS loads the key, certificate and CA certificate for pssl: remotes.
// As in Open vSwitch, clients must present a certificate signed by the CA.
// CACert "none" (Open vSwitch's --ca-cert=none) accepts any client
// certificate without verification; it still must be presented.
func (s *Server) SetTLS(files TLSFiles) error {
	cert, err := tls.LoadX509KeyPair(files.Certificate, files.PrivateKey)
	if err != nil {
		return fmt.Errorf("loading private key and certificate: %w", err)
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
	}
	if files.CACert == "none" {
		cfg.ClientAuth = tls.RequireAnyClientCert
	} else {
		pem, err := os.ReadFile(files.CACert)
		if err != nil {
			return fmt.Errorf("reading CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s: no PEM certificate found", files.CACert)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	s.mu.Lock()
	s.tlsConfig = cfg
	s.mu.Unlock()
	return nil
}

// listener is one passive remote.
type listener struct {
	name  string
	ln    net.Listener
	path  string // unix socket file to remove on close
	probe time.Duration
}

func (l *listener) close() error {
	err := l.ln.Close()
	if l.path != "" {
		os.Remove(l.path)
	}
	return err
}

// AddRemote starts listening on "punix:PATH", "ptcp:PORT[:IP]" or
// "pssl:PORT[:IP]" (IP defaults to 0.0.0.0; IPv6 goes in brackets).
func (s *Server) AddRemote(remote string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("server is closed")
	}
	if s.remotes[remote] != nil {
		s.mu.Unlock()
		return fmt.Errorf("%s: remote already configured", remote)
	}
	tlsConfig := s.tlsConfig
	s.mu.Unlock()

	l, err := s.listen(remote, tlsConfig)
	if err != nil {
		// Open vSwitch's ovsdb_jsonrpc_server line, after socket_util's
		// (none for a target that does not parse).
		var bad *pstream.AddrError
		if !errors.As(err, &bad) {
			s.logger.Error(fmt.Sprintf("%s: listen failed: %s", remote, err), slog.String("module", "ovsdb_jsonrpc_server"))
		}
		return fmt.Errorf("%s: listen failed: %w", remote, err)
	}
	s.mu.Lock()
	if s.closed || s.remotes[remote] != nil {
		s.mu.Unlock()
		l.close()
		return fmt.Errorf("%s: remote already configured", remote)
	}
	s.remotes[remote] = l
	s.wg.Add(1)
	s.mu.Unlock()
	go s.accept(l)
	return nil
}

// DefaultPort is the port of "ptcp:" and "pssl:" remotes that name none,
// the IANA port for OVSDB as in Open vSwitch.
const DefaultPort = 6640

// listen opens a passive remote through package pstream, which binds
// exactly the address given and logs Open vSwitch's "listening on port"
// line (nothing for punix:, as Open vSwitch).
func (s *Server) listen(remote string, tlsConfig *tls.Config) (*listener, error) {
	kind, arg, ok := strings.Cut(remote, ":")
	if !ok {
		return nil, errors.New("remote must be punix:PATH, ptcp:PORT[:IP] or pssl:PORT[:IP]")
	}
	switch kind {
	case "punix":
		return listenUnix(remote, arg)
	case "ptcp", "pssl":
		if kind == "pssl" && tlsConfig == nil {
			return nil, errors.New("SSL remote requires private key, certificate and CA certificate (SetTLS)")
		}
		ln, err := pstream.ListenTCP(arg, DefaultPort, s.logger)
		if err != nil {
			return nil, err
		}
		if kind == "pssl" {
			ln = tls.NewListener(ln, tlsConfig)
		}
		return &listener{name: remote, ln: ln, probe: s.probeInterval}, nil
	}
	return nil, fmt.Errorf("unknown remote type %q", kind)
}

// listenUnix binds a unix socket, replacing a stale socket file the way
// Open vSwitch's punix: does, with Open vSwitch's mode (0770 less the
// umask: 0750 under Debian's umask 027).
func listenUnix(remote, path string) (*listener, error) {
	if path == "" {
		return nil, errors.New("punix: needs a path")
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: address in use", path)
		}
		os.Remove(path)
	}
	ln, err := pstream.ListenUnix(path)
	if err != nil {
		return nil, err
	}
	return &listener{name: remote, ln: ln, path: path}, nil
}

func (s *Server) accept(l *listener) {
	defer s.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			s.logger.Warn("accept failed", "remote", l.name, "err", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serve(c, l.probe, l.name)
		}()
	}
}

// RemoveRemote stops listening on a remote and disconnects its sessions.
func (s *Server) RemoveRemote(remote string) error {
	s.mu.Lock()
	l := s.remotes[remote]
	if l == nil {
		s.mu.Unlock()
		return fmt.Errorf("%s: no such remote", remote)
	}
	delete(s.remotes, remote)
	var victims []*session
	for sess := range s.sessions {
		if sess.remote == remote {
			victims = append(victims, sess)
		}
	}
	s.mu.Unlock()
	s.logger.Info("remote deconfigured", "remote", remote)
	err := l.close()
	for _, sess := range victims {
		sess.close("")
	}
	return err
}

// Remotes returns the configured remotes, sorted, as given to AddRemote.
func (s *Server) Remotes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.remotes))
	for name := range s.remotes {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// BoundAddr returns the address a remote listens on (the actual port for
// ptcp:0), or nil for an unknown remote.
func (s *Server) BoundAddr(remote string) net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.remotes[remote]; l != nil {
		return l.ln.Addr()
	}
	return nil
}
