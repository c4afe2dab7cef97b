package framework

// ExplainArgs are the arguments of Explain, which is not a plugin but a
// profile's settings for explanations (docs/explain.md), written as a
// pluginConfig entry so that the file keeps KubeSchedulerConfiguration's
// schema:
//
//	pluginConfig:
//	- name: Explain
//	  args: {simulatorAnnotations: true}
type ExplainArgs struct {
	// SimulatorAnnotations writes each attempt's results on the pod as
	// kube-scheduler-simulator's annotations
	// (kube-scheduler-simulator.sigs.k8s.io/filter-result, score-result,
	// finalscore-result, selected-node), so that its viewer shows them.
	// Off by default: it costs a pod patch per attempt.
	SimulatorAnnotations bool `json:"simulatorAnnotations,omitempty"`
}
