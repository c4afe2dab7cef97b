package main

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// Shape of the simulated cluster: every node alike, spread round-robin over
// zones, so that a perfectly even placement exists for every workload.
const (
	nodeCPU    = "32"
	nodeMemory = "256Gi"
	nodePods   = 110
	zoneCount  = 3
)

// nodeName is the name of the i-th benchmark node.
func nodeName(i int) string { return fmt.Sprintf("bench-node-%05d", i) }

func zoneName(i int) string { return fmt.Sprintf("zone-%d", i) }

// benchNode returns the i-th node: 32 cpu, 256Gi, 110 pods, zone i mod 3.
func benchNode(i int) *v1.Node {
	return frameworktest.MakeNode().Name(nodeName(i)).
		Capacity(nodeCPU, nodeMemory, nodePods).
		Label(v1.LabelTopologyZone, zoneName(i%zoneCount)).
		Label(v1.LabelTopologyRegion, "bench").
		Obj()
}

// workload describes the pods of one benchmark case. pod(i, nodes) must be
// a pure function of its arguments: every scheduler gets identical input.
type workload struct {
	name string
	what string
	// count is the number of pods of a drain; the stream phase uses
	// min(count, -stream-count) with s.pods set to -stream-count.
	count func(s sizes) int
	pod   func(i, nodes int) *v1.Pod
	// claims says that pod i mounts claimName(i): the harness makes the
	// claims and a local volume per pod before the contender starts
	// (storage.go), and kube-controller-manager's storage controllers run
	// while the workload is measured.
	claims bool
	// devices says that pod i claims one device through the
	// ResourceClaimTemplate benchTemplateName: the harness makes the
	// DeviceClass, a ResourceSlice per node and the template before the
	// contender starts, and waits until kube-controller-manager's
	// ResourceClaim controller, which runs while the workload is
	// measured, has made every pod's claim (devices.go).
	devices bool
	// profileRate is the drain rate, in pods/s, that -profile sizes its
	// CPU profiles for; 0 means defaultProfileRate.
	profileRate int

	// The shapes of kube-scheduler's scheduler_perf (scenarios.go):
	//
	// pool queues -pool-pods pods that fit nowhere, at a higher priority,
	// before the measured pods: the contender tries the whole pool
	// before it binds the first measured pod, and retries it as it
	// goes.
	pool bool
	// churn creates and deletes a node, an unschedulable pod and a
	// Service every -churn-interval while the contender drains
	// (scheduler_perf's churn op in recreate mode).
	churn bool
	// preempt fills every node with fillPerNode low-priority pods,
	// bound before the contender starts; each measured pod needs
	// preemptVictims of them evicted from one node.
	preempt bool
	// idle measures no drain: the contender's CPU while a pool of
	// unschedulable pods waits and nodes and pods churn around it
	// (idle.go).
	idle bool
	// groupSize makes the pods gangs of this many (gangs.go): their
	// PodGroups are created before them, kube-controller-manager's
	// PodGroup protection controller runs while the workload is
	// measured, and the drain fails if any group is partially bound.
	groupSize int
	// minStall is the least time without a new binding after which a
	// drain of w gives up, whatever -stall says.
	minStall time.Duration
}

// defaultProfileRate is the profileRate of most workloads: a drain at
// that rate is covered whole.
const defaultProfileRate = 250

// sizes are what the number of pods of a phase may depend on.
type sizes struct {
	// pods is -pods (the stream phase: -stream-count).
	pods int
	// volumePods is -volume-pods and draPods -dra-pods; 0 means one pod
	// per node.
	volumePods int
	draPods    int
	nodes      int
	// measurePods is -measure-pods: the measured pods of the
	// scheduler_perf shapes; 0 means each shape's default.
	measurePods int
}

// measured returns -measure-pods, or else def capped at half the pod
// slots of the cluster, so a small test cluster gets a drain that fits.
func (s sizes) measured(def int) int {
	if s.measurePods > 0 {
		return s.measurePods
	}
	return min(def, s.nodes*nodePods/2)
}

