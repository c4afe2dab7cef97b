package promtest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestConfig(t *testing.T) {
	got := string(config(Options{ScrapeInterval: time.Second, Targets: []string{"127.0.0.1:1234", "127.0.0.1:5678"}}))
	want := `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
- job_name: node
  static_configs:
  - targets: ["127.0.0.1:1234", "127.0.0.1:5678"]
`
	if got != want {
		t.Errorf("config:\n%s\nwant:\n%s", got, want)
	}
}

func TestBinaryNotFound(t *testing.T) {
	_, err := Binary("/nonexistent/prometheus")
	if !errors.Is(err, ErrNotInstalled) {
		t.Errorf("error %v, want ErrNotInstalled", err)
	}
}

// Start scrapes the targets; Stop leaves no process, port or directory.
func TestStartScrapeStop(t *testing.T) {
	if _, err := Binary(""); err != nil {
		t.Skip(err)
	}
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "# TYPE promtest_answer gauge")
		fmt.Fprintln(w, "promtest_answer 42")
	}))
	defer exporter.Close()

	s, err := Start(t.Context(), Options{Targets: []string{strings.TrimPrefix(exporter.URL, "http://")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client, err := api.NewClient(api.Config{Address: s.URL, RoundTripper: transport})
	if err != nil {
		t.Fatal(err)
	}
	promAPI := promv1.NewAPI(client)
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, _, _, err := promAPI.Query(t.Context(), `promtest_answer{job="node"}`, time.Time{})
		if vec, ok := v.(model.Vector); err == nil && ok && len(vec) == 1 && vec[0].Value == 42 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter was not scraped (last: %v, %v); log:\n%s", v, err, s.LogTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
	pid, dir, addr := s.Pid(), s.Dir(), strings.TrimPrefix(s.URL, "http://")
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists after Stop (kill 0: %v)", pid, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Stop: %v", dir, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Errorf("port of the stopped server is still taken: %v", err)
	} else {
		l.Close()
	}
}
