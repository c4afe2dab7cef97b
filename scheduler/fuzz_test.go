package scheduler

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// FuzzFiltersAndScorers feeds random, valid pods and nodes through every
// filter and scorer of the default profile (as the registry builds it),
// each plugin on every node whatever the others said, and through a whole
// scheduling cycle: none may panic, and every normalized score is in
// [0, 100]. The seed corpus runs with every `go test`; `go test -fuzz
// FuzzFiltersAndScorers ./scheduler/` searches further.
func FuzzFiltersAndScorers(f *testing.F) {
	for _, seed := range [][]byte{
		nil,
		{0},
		[]byte("yardmaster"),
		{3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
		{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
		{7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0},
		{1, 2, 4, 8, 16, 32, 64, 128, 1, 3, 9, 27, 81, 243, 5, 25, 125, 6, 36, 216},
		[]byte("spread affinity anti-affinity taints ports volumes selectors gt lt"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		nodes := make([]*v1.Node, 1+g.n(8))
		for i := range nodes {
			nodes[i] = g.node(i)
		}
		s := newTestScheduler(t, 100, nodes...)
		for i := range g.n(12) {
			p := g.pod(fmt.Sprintf("existing-%d", i))
			p.Spec.NodeName = nodes[g.n(len(nodes))].Name
			s.Cache.AddPod(p)
		}
		pod := g.pod("incoming")
		ctx := context.Background()
		prof := s.profiles["yardmaster"]

		// Every plugin, on every node.
		s.Cache.UpdateSnapshot(s.snapshot)
		all := s.snapshot.List()
		state := framework.NewCycleState()
		for _, pl := range prof.preFilter {
			if _, st := pl.PreFilter(ctx, state, pod, all); st.IsSkip() {
				if state.SkipFilterPlugins == nil {
					state.SkipFilterPlugins = map[string]struct{}{}
				}
				state.SkipFilterPlugins[pl.Name()] = struct{}{}
			}
		}
		for i, pl := range prof.filter {
			if _, skip := state.SkipFilterPlugins[pl.Name()]; skip {
				continue
			}
			for _, ni := range all {
				_ = pl.Filter(ctx, state, pod, ni)
				if sf := prof.slotFilter[i]; sf != nil {
					_, _ = sf.FilterSlot(ctx, state, pod, ni.Slot, ni.Generation)
				}
			}
			if ps, ok := pl.(framework.PodSigner); ok {
				_, _ = ps.SignPod(state, pod, nil)
			}
		}
		for _, pl := range prof.preScore {
			if st := pl.PreScore(ctx, state, pod, all); st.IsSkip() {
				if state.SkipScorePlugins == nil {
					state.SkipScorePlugins = map[string]struct{}{}
				}
				state.SkipScorePlugins[pl.Name()] = struct{}{}
			}
		}
		for _, sc := range prof.score {
			if _, skip := state.SkipScorePlugins[sc.Name()]; skip {
				continue
			}
			scores := make(framework.NodeScoreList, len(all))
			failed := false
			for i, ni := range all {
				v, st := sc.Score(ctx, state, pod, ni)
				failed = failed || !st.IsSuccess()
				scores[i] = framework.NodeScore{Name: ni.NodeName(), Score: v}
			}
			if ext := sc.ScoreExtensions(); ext != nil && !failed {
				if st := ext.NormalizeScore(ctx, state, pod, scores); !st.IsSuccess() {
					continue
				}
			}
			if failed {
				continue
			}
			for _, ns := range scores {
				if ns.Score < 0 || ns.Score > 100 {
					t.Errorf("%s scored node %s %d, outside [0, 100]", sc.Name(), ns.Name, ns.Score)
				}
			}
		}

		// And a whole cycle, as the scheduler runs it.
		if _, err := s.scheduleForTest(pod); err != nil {
			_ = err.Error()
		}
	})
}

// gen makes valid objects from fuzz input: each choice reads a byte, and
// an exhausted input reads zeros.
type gen struct {
	data []byte
	pos  int
}

// n returns a number in [0, max).
func (g *gen) n(max int) int {
	if max <= 1 {
		return 0
	}
	var b byte
	if g.pos < len(g.data) {
		b = g.data[g.pos]
		g.pos++
	}
	return int(b) % max
}

func (g *gen) pick(choices ...string) string { return choices[g.n(len(choices))] }

var (
	labelKeys   = []string{"zone", "app", "tier", v1.LabelTopologyZone, v1.LabelHostname, "example.com/gpu", "rank"}
	labelValues = []string{"a", "b", "c", "web", "db", "1", "10", "300"}
)

func (g *gen) labels() map[string]string {
	m := map[string]string{}
	for range g.n(4) {
		m[labelKeys[g.n(len(labelKeys))]] = labelValues[g.n(len(labelValues))]
	}
	return m
}

func (g *gen) quantity(units ...string) resource.Quantity {
	return resource.MustParse(strconv.Itoa(g.n(5000)) + units[g.n(len(units))])
}

func (g *gen) node(i int) *v1.Node {
	w := frameworktest.MakeNode().Name(fmt.Sprintf("node-%d", i))
	n := w.Obj()
	n.Labels = g.labels()
	n.Labels[v1.LabelHostname] = g.pick(n.Name, n.Name, "shared-host")
	n.Status.Capacity = v1.ResourceList{
		v1.ResourceCPU:              g.quantity("m", ""),
		v1.ResourceMemory:           g.quantity("Mi", "Gi", ""),
		v1.ResourcePods:             resource.MustParse(strconv.Itoa(g.n(120))),
		v1.ResourceEphemeralStorage: g.quantity("Gi"),
	}
	if g.n(3) == 0 {
		n.Status.Capacity["example.com/gpu"] = resource.MustParse(strconv.Itoa(g.n(9)))
	}
	if g.n(4) > 0 {
		n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	}
	for range g.n(3) {
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{
			Key:    labelKeys[g.n(len(labelKeys))],
			Value:  g.pick("", "a", "gpu"),
			Effect: v1.TaintEffect(g.pick(string(v1.TaintEffectNoSchedule), string(v1.TaintEffectPreferNoSchedule), string(v1.TaintEffectNoExecute))),
		})
	}
	n.Spec.Unschedulable = g.n(6) == 0
	for range g.n(3) {
		n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: []string{g.pick("web:1", "db:2", "registry.k8s.io/pause:3.10")}, SizeBytes: int64(g.n(200)) << 20})
	}
	return n
}

