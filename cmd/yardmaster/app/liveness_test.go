package app

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/yardmaster-io/yardmaster/internal/server"
)

// stuckLoop is a scheduling loop stuck past any bound.
type stuckLoop struct{ bound time.Duration }

func (l *stuckLoop) LoopHealthy(_ time.Time, bound time.Duration) error {
	l.bound = bound
	return errors.New("a scheduling cycle has run for 6m0s, longer than 5m0s")
}

// /livez (and /readyz, which includes it) fails while the scheduling loop
// is stuck past --scheduling-stall-timeout; without a bound the check is
// left out.
func TestLivezSchedulingLoop(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		want    int
	}{
		{"stuck past the bound", 5 * time.Minute, http.StatusServiceUnavailable},
		{"no bound", 0, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := offlineOptions()
			o.SchedulingStallTimeout = tc.timeout
			d, err := NewDaemon(o, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			loop := &stuckLoop{}
			d.loop = loop
			h := server.Handler(d.routes(false, ""))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/livez", nil))
			if rec.Code != tc.want {
				t.Fatalf("/livez: %d, want %d\n%s", rec.Code, tc.want, rec.Body)
			}
			if tc.want == http.StatusOK {
				return
			}
			if !strings.Contains(rec.Body.String(), "[-]scheduling-loop failed: a scheduling cycle has run for 6m0s") {
				t.Errorf("/livez body:\n%s", rec.Body)
			}
			if loop.bound != tc.timeout {
				t.Errorf("checked with bound %s, want %s", loop.bound, tc.timeout)
			}
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/livez/scheduling-loop", nil))
			if rec.Code != http.StatusServiceUnavailable {
				t.Errorf("/livez/scheduling-loop: %d", rec.Code)
			}
		})
	}
	// The flag's default.
	o, err := parse(t, "run")
	if err != nil {
		t.Fatal(err)
	}
	if o.SchedulingStallTimeout != DefaultSchedulingStallTimeout || DefaultSchedulingStallTimeout != 5*time.Minute {
		t.Errorf("--scheduling-stall-timeout defaults to %s (DefaultSchedulingStallTimeout %s), want 5m", o.SchedulingStallTimeout, DefaultSchedulingStallTimeout)
	}
}
