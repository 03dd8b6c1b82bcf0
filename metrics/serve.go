package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry returns a registry with the Go runtime and process
// collectors (go_*, process_*) and cs.
func NewRegistry(cs ...prometheus.Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	all := append([]prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}, cs...)
	for _, c := range all {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// ListenAddress interprets --metrics-address: HOST:PORT as given, while
// PORT or :PORT alone listen on loopback only (127.0.0.1), so metrics are
// never exposed to the network by accident. Listening on every address
// takes an explicit 0.0.0.0:PORT or [::]:PORT.
func ListenAddress(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty metrics address")
	}
	host, port := "", s
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else if _, err := strconv.Atoi(s); err != nil {
		return "", fmt.Errorf("%s: metrics address must be HOST:PORT, :PORT or PORT", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("%s: bad port %q", s, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Server serves /metrics over HTTP.
type Server struct {
	http *http.Server
	ln   net.Listener
	done chan struct{}
}

// Serve listens on addr (see ListenAddress) and serves g's metrics at
// /metrics until Close. Errors of the HTTP server go to logger.
func Serve(addr string, g prometheus.Gatherer, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a, err := ListenAddress(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:            slogPrinter{logger},
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "gvs metrics: /metrics")
	})
	s := &Server{
		http: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics server stopped", "err", err)
		}
	}()
	logger.Info("serving metrics", "address", "http://"+ln.Addr().String()+"/metrics")
	return s, nil
}

// Addr returns the listening address (useful with port 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server, waiting up to 5 s for scrapes in progress.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	<-s.done
	return err
}

// slogPrinter adapts promhttp's error log to slog.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.l.Warn(fmt.Sprint(v...)) }