var workloads = []workload{
	{
		name:  "basic",
		what:  "100m/128Mi, no constraints",
		count: func(s sizes) int { return s.pods },
		pod: func(i, _ int) *v1.Pod {
			return basePod(i, "basic", "100m", "128Mi")
		},
	},
	{
		name:  "spread",
		what:  "100m/128Mi, zone spread maxSkew 1, DoNotSchedule",
		count: func(s sizes) int { return s.pods },
		pod: func(i, _ int) *v1.Pod {
			return withZoneSpread(basePod(i, "spread", "100m", "128Mi"))
		},
	},
	{
		name:  "antiaffinity",
		what:  "100m/128Mi, required hostname anti-affinity: one pod per node, as many pods as nodes",
		count: func(s sizes) int { return s.nodes },
		pod: func(i, _ int) *v1.Pod {
			return withHostnameAntiAffinity(basePod(i, "aa", "100m", "128Mi"))
		},
	},
	{
		name:  "mixed",
		what:  "40% basic, 10% 500m/1Gi preferring zone-0, 10% 1cpu/4Gi, 20% zone spread, 10% hostname anti-affinity, 10% required zone-1",
		count: func(s sizes) int { return s.pods },
		pod:   mixedPod,
	},
	{
		name: "volumes",
		what: "100m/128Mi and a 1Gi WaitForFirstConsumer claim each, a local volume per pod spread evenly over the nodes: as many pods as nodes (-volume-pods)",
		count: func(s sizes) int {
			if s.volumePods > 0 {
				return s.volumePods
			}
			return s.nodes
		},
		pod: func(i, _ int) *v1.Pod {
			p := basePod(i, "volumes", "100m", "128Mi")
			p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(i)},
			}}}
			return p
		},
		claims: true,
		// The PV binder completes one claim at a time.
		profileRate: 50,
	},
	{
		name: "dra",
		what: "100m/128Mi and one device each, claimed through a ResourceClaimTemplate, of 8 per node: as many pods as nodes (-dra-pods)",
		count: func(s sizes) int {
			if s.draPods > 0 {
				return s.draPods
			}
			return s.nodes
		},
		pod: func(i, _ int) *v1.Pod {
			return withDeviceClaim(basePod(i, "dra", "100m", "128Mi"))
		},
		devices: true,
		// kube-scheduler drains some 60 pods/s here.
		profileRate: 50,
	},
	{
		name:  "unschedulable",
		what:  "scheduler_perf Unschedulable: -pool-pods high-priority pods that fit nowhere (64 cpu) queued first, then pods of 100m/500Mi (-measure-pods, default 5,000), all queued before the scheduler starts",
		count: func(s sizes) int { return s.measured(unschedulablePods) },
		pod:   func(i, _ int) *v1.Pod { return defaultPerfPod(i) },
		pool:  true,
	},
	{
		name:  "mixedchurn",
		what:  "scheduler_perf SchedulingWithMixedChurn: pods of 100m/500Mi (-measure-pods, default 10,000) while a node, an unschedulable pod and a Service are created and deleted every -churn-interval",
		count: func(s sizes) int { return s.measured(mixedChurnPods) },
		pod:   func(i, _ int) *v1.Pod { return defaultPerfPod(i) },
		churn: true,
	},
	{
		name: "preemption",
		what: fmt.Sprintf("scheduler_perf PreemptionBasic: every node full with %d low-priority pods of %s, then high-priority pods of %s (-measure-pods, default one per node) that each need %d victims", fillPerNode, fillCPU, preemptorCPU, preemptVictims),
		count: func(s sizes) int {
			if s.measurePods > 0 {
				return min(s.measurePods, s.nodes)
			}
			return s.nodes
		},
		pod:     func(i, _ int) *v1.Pod { return preemptorPod(i) },
		preempt: true,
		// kube-scheduler preempts some tens of pods per second.
		profileRate: 50,
	},
	{
		name: "daemonset",
		what: "scheduler_perf's DaemonSet pods: one per node, pinned by required node affinity on metadata.name (matchFields), no requests",
		count: func(s sizes) int {
			if s.measurePods > 0 {
				return min(s.measurePods, s.nodes)
			}
			return s.nodes
		},
		pod: daemonSetPod,
	},
	{
		name:      "smallgangs",
		what:      "scheduler_perf GangScheduling 5000Nodes_1000Gangs_3000Pods: PodGroups of 3 pods of 100m/100Mi each (gang, minCount 3), created before the pods (-measure-pods, default 3,000: 1,000 groups)",
		count:     func(s sizes) int { return s.measured(smallGangPods) },
		pod:       func(i, _ int) *v1.Pod { return gangPod(i, smallGangSize) },
		groupSize: smallGangSize,
	},
	{
		name:      "largegangs",
		what:      "scheduler_perf GangScheduling's 1000PerGroup shape with 10 groups (issue #39; upstream has 3, 6 and 9): PodGroups of 1,000 pods of 100m/100Mi each (gang, minCount 1,000), created before the pods (-measure-pods, default 10,000: 10 groups)",
		count:     func(s sizes) int { return s.measured(largeGangPods) },
		pod:       func(i, _ int) *v1.Pod { return gangPod(i, largeGangSize) },
		groupSize: largeGangSize,
		// kube-scheduler v1.37.2 binds the first pod of this backlog
		// only after minutes (210 s at 5,000 nodes on 2 cores).
		minStall: 10 * time.Minute,
	},
	{
		name:  "idle",
		what:  "scheduler CPU while idle: -pool-pods pods that fit nowhere, tried once, then -idle-duration of churn: -completion-rate pod completions per second on KWOK nodes, and a node, an unschedulable pod and a Service created and deleted every -churn-interval",
		count: func(s sizes) int { return 0 },
		pod:   func(i, _ int) *v1.Pod { return defaultPerfPod(i) },
		idle:  true,
	},
}

