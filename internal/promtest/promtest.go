// Package promtest runs a real Prometheus server for tests.
//
// Start writes a configuration that scrapes the given loopback targets
// every second, picks a free loopback port, starts the prometheus binary
// (Debian's package installs it; see hack/install-prometheus.sh) in its own
// process group (package procgroup) with a temporary storage directory, and
// waits for /-/ready. Stop kills the whole group and removes the directory,
// so a test leaves neither a process nor files behind; on Linux the kernel
// also kills the server if the test binary dies first.
//
// NodeExporter is something for it to scrape: a node_exporter stand-in
// whose network counters grow at a rate the caller sets.
package promtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

// BinaryEnv names the environment variable that points at the prometheus
// executable; without it, "prometheus" is looked up on $PATH.
const BinaryEnv = "PROMETHEUS_BINARY"

// ErrNotInstalled is wrapped by Start's error when no prometheus binary is
// found, so tests can say how to get one.
var ErrNotInstalled = errors.New("prometheus binary not found (install it with hack/install-prometheus.sh, or set " + BinaryEnv + ")")

// errPortInUse marks a start that lost the race for its port.
var errPortInUse = errors.New("port already in use")

// Timeouts. stopGrace is how long Prometheus gets to close its TSDB after
// SIGTERM; its data is thrown away, so a test should not wait longer.
const (
	defaultStartTimeout = time.Minute
	stopGrace           = 5 * time.Second
	startAttempts       = 3
	logTailBytes        = 4 << 10
)

// Options configure Start.
type Options struct {
	// Binary is the prometheus executable; empty means $PROMETHEUS_BINARY,
	// else "prometheus" on $PATH.
	Binary string
	// Targets are the host:port of the /metrics endpoints to scrape, all
	// in one job named "node".
	Targets []string
	// ScrapeInterval defaults to one second.
	ScrapeInterval time.Duration
	// StartTimeout bounds the wait for /-/ready; default one minute.
	StartTimeout time.Duration
}

// Server is a running Prometheus.
type Server struct {
	// URL is the base URL of its HTTP API, http://127.0.0.1:<port>.
	URL string

	dir      string
	proc     *procgroup.Process
	stopOnce sync.Once
	stopErr  error
}

// Binary returns the prometheus executable Start would run.
func Binary(path string) (string, error) {
	if path == "" {
		path = os.Getenv(BinaryEnv)
	}
	if path == "" {
		path = "prometheus"
	}
	p, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotInstalled, err)
	}
	return p, nil
}

// Start runs Prometheus and returns once it is ready. ctx bounds the start
// only; Stop ends the server.
func Start(ctx context.Context, o Options) (*Server, error) {
	bin, err := Binary(o.Binary)
	if err != nil {
		return nil, err
	}
	if o.ScrapeInterval <= 0 {
		o.ScrapeInterval = time.Second
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = defaultStartTimeout
	}
	for attempt := 1; ; attempt++ {
		s, err := start(ctx, bin, o)
		if err == nil || !errors.Is(err, errPortInUse) || attempt == startAttempts {
			return s, err
		}
	}
}

func start(ctx context.Context, bin string, o Options) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "promtest-")
	if err != nil {
		return nil, fmt.Errorf("storage directory: %w", err)
	}
	s := &Server{
		URL: "http://127.0.0.1:" + strconv.Itoa(port),
		dir: dir,
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, config(o), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("write configuration: %w", err)
	}
	s.proc, err = procgroup.Start("prometheus", bin, []string{
		"--config.file=" + cfgPath,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:" + strconv.Itoa(port),
		"--log.level=warn",
	}, filepath.Join(dir, "prometheus.log"))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := s.waitReady(ctx, o.StartTimeout); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// config returns a configuration that scrapes o.Targets.
func config(o Options) []byte {
	var b bytes.Buffer
	iv := o.ScrapeInterval.String()
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\n", iv, iv, iv)
	b.WriteString("scrape_configs:\n- job_name: node\n  static_configs:\n  - targets: [")
	for i, t := range o.Targets {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(t))
	}
	b.WriteString("]\n")
	return b.Bytes()
}

// waitReady polls /-/ready until it answers 200, the process exits, or
// the timeout passes.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.proc.Done():
			_, waitErr := s.proc.Exited()
			tail := s.LogTail()
			err := fmt.Errorf("prometheus exited while starting (%v); tail of %s:\n%s", waitErr, s.proc.LogPath(), tail)
			if strings.Contains(tail, "address already in use") {
				return fmt.Errorf("%w: %w", errPortInUse, err)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("prometheus at %s not ready: %w; tail of its log:\n%s", s.URL, ctx.Err(), s.LogTail())
		case <-tick.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
}

// Stop ends the server: SIGTERM to its process group, SIGKILL after a
// grace period, and a last SIGKILL to the group for anything the leader
// left behind; then it removes the storage directory. It may be called
// more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if s.stopErr = s.proc.Stop(stopGrace); s.stopErr != nil {
			return
		}
		if err := os.RemoveAll(s.dir); err != nil {
			s.stopErr = fmt.Errorf("remove %s: %w", s.dir, err)
		}
	})
	return s.stopErr
}

// Pid returns the server's process id.
func (s *Server) Pid() int { return s.proc.Pid() }

// Dir returns the directory that holds the configuration, data and log.
func (s *Server) Dir() string { return s.dir }

// LogTail returns the end of the server's log, for failure messages.
func (s *Server) LogTail() string { return s.proc.LogTail(logTailBytes) }

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) { return procgroup.FreePort() }
