package loadaware

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// t0 is the fake clock's start.
var t0 = time.Date(2026, 3, 1, 10, 0, 0, 500_000_000, time.UTC)

// source is the source args of a test plugin on address.
func source(address string) prommetric.SourceArgs {
	return prommetric.SourceArgs{PrometheusAddress: address}
}

// node returns a NodeInfo for a node of 4 CPUs and 16Gi holding pods.
func node(name string, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(frameworktest.MakeNode().Name(name).Capacity("4", "16Gi", 110).Obj())
	return ni
}

// assumed is a pod the scheduler just placed: no PodScheduled condition.
func assumed(name, cpu, mem string) *v1.Pod {
	return frameworktest.MakePod().Name(name).UID(name).Req(cpu, mem).Obj()
}

// boundAt is a pod the API bound at t.
func boundAt(p *v1.Pod, t time.Time) *v1.Pod {
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t.Truncate(time.Second))}}
	return p
}

// table publishes values as m's table taken at t.
func table(m *prommetric.Metric, t time.Time, seq uint64, values map[string]float64) {
	m.Store(&prommetric.Table{Time: t, Since: prommetric.BindTimeResolution(t), Values: values, Seq: seq})
}

// promStub answers every /api/v1/query with an instant vector of the
// values its handler gives for the query, and counts queries.
type promStub struct {
	*httptest.Server
	mu      sync.Mutex
	queries map[string]int
	values  func(query string) map[string]string
}

func newPromStub(t *testing.T, values func(query string) map[string]string) *promStub {
	t.Helper()
	s := &promStub{queries: map[string]int{}, values: values}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		q := r.Form.Get("query")
		s.mu.Lock()
		s.queries[q]++
		vals := s.values(q)
		s.mu.Unlock()
		type result struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		res := []result{}
		for n, v := range vals {
			res = append(res, result{Metric: map[string]string{"nodename": n}, Value: [2]any{1772359200.5, v}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": res}})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *promStub) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.queries {
		out[k] = v
	}
	return out
}

// scoreAll runs PreScore, Score and NormalizeScore as a cycle does, and
// returns the scores by node; nil when PreScore skips.
func scoreAll(t *testing.T, pl framework.ScorePlugin, pod *v1.Pod, nodes ...*framework.NodeInfo) map[string]int64 {
	t.Helper()
	state := framework.NewCycleState()
	if ps, ok := pl.(framework.PreScorePlugin); ok {
		st := ps.PreScore(t.Context(), state, pod, nodes)
		if st.IsSkip() {
			return nil
		}
		if !st.IsSuccess() {
			t.Fatalf("PreScore: %v", st.Err())
		}
	}
	scores := make(framework.NodeScoreList, len(nodes))
	for i, ni := range nodes {
		v, st := pl.Score(t.Context(), state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", ni.NodeName(), st.Err())
		}
		scores[i] = framework.NodeScore{Name: ni.NodeName(), Score: v}
	}
	if ext := pl.ScoreExtensions(); ext != nil {
		if st := ext.NormalizeScore(t.Context(), state, pod, scores); !st.IsSuccess() {
			t.Fatalf("NormalizeScore: %v", st.Err())
		}
	}
	out := map[string]int64{}
	for _, s := range scores {
		out[s.Name] = s.Score
	}
	return out
}
