package main

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Placement is the check of where a contender put the pods: hard
// constraints it broke and how evenly it used the nodes.
type Placement struct {
	Pods  int `json:"pods"`
	Bound int `json:"bound"`
	// Violations is the sum of the counts below.
	Violations int `json:"violations"`
	// Overcommit counts (node, resource) pairs whose requests exceed
	// allocatable: cpu, memory or the pod count.
	Overcommit int `json:"overcommit"`
	// Spread counts pods beyond what maxSkew allows, summed over the
	// DoNotSchedule topology spread constraints.
	Spread int `json:"spread"`
	// MaxSkew is the largest skew seen over those constraints.
	MaxSkew int `json:"max_skew"`
	// AntiAffinity counts pods sharing a topology domain with a pod their
	// required anti-affinity excludes.
	AntiAffinity int `json:"anti_affinity"`
	// NodeAffinity counts pods on a node their nodeSelector or required
	// node affinity excludes.
	NodeAffinity int `json:"node_affinity"`
	// ClaimBinding counts claims of bound pods that are not bound to
	// exactly one volume: unbound, bound to a volume that is missing or
	// whose claimRef names another claim, or claimed by several volumes.
	ClaimBinding int `json:"claim_binding,omitempty"`
	// SharedVolumes counts volumes given to more than one claim.
	SharedVolumes int `json:"shared_volumes,omitempty"`
	// VolumeNodeAffinity counts pods on a node that the node affinity of
	// one of their volumes excludes.
	VolumeNodeAffinity int `json:"volume_node_affinity,omitempty"`
	// DeviceAllocation counts faults of the device claims of bound pods:
	// a claim missing or unallocated, allocated anything but one device
	// that the pod's node publishes, or not reserved for the pod.
	DeviceAllocation int `json:"device_allocation,omitempty"`
	// SharedDevices counts devices allocated to more than one claim.
	SharedDevices int `json:"shared_devices,omitempty"`
	// PartialGroups counts the gangs (gangs.go) with some members bound
	// but fewer than minCount, and the bound pods whose PodGroup does not
	// exist or has no gang policy. Groups counts the PodGroups of a gang
	// workload and GroupsPlaced those with at least minCount bound.
	PartialGroups int `json:"partial_groups,omitempty"`
	Groups        int `json:"groups,omitempty"`
	GroupsPlaced  int `json:"groups_placed,omitempty"`
	// Examples describes the first few violations.
	Examples []string `json:"examples,omitempty"`
	// CPUStddevMilli is the population standard deviation of the CPU
	// requested per node, over all nodes, in millicores.
	CPUStddevMilli float64 `json:"cpu_stddev_milli"`
}

const maxExamples = 5

func (p *Placement) violate(kind *int, format string, args ...any) {
	*kind++
	p.Violations++
	if len(p.Examples) < maxExamples {
		p.Examples = append(p.Examples, fmt.Sprintf(format, args...))
	}
}

