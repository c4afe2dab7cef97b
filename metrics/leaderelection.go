package metrics

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/leaderelection"
)

// LeaderElection holds kube-scheduler's leader election metrics
// (component-base's names): leader_election_master_status{name}, 1 while
// this process holds the lease, 0 otherwise, and
// leader_election_slowpath_total{name}. client-go's leader elector keeps
// them; build the elector with NewLeaderElector so that it reports here.
type LeaderElection struct {
	master   *prometheus.GaugeVec
	slowpath *prometheus.CounterVec
}

// NewLeaderElection returns leader election metrics, not yet registered.
func NewLeaderElection() *LeaderElection {
	return &LeaderElection{
		master: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "leader_election_master_status",
			Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
		}, []string{"name"}),
		slowpath: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leader_election_slowpath_total",
			Help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
		}, []string{"name"}),
	}
}

// Register registers the metrics on reg.
func (l *LeaderElection) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{l.master, l.slowpath} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// client-go's leaderelection package takes one metrics provider per process
// (SetProvider keeps the first one) and asks it for a LeaderMetric exactly
// once per elector, synchronously inside leaderelection.NewLeaderElector.
// yardmaster installs one provider, once, and NewLeaderElector tells it
// which LeaderElection the elector being built belongs to; so several
// daemons in one process (tests do that) each keep their own metrics, on
// their own registry.
var (
	installProvider sync.Once
	// building serializes NewLeaderElector, so that constructing names
	// the caller's metrics for the whole call.
	building     sync.Mutex
	constructing atomic.Pointer[LeaderElection]
)

// NewLeaderElector is leaderelection.NewLeaderElector with the elector
// reporting to l.
func (l *LeaderElection) NewLeaderElector(cfg leaderelection.LeaderElectionConfig) (*leaderelection.LeaderElector, error) {
	installProvider.Do(func() { leaderelection.SetProvider(provider{}) })
	building.Lock()
	defer building.Unlock()
	constructing.Store(l)
	defer constructing.Store(nil)
	return leaderelection.NewLeaderElector(cfg)
}

// provider is the process-wide leaderelection.MetricsProvider.
type provider struct{}

// NewLeaderMetric returns the metrics of the LeaderElection whose
// NewLeaderElector is running; an elector built any other way reports
// nowhere.
func (provider) NewLeaderMetric() leaderelection.LeaderMetric {
	if l := constructing.Load(); l != nil {
		return l
	}
	return noLeaderMetric{}
}

// On implements leaderelection.LeaderMetric: the lease name is ours.
func (l *LeaderElection) On(name string) { l.master.WithLabelValues(name).Set(1) }

// Off implements leaderelection.LeaderMetric: the lease name is not ours
// (or no longer).
func (l *LeaderElection) Off(name string) { l.master.WithLabelValues(name).Set(0) }

// SlowpathExercised implements leaderelection.LeaderMetric: a renewal had
// to read the lease before writing it.
func (l *LeaderElection) SlowpathExercised(name string) { l.slowpath.WithLabelValues(name).Inc() }

var _ leaderelection.LeaderMetric = (*LeaderElection)(nil)

type noLeaderMetric struct{}

func (noLeaderMetric) On(string)                {}
func (noLeaderMetric) Off(string)               {}
func (noLeaderMetric) SlowpathExercised(string) {}
