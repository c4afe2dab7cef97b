package promtest

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// NodeExporter is a stand-in for node_exporter on one node, for a Server to
// scrape. It serves node_uname_info{nodename="<node name>"} and
// node_network_receive_bytes_total and node_network_transmit_bytes_total
// for two devices:
//
//   - eth0, whose counters grow at the rate set with NewNodeExporter or
//     SetRate (bytes/s in all, 60% received and 40% sent);
//   - lo, whose counters grow far faster, at a rate that falls as eth0's
//     rises (see loRate), so that a query that counts lo ranks the nodes
//     backwards instead of almost right.
//
// The counters are computed from the wall clock when scraped, so rate()
// over them is exact as soon as its window holds samples of one rate only.
// Serve it with httptest.NewServer and give Start the server's host:port.
// It is safe for concurrent use.
type NodeExporter struct {
	nodeName string
	now      func() time.Time // time.Now; a fixed clock in tests

	mu   sync.Mutex
	rate float64 // eth0's bytes/s since `since`
	// eth0 and lo are the byte counts at since.
	eth0, lo float64
	since    time.Time
}

// initialBytes is where every counter starts: a counter of a host that has
// been up for a while, not one that starts at zero, which rate()
// extrapolates differently.
const initialBytes = 1e9

// NewNodeExporter returns the exporter of node nodeName, whose eth0 traffic
// is bytesPerSecond from now on.
func NewNodeExporter(nodeName string, bytesPerSecond float64) *NodeExporter {
	return newNodeExporter(nodeName, bytesPerSecond, time.Now)
}

func newNodeExporter(nodeName string, rate float64, now func() time.Time) *NodeExporter {
	return &NodeExporter{nodeName: nodeName, now: now, rate: rate, eth0: initialBytes, lo: initialBytes, since: now()}
}

// loRate is lo's rate for an eth0 rate: 1 GB/s − 2 × eth0. Traffic on eth0
// plus lo is then 1 GB/s − eth0, which falls as eth0 rises, so a query
// that counts lo ranks the nodes in reverse. It stays positive up to an
// eth0 rate of 500 MB/s; above that lo stands still.
func loRate(eth0 float64) float64 { return max(0, 1e9-2*eth0) }

// NodeName returns the node name the exporter reports in node_uname_info.
func (x *NodeExporter) NodeName() string { return x.nodeName }

// Rate returns eth0's current rate in bytes/s.
func (x *NodeExporter) Rate() float64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.rate
}

// SetRate changes eth0's rate to bytesPerSecond from now on; the counters
// keep what they have counted so far, as a real interface's do.
func (x *NodeExporter) SetRate(bytesPerSecond float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	now := x.now()
	x.eth0, x.lo = x.counters(now)
	x.since, x.rate = now, bytesPerSecond
}

// counters returns the eth0 and lo byte counts at now. x.mu must be held.
func (x *NodeExporter) counters(now time.Time) (eth0, lo float64) {
	dt := now.Sub(x.since).Seconds()
	return x.eth0 + x.rate*dt, x.lo + loRate(x.rate)*dt
}

// ServeHTTP writes the metrics in the Prometheus text format, whatever the
// request's path.
func (x *NodeExporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	x.mu.Lock()
	eth0, lo := x.counters(x.now())
	x.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE node_uname_info gauge\nnode_uname_info{nodename=%q,sysname=\"Linux\"} 1\n", x.nodeName)
	for _, dir := range []struct {
		metric string
		share  float64
	}{{"node_network_receive_bytes_total", 0.6}, {"node_network_transmit_bytes_total", 0.4}} {
		fmt.Fprintf(w, "# TYPE %s counter\n", dir.metric)
		fmt.Fprintf(w, "%s{device=\"eth0\"} %.0f\n", dir.metric, eth0*dir.share)
		fmt.Fprintf(w, "%s{device=\"lo\"} %.0f\n", dir.metric, lo*dir.share)
	}
}