// checkPlacement checks pods (bound or not) against nodes. The rules are
// the ones the workloads use, written independently of either scheduler:
// resources fit, DoNotSchedule topology spread, required pod
// anti-affinity, nodeSelector and required node affinity (and, in
// checkVolumes, the claims and volumes; in checkDevices, the device
// claims; in checkGangs, the gangs).
func checkPlacement(nodes []*v1.Node, pods []*v1.Pod) Placement {
	res := Placement{Pods: len(pods)}
	nodeByName := make(map[string]*v1.Node, len(nodes))
	for _, n := range nodes {
		nodeByName[n.Name] = n
	}
	type usage struct{ cpu, mem, pods int64 }
	used := make(map[string]*usage, len(nodes))
	var bound []*v1.Pod
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		bound = append(bound, p)
		u := used[p.Spec.NodeName]
		if u == nil {
			u = &usage{}
			used[p.Spec.NodeName] = u
		}
		cpu, mem := podRequests(p)
		u.cpu += cpu
		u.mem += mem
		u.pods++
	}
	res.Bound = len(bound)

	// Resources, and evenness over every node including empty ones.
	var sum, sumSq float64
	for _, n := range nodes {
		u := used[n.Name]
		if u == nil {
			u = &usage{}
		}
		alloc := n.Status.Allocatable
		if u.cpu > alloc.Cpu().MilliValue() {
			res.violate(&res.Overcommit, "node %s: %dm cpu requested of %dm", n.Name, u.cpu, alloc.Cpu().MilliValue())
		}
		if u.mem > alloc.Memory().Value() {
			res.violate(&res.Overcommit, "node %s: %d bytes memory requested of %d", n.Name, u.mem, alloc.Memory().Value())
		}
		if u.pods > alloc.Pods().Value() {
			res.violate(&res.Overcommit, "node %s: %d pods of %d", n.Name, u.pods, alloc.Pods().Value())
		}
		c := float64(u.cpu)
		sum += c
		sumSq += c * c
	}
	if len(nodes) > 0 {
		mean := sum / float64(len(nodes))
		res.CPUStddevMilli = math.Sqrt(max(0, sumSq/float64(len(nodes))-mean*mean))
	}

	for _, p := range bound {
		n := nodeByName[p.Spec.NodeName]
		if n == nil {
			res.violate(&res.NodeAffinity, "pod %s bound to unknown node %q", p.Name, p.Spec.NodeName)
			continue
		}
		if !nodeMatches(p, n) {
			res.violate(&res.NodeAffinity, "pod %s on node %s, which its node selector or required node affinity excludes", p.Name, n.Name)
		}
	}
	checkSpread(&res, nodes, nodeByName, bound)
	checkAntiAffinity(&res, nodeByName, bound)
	return res
}

// podRequests sums the containers' cpu (millicores) and memory requests.
// The workloads have no init containers or overhead.
func podRequests(p *v1.Pod) (cpu, mem int64) {
	for _, c := range p.Spec.Containers {
		cpu += c.Resources.Requests.Cpu().MilliValue()
		mem += c.Resources.Requests.Memory().Value()
	}
	return cpu, mem
}

// nodeMatches reports whether n satisfies p's nodeSelector and required
// node affinity (terms ORed, expressions ANDed).
func nodeMatches(p *v1.Pod, n *v1.Node) bool {
	if !labels.SelectorFromSet(p.Spec.NodeSelector).Matches(labels.Set(n.Labels)) {
		return false
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	return selectorMatches(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, n)
}

var nodeSelectorOps = map[v1.NodeSelectorOperator]selection.Operator{
	v1.NodeSelectorOpIn:           selection.In,
	v1.NodeSelectorOpNotIn:        selection.NotIn,
	v1.NodeSelectorOpExists:       selection.Exists,
	v1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	v1.NodeSelectorOpGt:           selection.GreaterThan,
	v1.NodeSelectorOpLt:           selection.LessThan,
}

func termMatches(term v1.NodeSelectorTerm, n *v1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false // an empty term matches nothing
	}
	for _, e := range term.MatchExpressions {
		r, err := labels.NewRequirement(e.Key, nodeSelectorOps[e.Operator], e.Values)
		if err != nil || !r.Matches(labels.Set(n.Labels)) {
			return false
		}
	}
	for _, f := range term.MatchFields {
		if f.Key != "metadata.name" {
			return false
		}
		r, err := labels.NewRequirement("name", nodeSelectorOps[f.Operator], f.Values)
		if err != nil || !r.Matches(labels.Set{"name": n.Name}) {
			return false
		}
	}
	return true
}