func (g *gen) selector() *metav1.LabelSelector {
	sel := &metav1.LabelSelector{}
	switch g.n(4) {
	case 0:
		sel.MatchLabels = g.labels()
	case 1:
		op := metav1.LabelSelectorOperator(g.pick(string(metav1.LabelSelectorOpIn), string(metav1.LabelSelectorOpNotIn), string(metav1.LabelSelectorOpExists), string(metav1.LabelSelectorOpDoesNotExist)))
		req := metav1.LabelSelectorRequirement{Key: labelKeys[g.n(len(labelKeys))], Operator: op}
		if op == metav1.LabelSelectorOpIn || op == metav1.LabelSelectorOpNotIn {
			req.Values = []string{labelValues[g.n(len(labelValues))], labelValues[g.n(len(labelValues))]}
		}
		sel.MatchExpressions = []metav1.LabelSelectorRequirement{req}
	case 2:
		// Empty: matches every pod.
	default:
		return nil
	}
	return sel
}

func (g *gen) nodeSelectorTerm() v1.NodeSelectorTerm {
	var term v1.NodeSelectorTerm
	for range 1 + g.n(2) {
		op := v1.NodeSelectorOperator(g.pick(string(v1.NodeSelectorOpIn), string(v1.NodeSelectorOpNotIn), string(v1.NodeSelectorOpExists),
			string(v1.NodeSelectorOpDoesNotExist), string(v1.NodeSelectorOpGt), string(v1.NodeSelectorOpLt)))
		req := v1.NodeSelectorRequirement{Key: labelKeys[g.n(len(labelKeys))], Operator: op}
		switch op {
		case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
			req.Values = []string{labelValues[g.n(len(labelValues))]}
		case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
			req.Values = []string{strconv.Itoa(g.n(400))}
		}
		if g.n(5) == 0 {
			// A field selector takes metadata.name and In or NotIn only.
			req = v1.NodeSelectorRequirement{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{fmt.Sprintf("node-%d", g.n(8))}}
			term.MatchFields = append(term.MatchFields, req)
			continue
		}
		term.MatchExpressions = append(term.MatchExpressions, req)
	}
	return term
}

func (g *gen) affinityTerm() v1.PodAffinityTerm {
	term := v1.PodAffinityTerm{
		LabelSelector: g.selector(),
		TopologyKey:   g.pick(v1.LabelHostname, v1.LabelTopologyZone, "zone", "rank"),
	}
	switch g.n(4) {
	case 0:
		term.Namespaces = []string{g.pick("default", "other")}
	case 1:
		term.NamespaceSelector = &metav1.LabelSelector{}
	}
	if term.LabelSelector != nil && g.n(4) == 0 {
		term.MatchLabelKeys = []string{"app"}
	}
	return term
}