// measuredPrefix starts the name of every pod a drain measures; the
// recorder counts only those as bound (pool, fill and churn pods are
// named otherwise).
const measuredPrefix = "pod-"

// warmUpPodName names the pod a stream binds before its measured pods, to
// know the scheduler is up. It carries measuredPrefix, so the recorder
// counts it as bound, and no index, so it is no measured pod's name.
const warmUpPodName = measuredPrefix + "warmup"

// controllers returns the kube-controller-manager controllers w needs
// beside the scheduler, or nil.
func (w workload) controllers() []string {
	switch {
	case w.claims:
		return controlplane.StorageControllers()
	case w.devices:
		return controlplane.DRAControllers()
	case w.gangs():
		return controlplane.GangControllers()
	}
	return nil
}

// controllerManagerFlags returns what kube-controller-manager needs, beside
// the harness's defaults, to run w's controllers.
func (w workload) controllerManagerFlags() []string {
	if w.gangs() {
		return controlplane.GenericWorkloadControllerManagerFlags()
	}
	return nil
}

// gangs reports whether w's pods are members of PodGroups.
func (w workload) gangs() bool { return w.groupSize > 0 }

// skipsCeilings reports whether the ceilings sit w out.
func (w workload) skipsCeilings() bool { return w.ceilingSkipped() != "" }

// ceilingSkipped says why the ceilings, which post Bindings and nothing
// else, cannot run w, or "" when they can.
func (w workload) ceilingSkipped() string {
	switch {
	case w.claims:
		return "no claim would get a volume"
	case w.devices:
		return "no claim would get a device"
	case w.preempt:
		return "binding would overcommit nodes that only preemption frees"
	case w.idle:
		return "there is nothing to bind"
	}
	return ""
}

// mixedPod cycles through ten kinds of pod. The anti-affinity tenth is
// capped at one pod per node (later ones are basic) so the set always fits.
func mixedPod(i, nodes int) *v1.Pod {
	switch i % 10 {
	case 4:
		p := basePod(i, "mixed-pref", "500m", "1Gi")
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
				Weight:     10,
				Preference: frameworktest.MakeNodeSelectorTerm().In(v1.LabelTopologyZone, zoneName(0)).Obj(),
			}},
		}}
		return p
	case 5:
		return basePod(i, "mixed-large", "1", "4Gi")
	case 6, 7:
		return withZoneSpread(basePod(i, "mixed-spread", "200m", "256Mi"))
	case 8:
		if i/10 < nodes {
			return withHostnameAntiAffinity(basePod(i, "mixed-aa", "100m", "128Mi"))
		}
	case 9:
		p := basePod(i, "mixed-zone", "250m", "512Mi")
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
				frameworktest.MakeNodeSelectorTerm().In(v1.LabelTopologyZone, zoneName(1)).Obj(),
			}},
		}}
		return p
	}
	return basePod(i, "mixed-basic", "100m", "128Mi")
}

// basePod is pod i with label app=app and one container's requests; the
// namespace and schedulerName are set when it is created.
func basePod(i int, app, cpu, mem string) *v1.Pod {
	p := frameworktest.MakePod().Name(podName(i)).Label("app", app).Req(cpu, mem).Obj()
	// The API server assigns namespace and UID; the builder's derived UID
	// would only be thrown away.
	p.Namespace, p.UID = "", ""
	return p
}

func podName(i int) string { return fmt.Sprintf(measuredPrefix+"%06d", i) }

func withZoneSpread(p *v1.Pod) *v1.Pod {
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       v1.LabelTopologyZone,
		WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}},
	}}
	return p
}

func withHostnameAntiAffinity(p *v1.Pod) *v1.Pod {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}},
			TopologyKey:   v1.LabelHostname,
		}},
	}
	return p
}

func workloadByName(name string) (workload, bool) {
	for _, w := range workloads {
		if w.name == name {
			return w, true
		}
	}
	return workload{}, false
}

func workloadNames() []string {
	names := make([]string, len(workloads))
	for i, w := range workloads {
		names[i] = w.name
	}
	return names
}
