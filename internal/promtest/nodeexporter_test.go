package promtest

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape returns the exporter's counters by device and direction
// ("eth0 receive"), and node_uname_info's nodename.
func scrape(t *testing.T, x *NodeExporter) (map[string]float64, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	x.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("not the text format: %v", err)
	}
	got := map[string]float64{}
	for name, dir := range map[string]string{"node_network_receive_bytes_total": "receive", "node_network_transmit_bytes_total": "transmit"} {
		for _, m := range families[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "device" {
					got[l.GetValue()+" "+dir] = m.GetCounter().GetValue()
				}
			}
		}
	}
	var nodename string
	for _, m := range families["node_uname_info"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "nodename" {
				nodename = l.GetValue()
			}
		}
	}
	return got, nodename
}

// The counters grow at the rate set, split 60/40, and keep their count
// across SetRate.
func TestNodeExporter(t *testing.T) {
	// The exporter writes whole bytes.
	approx := cmpopts.EquateApprox(0, 1)
	start := time.Now()
	now := start
	x := newNodeExporter("node-1", 10e6, func() time.Time { return now })

	got, nodename := scrape(t, x)
	if nodename != "node-1" {
		t.Errorf("node_uname_info nodename %q, want node-1", nodename)
	}
	want := map[string]float64{"eth0 receive": 0.6e9, "eth0 transmit": 0.4e9, "lo receive": 0.6e9, "lo transmit": 0.4e9}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("at start (-want +got):\n%s", diff)
	}

	// 10 s at 10 MB/s: eth0 +100 MB; lo at 1 GB/s − 2 × 10 MB/s = 980 MB/s: +9.8 GB.
	now = start.Add(10 * time.Second)
	got, _ = scrape(t, x)
	want = map[string]float64{
		"eth0 receive": 0.6 * (1e9 + 100e6), "eth0 transmit": 0.4 * (1e9 + 100e6),
		"lo receive": 0.6 * (1e9 + 9.8e9), "lo transmit": 0.4 * (1e9 + 9.8e9),
	}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("after 10s (-want +got):\n%s", diff)
	}

	// Then 5 s at 80 MB/s: eth0 +400 MB; lo at 840 MB/s: +4.2 GB.
	x.SetRate(80e6)
	if r := x.Rate(); r != 80e6 {
		t.Errorf("Rate() = %v after SetRate(80e6)", r)
	}
	now = start.Add(15 * time.Second)
	got, _ = scrape(t, x)
	want = map[string]float64{
		"eth0 receive": 0.6 * (1e9 + 100e6 + 400e6), "eth0 transmit": 0.4 * (1e9 + 100e6 + 400e6),
		"lo receive": 0.6 * (1e9 + 9.8e9 + 4.2e9), "lo transmit": 0.4 * (1e9 + 9.8e9 + 4.2e9),
	}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("after SetRate (-want +got):\n%s", diff)
	}
}

// lo is busier than eth0, and eth0 plus lo falls as eth0 rises, for
// every rate the exporter is meant for; past 500 MB/s lo stands still.
func TestLoRate(t *testing.T) {
	for _, eth0 := range []float64{0, 1e6, 20e6, 80e6, 300e6} {
		lo := loRate(eth0)
		if lo <= eth0 {
			t.Errorf("eth0 %g: lo %g is not busier", eth0, lo)
		}
		if sum, next := eth0+lo, eth0+1e6+loRate(eth0+1e6); next >= sum {
			t.Errorf("eth0 %g: eth0+lo %g does not fall when eth0 rises by 1 MB/s (%g)", eth0, sum, next)
		}
	}
	if lo := loRate(600e6); lo != 0 {
		t.Errorf("loRate(600 MB/s) = %g, want 0 (a counter must not fall)", lo)
	}
}
