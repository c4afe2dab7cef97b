package app

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// Before its caches are synced (a standby under delayCacheUntilActive has
// none) the daemon does not explain: an empty cache would call every pod
// not found.
func TestExplainBeforeSync(t *testing.T) {
	d := &Daemon{logger: zap.NewNop()}
	rec := httptest.NewRecorder()
	d.explainHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/explain?namespace=ns&name=p", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "not synced") {
		t.Errorf("explain before sync: %d %q, want 503 saying the caches are not synced", rec.Code, rec.Body.String())
	}
}
