package frameworktest

import (
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodAffinityTermWrapper builds a pod affinity term:
//
//	frameworktest.MakePodAffinityTerm(v1.LabelTopologyZone).MatchLabel("app", "web").Obj()
//
// The label selector is nil (selecting nothing) until a requirement is
// added; EmptySelector makes it select every pod.
type PodAffinityTermWrapper struct{ v1.PodAffinityTerm }

// MakePodAffinityTerm returns a term over topologyKey with no selector.
func MakePodAffinityTerm(topologyKey string) *PodAffinityTermWrapper {
	return &PodAffinityTermWrapper{v1.PodAffinityTerm{TopologyKey: topologyKey}}
}

// Obj returns the term.
func (t *PodAffinityTermWrapper) Obj() v1.PodAffinityTerm { return t.PodAffinityTerm }

func (t *PodAffinityTermWrapper) selector() *metav1.LabelSelector {
	if t.LabelSelector == nil {
		t.LabelSelector = &metav1.LabelSelector{}
	}
	return t.LabelSelector
}

// EmptySelector sets an empty label selector, which selects every pod.
func (t *PodAffinityTermWrapper) EmptySelector() *PodAffinityTermWrapper {
	t.selector()
	return t
}

// MatchLabel adds a matchLabels entry.
func (t *PodAffinityTermWrapper) MatchLabel(k, v string) *PodAffinityTermWrapper {
	s := t.selector()
	if s.MatchLabels == nil {
		s.MatchLabels = map[string]string{}
	}
	s.MatchLabels[k] = v
	return t
}

// Expr adds a matchExpressions requirement.
func (t *PodAffinityTermWrapper) Expr(key string, op metav1.LabelSelectorOperator, values ...string) *PodAffinityTermWrapper {
	s := t.selector()
	s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values})
	return t
}

// In adds "key In values".
func (t *PodAffinityTermWrapper) In(key string, values ...string) *PodAffinityTermWrapper {
	return t.Expr(key, metav1.LabelSelectorOpIn, values...)
}

// NotIn adds "key NotIn values".
func (t *PodAffinityTermWrapper) NotIn(key string, values ...string) *PodAffinityTermWrapper {
	return t.Expr(key, metav1.LabelSelectorOpNotIn, values...)
}

// Exists adds "key Exists".
func (t *PodAffinityTermWrapper) Exists(key string) *PodAffinityTermWrapper {
	return t.Expr(key, metav1.LabelSelectorOpExists)
}

// Namespaces sets the namespaces the term names.
func (t *PodAffinityTermWrapper) Namespaces(ns ...string) *PodAffinityTermWrapper {
	t.PodAffinityTerm.Namespaces = ns
	return t
}

// NamespaceSelector sets the namespace selector (an empty one selects every
// namespace).
func (t *PodAffinityTermWrapper) NamespaceSelector(sel *metav1.LabelSelector) *PodAffinityTermWrapper {
	t.PodAffinityTerm.NamespaceSelector = sel
	return t
}

// MatchLabelKeys sets matchLabelKeys.
func (t *PodAffinityTermWrapper) MatchLabelKeys(keys ...string) *PodAffinityTermWrapper {
	t.PodAffinityTerm.MatchLabelKeys = keys
	return t
}

// MismatchLabelKeys sets mismatchLabelKeys.
func (t *PodAffinityTermWrapper) MismatchLabelKeys(keys ...string) *PodAffinityTermWrapper {
	t.PodAffinityTerm.MismatchLabelKeys = keys
	return t
}

func (p *PodWrapper) podAffinity() *v1.PodAffinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.PodAffinity == nil {
		p.Spec.Affinity.PodAffinity = &v1.PodAffinity{}
	}
	return p.Spec.Affinity.PodAffinity
}

func (p *PodWrapper) podAntiAffinity() *v1.PodAntiAffinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.PodAntiAffinity == nil {
		p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	return p.Spec.Affinity.PodAntiAffinity
}

// RequiredPodAffinity appends a required pod affinity term.
func (p *PodWrapper) RequiredPodAffinity(term v1.PodAffinityTerm) *PodWrapper {
	a := p.podAffinity()
	a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, term)
	return p
}

// RequiredPodAntiAffinity appends a required pod anti-affinity term.
func (p *PodWrapper) RequiredPodAntiAffinity(term v1.PodAffinityTerm) *PodWrapper {
	a := p.podAntiAffinity()
	a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, term)
	return p
}

// PreferredPodAffinity appends a preferred pod affinity term.
func (p *PodWrapper) PreferredPodAffinity(weight int32, term v1.PodAffinityTerm) *PodWrapper {
	a := p.podAffinity()
	a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: term})
	return p
}

// PreferredPodAntiAffinity appends a preferred pod anti-affinity term.
func (p *PodWrapper) PreferredPodAntiAffinity(weight int32, term v1.PodAffinityTerm) *PodWrapper {
	a := p.podAntiAffinity()
	a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: term})
	return p
}

// ContainerImages replaces the containers with one per image.
func (p *PodWrapper) ContainerImages(images ...string) *PodWrapper {
	p.Spec.Containers = nil
	for i, img := range images {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "c" + strconv.Itoa(i), Image: img})
	}
	return p
}

// InitContainerImage appends an init container running image.
func (p *PodWrapper) InitContainerImage(image string) *PodWrapper {
	p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{
		Name: "init" + strconv.Itoa(len(p.Spec.InitContainers)), Image: image,
	})
	return p
}

// ImageVolume appends an image volume mounting reference.
func (p *PodWrapper) ImageVolume(reference string) *PodWrapper {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{
		Name:         "img" + strconv.Itoa(len(p.Spec.Volumes)),
		VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: reference}},
	})
	return p
}