// checkVolumes adds to res the checks of the pods' claims and volumes: no
// volume is named by two claims; every claim of a bound pod is bound to
// exactly one volume (its spec.volumeName names a volume whose claimRef
// names the claim, uid included, and no other volume's claimRef names
// it); and every bound pod's node is one its volumes' node affinity
// admits. The claims of pods still pending are not checked: an incomplete
// drain is reported as such.
func checkVolumes(res *Placement, nodes []*v1.Node, pods []*v1.Pod, claims []*v1.PersistentVolumeClaim, pvs []*v1.PersistentVolume) {
	nodeByName := make(map[string]*v1.Node, len(nodes))
	for _, n := range nodes {
		nodeByName[n.Name] = n
	}
	pvByName := make(map[string]*v1.PersistentVolume, len(pvs))
	for _, pv := range pvs {
		pvByName[pv.Name] = pv
	}
	claimByKey := make(map[string]*v1.PersistentVolumeClaim, len(claims))
	namedBy := map[string][]string{} // volume → the claims whose spec.volumeName names it
	for _, c := range claims {
		key := c.Namespace + "/" + c.Name
		claimByKey[key] = c
		if c.Spec.VolumeName != "" {
			namedBy[c.Spec.VolumeName] = append(namedBy[c.Spec.VolumeName], key)
		}
	}
	claimedBy := map[string][]string{} // claim → the volumes whose claimRef names it
	for _, pv := range pvs {
		if ref := pv.Spec.ClaimRef; ref != nil {
			key := ref.Namespace + "/" + ref.Name
			if c := claimByKey[key]; c != nil && (ref.UID == "" || ref.UID == c.UID) {
				claimedBy[key] = append(claimedBy[key], pv.Name)
			}
		}
	}
	shared := make([]string, 0, len(namedBy))
	for name, keys := range namedBy {
		if len(keys) > 1 {
			shared = append(shared, name)
		}
	}
	sort.Strings(shared)
	for _, name := range shared {
		keys := namedBy[name]
		sort.Strings(keys)
		res.violate(&res.SharedVolumes, "volume %s given to %d claims: %s", name, len(keys), strings.Join(keys, ", "))
	}

	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		for _, vol := range p.Spec.Volumes {
			if vol.PersistentVolumeClaim == nil {
				continue
			}
			key := p.Namespace + "/" + vol.PersistentVolumeClaim.ClaimName
			c := claimByKey[key]
			var pv *v1.PersistentVolume
			if c != nil {
				pv = pvByName[c.Spec.VolumeName]
			}
			switch {
			case c == nil:
				res.violate(&res.ClaimBinding, "pod %s on %s: its claim %s does not exist", p.Name, p.Spec.NodeName, key)
				continue
			case c.Spec.VolumeName == "":
				res.violate(&res.ClaimBinding, "pod %s on %s: its claim %s is not bound", p.Name, p.Spec.NodeName, key)
				continue
			case pv == nil:
				res.violate(&res.ClaimBinding, "claim %s of pod %s is bound to volume %s, which does not exist", key, p.Name, c.Spec.VolumeName)
				continue
			case !slices.Contains(claimedBy[key], pv.Name):
				res.violate(&res.ClaimBinding, "claim %s names volume %s, whose claimRef does not name it (%s)", key, pv.Name, describeClaimRef(pv))
			case len(claimedBy[key]) > 1:
				res.violate(&res.ClaimBinding, "claim %s is claimed by %d volumes: %s", key, len(claimedBy[key]), strings.Join(claimedBy[key], ", "))
			}
			n := nodeByName[p.Spec.NodeName]
			if n == nil {
				continue // checkPlacement reports the unknown node
			}
			if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil && !selectorMatches(na.Required, n) {
				res.violate(&res.VolumeNodeAffinity, "pod %s on node %s, which the node affinity of its volume %s excludes", p.Name, n.Name, pv.Name)
			}
		}
	}
}

func describeClaimRef(pv *v1.PersistentVolume) string {
	ref := pv.Spec.ClaimRef
	if ref == nil {
		return "no claimRef"
	}
	return fmt.Sprintf("claimRef %s/%s uid %q", ref.Namespace, ref.Name, ref.UID)
}

// selectorMatches reports whether n satisfies a required node selector:
// its terms ORed.
func selectorMatches(sel *v1.NodeSelector, n *v1.Node) bool {
	for _, term := range sel.NodeSelectorTerms {
		if termMatches(term, n) {
			return true
		}
	}
	return false
}

