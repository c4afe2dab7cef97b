package scheduler

// kube-scheduler-simulator's annotations (Explain's simulatorAnnotations):
// each attempt's results written on the pod in the format of
// sigs.k8s.io/kube-scheduler-simulator's debuggable scheduler, so that its
// viewer shows them:
//
//	kube-scheduler-simulator.sigs.k8s.io/filter-result      {node: {plugin: "passed" | reason}}
//	kube-scheduler-simulator.sigs.k8s.io/score-result       {node: {plugin: "raw score"}}
//	kube-scheduler-simulator.sigs.k8s.io/finalscore-result  {node: {plugin: "normalized × weight"}}
//	kube-scheduler-simulator.sigs.k8s.io/selected-node      node
//
// The cycle runs with a recorder that keeps what it decided (it stops at
// enough feasible nodes, as always, so only the nodes it looked at are
// listed), copies out the names it needs, and a goroutine builds the JSON
// and patches the pod; the cycle never waits on the API. At most
// maxAnnotationPatches patches are in flight; an attempt beyond that is
// not written, and counted.

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The annotations' keys, kube-scheduler-simulator's.
const (
	AnnotationFilterResult     = "kube-scheduler-simulator.sigs.k8s.io/filter-result"
	AnnotationScoreResult      = "kube-scheduler-simulator.sigs.k8s.io/score-result"
	AnnotationFinalScoreResult = "kube-scheduler-simulator.sigs.k8s.io/finalscore-result"
	AnnotationSelectedNode     = "kube-scheduler-simulator.sigs.k8s.io/selected-node"
)

// passed is the simulator's word for a filter that let the node through.
const passed = "passed"

const (
	// maxAnnotationPatches bounds the patches in flight.
	maxAnnotationPatches = 16
	// maxAnnotationBytes bounds one annotation's value: the API refuses
	// a pod whose annotations exceed 256 KiB in all. A larger one (a big
	// cluster's filter results) is left out.
	maxAnnotationBytes = 64 << 10
	// annotationTimeout bounds one patch.
	annotationTimeout = 10 * time.Second
)

// attemptResults is what an attempt's annotations are built from, copied
// out of the cycle (node names are read from NodeInfos the next cycle
// changes; statuses are never changed once made).
type attemptResults struct {
	nodes      []string
	rejections []rejection
	feasible   []string
	// filters are the filters that ran for the pod, in order.
	filters []string
	scorers []weightedScorer
	raws    [][]int64
	norms   [][]int64
	// selected is the chosen node, "" when the pod fits nowhere.
	selected string
}

// attemptResultsOf copies rec out, in the scheduling goroutine.
func attemptResultsOf(prof *profile, state interface{ Skipped(string) bool }, rec *cycleRecorder, selected string) *attemptResults {
	a := &attemptResults{rejections: rec.rejections, feasible: rec.feasible, scorers: rec.scorers, raws: rec.raws, norms: rec.norms, selected: selected}
	a.nodes = make([]string, len(rec.nodes))
	for i, ni := range rec.nodes {
		a.nodes[i] = ni.NodeName()
	}
	for _, pl := range prof.filter {
		if !state.Skipped(pl.Name()) {
			a.filters = append(a.filters, pl.Name())
		}
	}
	return a
}

// annotations renders a's annotations.
func (a *attemptResults) annotations() map[string]string {
	filter := map[string]map[string]string{}
	for i, node := range a.nodes {
		r := a.rejections[i]
		if r.status == nil {
			continue // feasible (listed below), or not looked at
		}
		m := map[string]string{}
		for _, name := range a.filters {
			if name == r.plugin {
				m[name] = r.status.Message()
				break
			}
			m[name] = passed
		}
		if r.plugin == "" {
			m["nominated pods"] = r.status.Message()
		}
		filter[node] = m
	}
	score := map[string]map[string]string{}
	final := map[string]map[string]string{}
	for n, node := range a.feasible {
		m := make(map[string]string, len(a.filters))
		for _, name := range a.filters {
			m[name] = passed
		}
		filter[node] = m
		if len(a.raws) == 0 {
			continue // one feasible node: the cycle does not score
		}
		raw := make(map[string]string, len(a.scorers))
		fin := make(map[string]string, len(a.scorers))
		for i, sc := range a.scorers {
			raw[sc.Name()] = strconv.FormatInt(a.raws[i][n], 10)
			fin[sc.Name()] = strconv.FormatInt(a.norms[i][n]*sc.weight, 10)
		}
		score[node], final[node] = raw, fin
	}
	out := map[string]string{}
	for key, v := range map[string]any{AnnotationFilterResult: filter, AnnotationScoreResult: score, AnnotationFinalScoreResult: final} {
		if data, err := json.Marshal(v); err == nil && len(data) <= maxAnnotationBytes {
			out[key] = string(data)
		}
	}
	if a.selected != "" {
		out[AnnotationSelectedNode] = a.selected
	}
	return out
}

// skipped adapts a CycleState's skip sets for attemptResultsOf.
type skipped map[string]struct{}

func (s skipped) Skipped(name string) bool { _, ok := s[name]; return ok }

// annotateLater patches pod with a's annotations in the background.
func (s *Scheduler) annotateLater(pod *v1.Pod, a *attemptResults) {
	if s.client == nil {
		return
	}
	select {
	case s.annotating <- struct{}{}:
	default:
		s.annotationsDropped.Add(1)
		return
	}
	s.bindWG.Add(1)
	go func() {
		defer s.bindWG.Done()
		defer func() { <-s.annotating }()
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": a.annotations()}})
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(s.bindCtx, annotationTimeout)
		defer cancel()
		if _, err := s.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			s.logger.Debug("writing the simulator's annotations failed", zap.String("pod", pod.Namespace+"/"+pod.Name), zap.Error(err))
		}
	}()
}