func (g *gen) pod(name string) *v1.Pod {
	w := frameworktest.MakePod().Name(name)
	p := w.Obj()
	p.UID = types.UID(name + "-uid")
	p.Labels = g.labels()
	c := &p.Spec.Containers[0]
	c.Resources.Requests = v1.ResourceList{}
	if g.n(4) > 0 {
		c.Resources.Requests[v1.ResourceCPU] = g.quantity("m")
	}
	if g.n(4) > 0 {
		c.Resources.Requests[v1.ResourceMemory] = g.quantity("Mi")
	}
	if g.n(5) == 0 {
		c.Resources.Requests[v1.ResourceEphemeralStorage] = g.quantity("Mi")
	}
	if g.n(5) == 0 {
		gpus := resource.MustParse(strconv.Itoa(g.n(4)))
		c.Resources.Requests["example.com/gpu"] = gpus
		c.Resources.Limits = v1.ResourceList{"example.com/gpu": gpus}
	}
	c.Image = g.pick("web:1", "db:2", "registry.k8s.io/pause:3.10")
	for range g.n(3) {
		c.Ports = append(c.Ports, v1.ContainerPort{
			ContainerPort: int32(1 + g.n(100)), HostPort: int32(8000 + g.n(3)),
			Protocol: v1.Protocol(g.pick(string(v1.ProtocolTCP), string(v1.ProtocolUDP))),
			HostIP:   g.pick("", "0.0.0.0", "127.0.0.1"),
		})
	}
	if g.n(4) == 0 {
		p.Spec.InitContainers = []v1.Container{{Name: "init", Image: "busybox", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: g.quantity("m")}}}}
		if g.n(2) == 0 {
			always := v1.ContainerRestartPolicyAlways
			p.Spec.InitContainers[0].RestartPolicy = &always // a sidecar
		}
	}
	if g.n(5) == 0 {
		p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: g.quantity("m")}
	}
	if g.n(3) == 0 {
		p.Spec.NodeSelector = g.labels()
	}
	if g.n(5) == 0 {
		p.Spec.NodeName = fmt.Sprintf("node-%d", g.n(9))
	}
	for range g.n(3) {
		tol := v1.Toleration{Key: labelKeys[g.n(len(labelKeys))], Operator: v1.TolerationOperator(g.pick(string(v1.TolerationOpExists), string(v1.TolerationOpEqual)))}
		if tol.Operator == v1.TolerationOpEqual {
			tol.Value = g.pick("", "a", "gpu")
		}
		tol.Effect = v1.TaintEffect(g.pick("", string(v1.TaintEffectNoSchedule), string(v1.TaintEffectPreferNoSchedule), string(v1.TaintEffectNoExecute)))
		if g.n(8) == 0 {
			tol = v1.Toleration{Operator: v1.TolerationOpExists} // tolerates everything
		}
		p.Spec.Tolerations = append(p.Spec.Tolerations, tol)
	}
	aff := &v1.Affinity{}
	if g.n(3) == 0 {
		aff.NodeAffinity = &v1.NodeAffinity{}
		if g.n(2) == 0 {
			aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{g.nodeSelectorTerm()}}
		}
		for range g.n(3) {
			aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.PreferredSchedulingTerm{Weight: int32(1 + g.n(100)), Preference: g.nodeSelectorTerm()})
		}
	}
	if g.n(3) == 0 {
		aff.PodAffinity = &v1.PodAffinity{}
		if g.n(2) == 0 {
			aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = []v1.PodAffinityTerm{g.affinityTerm()}
		}
		for range g.n(3) {
			aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.WeightedPodAffinityTerm{Weight: int32(1 + g.n(100)), PodAffinityTerm: g.affinityTerm()})
		}
	}
	if g.n(3) == 0 {
		aff.PodAntiAffinity = &v1.PodAntiAffinity{}
		if g.n(2) == 0 {
			aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = []v1.PodAffinityTerm{g.affinityTerm()}
		}
		for range g.n(3) {
			aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.WeightedPodAffinityTerm{Weight: int32(1 + g.n(100)), PodAffinityTerm: g.affinityTerm()})
		}
	}
	if aff.NodeAffinity != nil || aff.PodAffinity != nil || aff.PodAntiAffinity != nil {
		p.Spec.Affinity = aff
	}
	for range g.n(3) {
		c := v1.TopologySpreadConstraint{
			MaxSkew:           int32(1 + g.n(3)),
			TopologyKey:       g.pick(v1.LabelHostname, v1.LabelTopologyZone, "zone"),
			WhenUnsatisfiable: v1.UnsatisfiableConstraintAction(g.pick(string(v1.DoNotSchedule), string(v1.ScheduleAnyway))),
			LabelSelector:     g.selector(),
		}
		if c.WhenUnsatisfiable == v1.DoNotSchedule && g.n(3) == 0 {
			minDomains := int32(1 + g.n(4))
			c.MinDomains = &minDomains
		}
		if g.n(3) == 0 {
			honor, ignore := v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore
			c.NodeAffinityPolicy = []*v1.NodeInclusionPolicy{&honor, &ignore}[g.n(2)]
			c.NodeTaintsPolicy = []*v1.NodeInclusionPolicy{&honor, &ignore}[g.n(2)]
		}
		if g.n(4) == 0 {
			c.MatchLabelKeys = []string{"tier"}
		}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
	}
	switch g.n(6) {
	case 0:
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}}}
	case 1:
		p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	case 2:
		p.Spec.Volumes = []v1.Volume{{Name: "img", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "web:1"}}}}
	}
	if g.n(4) == 0 {
		prio := int32(g.n(2000) - 1000)
		p.Spec.Priority = &prio
	}
	return p
}