// checkSpread checks every DoNotSchedule topology spread constraint once
// per distinct (namespace, constraint): over the domains of all nodes that
// carry the key (the workloads' spread pods have no node affinity that
// would narrow them), skew = max - min matching pods must not exceed
// maxSkew.
func checkSpread(res *Placement, nodes []*v1.Node, nodeByName map[string]*v1.Node, bound []*v1.Pod) {
	type group struct {
		ns       string
		c        v1.TopologySpreadConstraint
		selector labels.Selector
	}
	groups := map[string]group{}
	for _, p := range bound {
		for _, c := range p.Spec.TopologySpreadConstraints {
			if c.WhenUnsatisfiable != v1.DoNotSchedule {
				continue
			}
			key := fmt.Sprintf("%s|%s|%d|%s", p.Namespace, c.TopologyKey, c.MaxSkew, metav1.FormatLabelSelector(c.LabelSelector))
			if _, ok := groups[key]; ok {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
			if err != nil {
				res.violate(&res.Spread, "pod %s: bad spread selector: %v", p.Name, err)
				continue
			}
			groups[key] = group{ns: p.Namespace, c: c, selector: sel}
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g := groups[k]
		counts := map[string]int{}
		for _, n := range nodes {
			if v, ok := n.Labels[g.c.TopologyKey]; ok {
				counts[v] += 0
			}
		}
		for _, p := range bound {
			if p.Namespace != g.ns || !g.selector.Matches(labels.Set(p.Labels)) {
				continue
			}
			if n := nodeByName[p.Spec.NodeName]; n != nil {
				if v, ok := n.Labels[g.c.TopologyKey]; ok {
					counts[v]++
				}
			}
		}
		if len(counts) == 0 {
			continue
		}
		lo, hi := math.MaxInt, 0
		for _, c := range counts {
			lo, hi = min(lo, c), max(hi, c)
		}
		res.MaxSkew = max(res.MaxSkew, hi-lo)
		if hi-lo <= int(g.c.MaxSkew) {
			continue
		}
		doms := make([]string, 0, len(counts))
		for d := range counts {
			doms = append(doms, d)
		}
		sort.Strings(doms)
		for _, d := range doms {
			over := counts[d] - lo - int(g.c.MaxSkew)
			for range max(0, over) {
				res.violate(&res.Spread, "spread %s over %s: %s has %d pods, the emptiest domain %d (maxSkew %d)",
					metav1.FormatLabelSelector(g.c.LabelSelector), g.c.TopologyKey, d, counts[d], lo, g.c.MaxSkew)
			}
		}
	}
}

// checkAntiAffinity counts each pod whose required anti-affinity term
// matches another pod in the same topology domain (namespaces: the pod's
// own, as the workloads' terms name none).
func checkAntiAffinity(res *Placement, nodeByName map[string]*v1.Node, bound []*v1.Pod) {
	// byDomain[topologyKey][value] lists the pods there, built per key on
	// first use so the check stays linear in pods per domain.
	byDomain := map[string]map[string][]*v1.Pod{}
	domainOf := func(p *v1.Pod, key string) (string, bool) {
		n := nodeByName[p.Spec.NodeName]
		if n == nil {
			return "", false
		}
		v, ok := n.Labels[key]
		return v, ok
	}
	for _, p := range bound {
		a := p.Spec.Affinity
		if a == nil || a.PodAntiAffinity == nil {
			continue
		}
		for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			idx, ok := byDomain[term.TopologyKey]
			if !ok {
				idx = map[string][]*v1.Pod{}
				for _, q := range bound {
					if v, ok := domainOf(q, term.TopologyKey); ok {
						idx[v] = append(idx[v], q)
					}
				}
				byDomain[term.TopologyKey] = idx
			}
			dom, ok := domainOf(p, term.TopologyKey)
			if !ok {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
			if err != nil {
				res.violate(&res.AntiAffinity, "pod %s: bad anti-affinity selector: %v", p.Name, err)
				continue
			}
			for _, q := range idx[dom] {
				if q != p && q.Namespace == p.Namespace && sel.Matches(labels.Set(q.Labels)) {
					res.violate(&res.AntiAffinity, "pod %s shares %s=%s with %s, which its anti-affinity excludes", p.Name, term.TopologyKey, dom, q.Name)
					break
				}
			}
		}
	}
}
