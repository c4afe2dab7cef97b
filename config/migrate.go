package config

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// Migrate turns an older KubeSchedulerConfiguration into the v1 file that
// means the same. The model: the file's node tree is edited in place —
// what v1 reads the same is left as it is, comments included — and only
// what changed meaning is rewritten:
//
//   - apiVersion becomes v1, in the file and in pluginConfig args;
//   - fields v1 has no more are deleted, a comment saying what serves
//     instead (healthzBindAddress, metricsBindAddress: --secure-port);
//   - removed plugins are translated where v1 has the same thing
//     (NodeResourcesLeastAllocated/MostAllocated/RequestedToCapacityRatio
//     become NodeResourcesFit's scoringStrategy, with the same resources,
//     shape and weight), deleted where they did nothing (the in-tree
//     volume limit plugins, entries that only disabled or configured a
//     plugin nothing enabled), deleted with a warning where kube-scheduler
//     itself dropped them (NodePreferAvoidPods, SelectorSpread), and
//     refused where v1 has nothing that means the same (NodeLabel,
//     ServiceAffinity enabled);
//   - the version's default score weights that differ from v1's are
//     written under plugins.multiPoint.enabled, so the ranking is the
//     old one.
//
// The defaults of a version are those of the last kube-scheduler release
// that read it (legacySchemas), taken from kubernetes' source of that
// release. The edited tree is then validated as `config validate`
// validates a v1 file, with the positions of the original file: a migrated
// file that would not load is refused, never written.

// Migration is what Migrate made of a file.
type Migration struct {
	// From is the file's apiVersion.
	From string
	// Current is set when the file already is v1: Output is then the file
	// as it was, byte for byte.
	Current bool
	// Output is the v1 file, in YAML.
	Output []byte
	// Notes say what the migration deleted or changed in meaning, each at
	// its line in the original file, in file order.
	Notes []FieldError
}

// legacySchema is what an older version meant by what a file left out.
type legacySchema struct {
	apiVersion string
	// release is the last kube-scheduler release that read the version,
	// whose defaults are the version's meaning here.
	release string
	// scoreDefaults are the version's default score plugins and weights,
	// in kube-scheduler's order.
	scoreDefaults []framework.WeightedPlugin
	// appendMerge: a custom enabled plugin was appended to the defaults
	// (v1beta1), not put in the place of the default of the same name.
	appendMerge bool
	// ignoredPoints are extension points the version's type had but its
	// defaulting dropped (v1beta2 declared multiPoint and preEnqueue and
	// never merged them): kube-scheduler ignored what a file set there.
	ignoredPoints []string
	// bindAddresses: the version has healthzBindAddress and
	// metricsBindAddress.
	bindAddresses bool
	// resourcePlugins: the version scores resources with separate plugins
	// (NodeResourcesLeastAllocated, ...) rather than NodeResourcesFit's
	// scoringStrategy.
	resourcePlugins bool
	// gone are plugins the version refused by name.
	gone []string
}

// Names of plugins only older versions had.
const (
	leastAllocated      = "NodeResourcesLeastAllocated"
	mostAllocated       = "NodeResourcesMostAllocated"
	requestedToCapacity = "RequestedToCapacityRatio"
	nodePreferAvoidPods = "NodePreferAvoidPods"
	selectorSpread      = "SelectorSpread"
	nodeLabel           = "NodeLabel"
	serviceAffinity     = "ServiceAffinity"
	fitName             = "NodeResourcesFit"
)

// resourceStrategies maps v1beta1's resource-scoring plugins to the
// scoringStrategy type of NodeResourcesFit that scores the same.
var resourceStrategies = map[string]framework.ScoringStrategyType{
	leastAllocated:      framework.LeastAllocated,
	mostAllocated:       framework.MostAllocated,
	requestedToCapacity: framework.RequestedToCapacityRatio,
}

// inTreeVolumeLimits are the in-tree volume limit plugins: with CSI
// migration (GA for all four before v1.28) they skip every volume, which
// NodeVolumeLimits counts instead, so they did nothing.
var inTreeVolumeLimits = []string{"EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits"}

// removedByV1beta2 are the plugins kube-scheduler refused in a v1beta2 (and
// later) file: pkg/scheduler/apis/config/validation's
// removedPluginsByVersion in kubernetes v1.22.
var removedByV1beta2 = []string{nodeLabel, serviceAffinity, nodePreferAvoidPods, leastAllocated, mostAllocated, requestedToCapacity}

// legacySchemas are the versions Migrate reads. The score defaults are
// getDefaultPlugins of pkg/scheduler/apis/config/<version>/default_plugins.go
// in the release named, with the feature gates at their defaults there
// (DefaultPodTopologySpread on, so no SelectorSpread; VolumeCapacityPriority
// off, so VolumeBinding does not score).
var legacySchemas = map[string]*legacySchema{
	groupName + "/v1beta1": {
		apiVersion: groupName + "/v1beta1",
		release:    "v1.22",
		scoreDefaults: []framework.WeightedPlugin{
			{Name: "NodeResourcesBalancedAllocation", Weight: 1},
			{Name: "ImageLocality", Weight: 1},
			{Name: "InterPodAffinity", Weight: 1},
			{Name: leastAllocated, Weight: 1},
			{Name: "NodeAffinity", Weight: 1},
			{Name: nodePreferAvoidPods, Weight: 10000},
			{Name: "PodTopologySpread", Weight: 2},
			{Name: "TaintToleration", Weight: 1},
		},
		appendMerge:     true,
		bindAddresses:   true,
		resourcePlugins: true,
	},
	groupName + "/v1beta2": {
		apiVersion: groupName + "/v1beta2",
		release:    "v1.27",
		scoreDefaults: []framework.WeightedPlugin{
			{Name: "NodeResourcesBalancedAllocation", Weight: 1},
			{Name: "ImageLocality", Weight: 1},
			{Name: "InterPodAffinity", Weight: 1},
			{Name: fitName, Weight: 1},
			{Name: "NodeAffinity", Weight: 1},
			{Name: "PodTopologySpread", Weight: 2},
			{Name: "TaintToleration", Weight: 1},
		},
		ignoredPoints: []string{framework.PointMultiPoint, framework.PointPreEnqueue},
		bindAddresses: true,
		gone:          removedByV1beta2,
	},
	// v1beta3 introduced multiPoint and v1's weights; only plugins and the
	// apiVersion change.
	apiV1beta3: {
		apiVersion: apiV1beta3,
		release:    "v1.28",
		scoreDefaults: []framework.WeightedPlugin{
			{Name: "TaintToleration", Weight: 3},
			{Name: "NodeAffinity", Weight: 2},
			{Name: fitName, Weight: 1},
			{Name: "PodTopologySpread", Weight: 2},
			{Name: "InterPodAffinity", Weight: 2},
			{Name: "NodeResourcesBalancedAllocation", Weight: 1},
			{Name: "ImageLocality", Weight: 1},
		},
		gone: removedByV1beta2,
	},
}

// Migrate reads data, a KubeSchedulerConfiguration of any version
// kube-scheduler has read since v1beta1, and returns the v1 file that
// schedules as it did, checked against the plugins of reg. A file already
// v1 is returned unchanged (Current). A file that cannot be migrated — not
// a KubeSchedulerConfiguration, v1alpha1 or v1alpha2, a plugin without a
// v1 equivalent, or a result v1 would refuse — gives an *Error listing
// every problem at its line in data.
func Migrate(data []byte, reg framework.Registry) (*Migration, error) {
	p := newProblems()
	root := parseYAML(data, p)
	if root == nil {
		return nil, p.err()
	}
	apiVersion, kind := mappingValue(root, "apiVersion"), mappingValue(root, "kind")
	switch {
	case kind == nil:
		p.addNode(root, "kind", "required: kind: %s", kindConfig)
	case kind.Kind != yaml.ScalarNode || kind.Value != kindConfig:
		p.addNode(kind, "kind", "must be %s, got %s", kindConfig, describe(kind))
	}
	if apiVersion == nil {
		p.addNode(root, "apiVersion", "required: the version the file was written for")
		return nil, p.err()
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if apiVersion.Kind == yaml.ScalarNode && apiVersion.Value == apiV1 {
		return &Migration{From: apiV1, Current: true, Output: data}, nil
	}
	schema := legacySchemas[apiVersion.Value]
	if schema == nil {
		if apiVersion.Value == groupName+"/v1alpha1" || apiVersion.Value == groupName+"/v1alpha2" {
			p.addNode(apiVersion, "apiVersion", "%s cannot be migrated: its plugins ran beside a scheduling policy or algorithm provider (predicates and priorities, SelectorSpread among them) that v1 cannot express; rewrite it by hand as a v1 file (see `yardmaster config print-defaults`), or first as v1beta1 with kube-scheduler v1.19–v1.22", apiVersion.Value)
		} else {
			p.addNode(apiVersion, "apiVersion", "unsupported %s: migrate reads %s/v1beta1, v1beta2 and v1beta3 (and leaves v1 as it is)", describe(apiVersion), groupName)
		}
		return nil, p.err()
	}
	m := &migrator{s: schema, p: p, reg: reg}
	m.file(root, apiVersion)
	if err := p.err(); err != nil {
		return nil, err
	}
	// The edited tree must load as v1: decoded and built like a file, but
	// with the original positions, so that a problem points into the file
	// the user has.
	d := newDecoder(p)
	d.json = readsAsJSON(data)
	var f fileConfig
	d.decode(root, reflect.ValueOf(&f).Elem(), "")
	if p.err() == nil {
		// build reports through p; its warnings are the file's own.
		_, _ = build(&f, d, reg, Overrides{})
	}
	if len(p.list) > 0 {
		for i := range p.list {
			p.list[i].Message = "the migrated file would not be valid v1: " + p.list[i].Message
		}
		return nil, p.err()
	}
	if readsAsJSON(data) {
		blockStyle(root) // JSON's flow style, written as the YAML it now is
	}
	out, err := encodeNode(withDocumentComments(data, root))
	if err != nil {
		return nil, err
	}
	return &Migration{From: schema.apiVersion, Output: out, Notes: inFileOrder(m.notes)}, nil
}

// withDocumentComments returns root in a document carrying the comments
// data has above and below its first document (the parser gives them to
// the document, which parseYAML does not return). data parsed once already.
func withDocumentComments(data []byte, root *yaml.Node) *yaml.Node {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return root
	}
	return &yaml.Node{Kind: yaml.DocumentNode, HeadComment: doc.HeadComment, FootComment: doc.FootComment, Content: []*yaml.Node{root}}
}

// encodeNode writes a node tree as YAML, indented as Marshal indents.
func encodeNode(root *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("encode migrated configuration: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode migrated configuration: %w", err)
	}
	return buf.Bytes(), nil
}

// migrator is one migration of one file.
type migrator struct {
	s   *legacySchema
	p   *problems
	reg framework.Registry
	// notes are what the output says differently, for the user to read.
	notes []FieldError
}

func (m *migrator) note(n *yaml.Node, path, format string, args ...any) {
	fe := FieldError{Path: path, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		fe.Line, fe.Column = n.Line, n.Column
	}
	m.notes = append(m.notes, fe)
}

// file migrates the top level.
func (m *migrator) file(root, apiVersion *yaml.Node) {
	apiVersion.Value = apiV1
	apiVersion.Tag = "!!str"
	apiVersion.LineComment = joinComment(apiVersion.LineComment, "# was "+m.s.apiVersion+" (yardmaster config migrate)")
	if m.s.bindAddresses {
		for _, field := range []string{"healthzBindAddress", "metricsBindAddress"} {
			k, v := deletePair(root, field)
			if k == nil {
				continue
			}
			m.note(k, field, "deleted: v1 has no %s; yardmaster serves /healthz and /metrics on --secure-port (default 10259) at --bind-address, as kube-scheduler does since it dropped the field", field)
			commentNext(root, k, fmt.Sprintf("# %s: %s was deleted by yardmaster config migrate: v1 has no such field; /healthz and /metrics are served on --secure-port at --bind-address", field, v.Value))
		}
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if hint, ok := removedFields[k.Value]; ok && !strings.HasPrefix(hint, "removed in v1beta3") {
			m.p.addNode(k, k.Value, "not a field of %s either (kube-scheduler %s refused the file): %s", m.s.apiVersion, m.s.release, hint)
		}
	}
	if le := mappingValue(root, "leaderElection"); le != nil {
		if lock := mappingValue(le, "resourceLock"); lock != nil && lock.Kind == yaml.ScalarNode &&
			(lock.Value == "endpointsleases" || lock.Value == "configmapsleases") {
			// The multi-locks were the way from the old lock to Leases;
			// client-go has kept only the Lease half.
			m.note(lock, "leaderElection.resourceLock", "changed %q to %q: the lease half of that lock, the only lock client-go still has", lock.Value, DefaultResourceLock)
			lock.LineComment = joinComment(lock.LineComment, "# was "+lock.Value)
			lock.Value, lock.Tag, lock.Style = DefaultResourceLock, "!!str", 0
		}
	}
	profiles := mappingValue(root, "profiles")
	if profiles == nil {
		// The default profile has the old defaults too; it is written
		// when it needs to carry them, and left out when not.
		prof := mapNode()
		m.profile(prof, indexPath("profiles", 0))
		if len(prof.Content) > 0 {
			setPair(root, "profiles", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{prof}})
		}
		return
	}
	if profiles.Kind != yaml.SequenceNode {
		return // decoding says what is wrong with it
	}
	for i, prof := range profiles.Content {
		if prof.Kind == yaml.MappingNode {
			m.profile(prof, indexPath("profiles", i))
		}
	}
}

// translate returns the v1 plugin that scores as an old default did.
func (m *migrator) translate(name string) string {
	if _, ok := resourceStrategies[name]; ok {
		return fitName
	}
	return name
}

// v1ScoreWeight returns a plugin's weight in v1's default multiPoint set.
func v1ScoreWeight(name string) (int64, bool) {
	for _, wp := range registry.DefaultPlugins() {
		if wp.Name == name {
			return cmpOrInt(wp.Weight, 1), wp.Weight != 0
		}
	}
	return 0, false
}

func cmpOrInt(a, b int64) int64 {
	if a != 0 {
		return a
	}
	return b
}

// scored is one plugin of a profile's effective old score set.
type scored struct {
	name   string
	weight int64
	// entry is the plugin's entry under score.enabled; nil for a default.
	entry *yaml.Node
}

// profile migrates one profile.
func (m *migrator) profile(prof *yaml.Node, path string) {
	plugins := mappingValue(prof, "plugins")
	pcs := mappingValue(prof, "pluginConfig")
	if (plugins != nil && plugins.Kind != yaml.MappingNode && !isNull(plugins)) ||
		(pcs != nil && pcs.Kind != yaml.SequenceNode && !isNull(pcs)) {
		return // not a profile to edit: validation says what is wrong
	}
	pp := childPath(path, "plugins")
	if plugins != nil && plugins.Kind == yaml.MappingNode {
		for _, point := range m.s.ignoredPoints {
			if k, _ := deletePair(plugins, point); k != nil {
				m.note(k, childPath(pp, point), "deleted: kube-scheduler %s ignored plugins.%s in a %s file (its defaulting never merged it), and v1 would read it", m.s.release, point, m.s.apiVersion)
			}
		}
	} else {
		plugins = nil
	}
	if pcs != nil && pcs.Kind != yaml.SequenceNode {
		pcs = nil
	}
	score := m.oldScore(plugins)
	enabled := enabledEntries(plugins)

	// Plugins the version itself refused: the file never ran.
	for _, name := range m.s.gone {
		if e := enabled[name]; e != nil {
			p := mappingValue(e, "name")
			m.p.addNode(p, "", "plugin %q: kube-scheduler %s refused it in a %s file (it was removed with v1beta2), so the file has no meaning to keep; %s", name, m.s.release, m.s.apiVersion, removedPlugins[name])
		}
	}
	if e := enabled[serviceAffinity]; e != nil && !slices.Contains(m.s.gone, serviceAffinity) {
		m.p.addNode(mappingValue(e, "name"), "", "plugin %q has no v1 equivalent, so its meaning cannot be kept: %s", serviceAffinity, legacyRefusals[serviceAffinity])
	}
	if enabled[nodeLabel] != nil && !slices.Contains(m.s.gone, nodeLabel) {
		m.nodeLabel(prof, plugins, pcs, path)
	}
	if m.s.resourcePlugins {
		m.resourceScoring(prof, plugins, pcs, score, path)
	}
	for _, sc := range score {
		if sc.name == nodePreferAvoidPods {
			at := prof
			if sc.entry != nil {
				at = sc.entry
			}
			m.note(at, path, "deleted NodePreferAvoidPods (scoring at weight %d here): v1 has no such plugin — kube-scheduler dropped it in v1.24 — so nodes' scheduler.alpha.kubernetes.io/preferAvoidPods annotations no longer count; taint such nodes with effect PreferNoSchedule instead", sc.weight)
		}
	}
	if e := enabled[selectorSpread]; e != nil {
		m.note(mappingValue(e, "name"), path, "deleted SelectorSpread: v1 has no such plugin; PodTopologySpread's system default constraints (defaultingType: System, the default) spread a Service's or controller's pods across nodes and zones in its place, with different scores")
	}

	// Entries of plugins v1 does not have, that did nothing or were dealt
	// with above, are deleted everywhere.
	drop := func(name string) bool {
		return slices.Contains(inTreeVolumeLimits, name) || slices.Contains(removedByV1beta2, name) || name == selectorSpread
	}
	for i := 0; plugins != nil && i+1 < len(plugins.Content); i += 2 {
		point, set := plugins.Content[i].Value, plugins.Content[i+1]
		for _, list := range []string{"enabled", "disabled"} {
			for _, e := range deleteEntries(set, list, drop) {
				name := entryName(e)
				if list == "enabled" && slices.Contains(inTreeVolumeLimits, name) {
					m.note(mappingValue(e, "name"), childPath(childPath(pp, point), list), "deleted %s: with CSI migration it checks no volume (NodeVolumeLimits counts them), and v1 has no such plugin", name)
				}
			}
		}
	}
	deleteEmptySets(plugins)
	if pcs != nil {
		for _, e := range deleteEntries(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "l"}, pcs}}, "l", drop) {
			if enabled[entryName(e)] == nil { // an enabled one has its own note
				m.note(mappingValue(e, "name"), childPath(path, "pluginConfig"), "deleted the args of %s: no plugin of that name runs in v1, nor did it run in this profile", entryName(e))
			}
		}
		for _, pc := range pcs.Content {
			args := mappingValue(pc, "args")
			if v := mappingValue(args, "apiVersion"); v != nil && (legacyVersions[v.Value] || v.Value == groupName+"/v1alpha1") {
				v.Value, v.Tag, v.Style = apiV1, "!!str", 0
			}
		}
		if len(pcs.Content) == 0 {
			deletePair(prof, "pluginConfig")
		}
	}
	m.weights(prof, score)
}

// legacyRefusals say, for plugins without a v1 equivalent, what to do.
var legacyRefusals = map[string]string{
	serviceAffinity: "use pod affinity in the pods of the Service instead, delete it, then migrate",
}

// nodeLabel turns v1beta1's NodeLabel filter into NodeAffinity's
// addedAffinity: a node passes NodeLabel when it has every presentLabels
// label and none of absentLabels, which is one required node selector
// term of Exists and DoesNotExist expressions, ANDed with the pod's own
// affinity as NodeLabel was. Its score has no equivalent: it averaged the
// preferences met into an absolute score, where NodeAffinity's preferred
// terms are normalized against the best node; a NodeLabel that scores is
// refused.
func (m *migrator) nodeLabel(prof, plugins, pcs *yaml.Node, path string) {
	args := mappingValue(pluginConfigEntry(pcs, nodeLabel), "args")
	labels := func(key string) []*yaml.Node { return seqContent(mappingValue(args, key)) }
	atPoint := func(point string) *yaml.Node {
		for _, e := range seqContent(mappingValue(mappingValue(plugins, point), "enabled")) {
			if entryName(e) == nodeLabel {
				return mappingValue(e, "name")
			}
		}
		return nil
	}
	if n := atPoint(framework.PointScore); n != nil && len(labels("presentLabelsPreference"))+len(labels("absentLabelsPreference")) > 0 {
		m.p.addNode(n, "", "plugin %q's score has no v1 equivalent (it scored the share of presentLabelsPreference/absentLabelsPreference a node met, where NodeAffinity's preferred terms are normalized against the best node): delete it from score, then migrate", nodeLabel)
		return
	}
	n := atPoint(framework.PointFilter)
	present, absent := labels("presentLabels"), labels("absentLabels")
	if n == nil || len(present)+len(absent) == 0 {
		return // it filtered nothing out
	}
	filter := mappingValue(plugins, framework.PointFilter)
	for _, e := range seqContent(mappingValue(filter, "disabled")) {
		if name := entryName(e); name == "NodeAffinity" || (name == wildcard && !slices.ContainsFunc(seqContent(mappingValue(filter, "enabled")), func(e *yaml.Node) bool { return entryName(e) == "NodeAffinity" })) {
			m.p.addNode(n, "", "plugin %q's filter becomes NodeAffinity's args addedAffinity in v1, and this profile disables NodeAffinity at filter: enable it, then migrate", nodeLabel)
			return
		}
	}
	var exprs []*yaml.Node
	for _, l := range present {
		exprs = append(exprs, requirement(l, "Exists"))
	}
	for _, l := range absent {
		exprs = append(exprs, requirement(l, "DoesNotExist"))
	}
	pc := pluginConfigEntry(pcs, "NodeAffinity")
	if pc == nil {
		pcs = ensureSeq(prof, "pluginConfig")
		pc = mapNode()
		setPair(pc, "name", strNode("NodeAffinity"))
		pcs.Content = append(pcs.Content, pc)
	}
	naArgs := ensureMapping(pc, "args")
	required := ensureMapping(ensureMapping(naArgs, "addedAffinity"), "requiredDuringSchedulingIgnoredDuringExecution")
	terms := ensureSeq(required, "nodeSelectorTerms")
	if len(terms.Content) == 0 {
		terms.Content = append(terms.Content, mapNode())
	}
	// A node must match one term: NodeLabel's condition joins each.
	for _, t := range terms.Content {
		if t.Kind != yaml.MappingNode {
			continue
		}
		me := ensureSeq(t, "matchExpressions")
		for _, x := range exprs {
			me.Content = append(me.Content, cloneNode(x))
		}
	}
	keyNode(pc, "args").HeadComment = joinComment(keyNode(pc, "args").HeadComment, "# NodeLabel's presentLabels/absentLabels filter, as required node affinity (yardmaster config migrate)")
	m.note(n, path, "NodeLabel's filter became NodeAffinity's args addedAffinity (Exists/DoesNotExist expressions): the same nodes pass")
}

// requirement returns {key: label, operator: op}, a NodeSelectorRequirement.
func requirement(label *yaml.Node, op string) *yaml.Node {
	r := mapNode()
	setPair(r, "key", strNode(label.Value))
	setPair(r, "operator", strNode(op))
	return r
}

// cloneNode copies a tree of new nodes (no aliases).
func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = nil
	for _, k := range n.Content {
		c.Content = append(c.Content, cloneNode(k))
	}
	return &c
}

// oldScore returns the profile's score plugins as the version merged them
// with its defaults.
func (m *migrator) oldScore(plugins *yaml.Node) []scored {
	set := mappingValue(plugins, framework.PointScore)
	disabled := map[string]bool{}
	for _, e := range seqContent(mappingValue(set, "disabled")) {
		disabled[entryName(e)] = true
	}
	custom := seqContent(mappingValue(set, "enabled"))
	customOf := func(e *yaml.Node) scored {
		w := int64(1)
		if wn := mappingValue(e, "weight"); wn != nil {
			if v, err := strconv.ParseInt(wn.Value, 10, 64); err == nil && v != 0 {
				w = v
			}
		}
		return scored{name: entryName(e), weight: w, entry: e}
	}
	var out []scored
	replaced := map[*yaml.Node]bool{}
	if !disabled[wildcard] {
		for _, d := range m.s.scoreDefaults {
			if disabled[d.Name] {
				continue
			}
			sc := scored{name: d.Name, weight: d.Weight}
			if i := slices.IndexFunc(custom, func(e *yaml.Node) bool { return entryName(e) == d.Name }); i >= 0 {
				if m.s.appendMerge {
					// v1beta1 appended it: the plugin was enabled twice,
					// which kube-scheduler refused when it built the
					// profile. What the file meant is plain.
					m.note(mappingValue(custom[i], "name"), "", "kube-scheduler %s refused this file: %s is a default score plugin, enabled again here without being disabled (\"already registered\"); taken as setting its weight, as v1 reads it", m.s.release, d.Name)
				}
				sc = customOf(custom[i])
				replaced[custom[i]] = true
			}
			out = append(out, sc)
		}
	}
	for _, e := range custom {
		if !replaced[e] {
			out = append(out, customOf(e))
		}
	}
	return out
}

// resourceScoring turns v1beta1's resource-scoring plugins into
// NodeResourcesFit's scoringStrategy.
func (m *migrator) resourceScoring(prof, plugins, pcs *yaml.Node, score []scored, path string) {
	var rs []scored
	for _, sc := range score {
		if _, ok := resourceStrategies[sc.name]; ok || sc.name == fitName {
			rs = append(rs, sc)
		}
	}
	if len(rs) > 1 {
		var names []string
		for _, r := range rs {
			names = append(names, r.name)
		}
		at := prof
		for _, r := range rs {
			if r.entry != nil {
				at = mappingValue(r.entry, "name")
				break
			}
		}
		m.p.addNode(at, "", "this profile scores resources with %s at once: v1 scores them with one strategy per profile (NodeResourcesFit's scoringStrategy), so this has no v1 equivalent; keep one (the defaults include %s: disable it under score)", strings.Join(names, " and "), leastAllocated)
		return
	}
	fitPC := pluginConfigEntry(pcs, fitName)
	fitArgs := mappingValue(fitPC, "args")
	if len(rs) == 0 {
		// Nothing scored resources; in v1 NodeResourcesFit does unless
		// disabled.
		score := ensureMapping(ensureMapping(prof, "plugins"), framework.PointScore)
		for _, e := range seqContent(mappingValue(score, "disabled")) {
			if n := entryName(e); n == wildcard || n == fitName {
				return
			}
		}
		dis := ensureSeq(score, "disabled")
		e := pluginEntry(fitName, 0)
		e.Content[1].LineComment = "# nothing scored resources in the " + m.s.apiVersion + " file (yardmaster config migrate)"
		dis.Content = append(dis.Content, e)
		return
	}
	r := rs[0]
	// NodeResourcesFit did not score here, so disabling it at score did
	// nothing; in v1 it would turn the strategy off.
	if set := mappingValue(plugins, framework.PointScore); r.name != fitName && set != nil {
		deleteEntries(set, "disabled", func(n string) bool { return n == fitName })
	}
	if r.name == fitName {
		return
	}
	rPC := pluginConfigEntry(pcs, r.name)
	rArgs := mappingValue(rPC, "args")
	if r.name != leastAllocated || rArgs != nil || mappingValue(fitArgs, "scoringStrategy") != nil {
		ss := mapNode()
		setPair(ss, "type", strNode(string(resourceStrategies[r.name])))
		if res := mappingValue(rArgs, "resources"); res != nil {
			setPair(ss, "resources", res)
		}
		if shape := mappingValue(rArgs, "shape"); shape != nil && r.name == requestedToCapacity {
			rtcr := mapNode()
			setPair(rtcr, "shape", shape)
			setPair(ss, "requestedToCapacityRatio", rtcr)
		}
		switch {
		case fitPC != nil:
			if fitArgs == nil || fitArgs.Kind != yaml.MappingNode {
				fitArgs = mapNode()
				setPair(fitPC, "args", fitArgs)
			}
			if old := mappingValue(fitArgs, "scoringStrategy"); old != nil {
				m.note(old, childPath(path, "pluginConfig"), "replaced NodeResourcesFit's scoringStrategy, which did nothing in this file (NodeResourcesFit did not score), by %s's", r.name)
			}
			setPair(fitArgs, "scoringStrategy", ss)
			if rPC != nil {
				deleteEntries(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{strNode("l"), pcs}}, "l", func(n string) bool { return n == r.name })
			}
		case rPC != nil:
			name := mappingValue(rPC, "name")
			name.LineComment = joinComment(name.LineComment, "# was "+r.name)
			name.Value = fitName
			args := rArgs
			if args == nil || args.Kind != yaml.MappingNode {
				args = mapNode()
				setPair(rPC, "args", args)
			}
			var kept []*yaml.Node
			for i := 0; i+1 < len(args.Content); i += 2 {
				switch k := args.Content[i].Value; k {
				case "apiVersion":
					kept = append(kept, args.Content[i], args.Content[i+1])
				case "kind":
					args.Content[i+1].Value = fitName + "Args"
					kept = append(kept, args.Content[i], args.Content[i+1])
				}
			}
			args.Content = append(kept, strNode("scoringStrategy"), ss)
		default:
			pcs = ensureSeq(prof, "pluginConfig")
			e := mapNode()
			setPair(e, "name", strNode(fitName))
			args := mapNode()
			setPair(args, "scoringStrategy", ss)
			setPair(e, "args", args)
			pcs.Content = append(pcs.Content, e)
		}
	}
	if r.entry != nil {
		name := mappingValue(r.entry, "name")
		name.LineComment = joinComment(name.LineComment, "# was "+r.name)
		name.Value = fitName
	}
}

// weights writes the version's default score weights that differ from
// v1's under plugins.multiPoint.enabled, where v1's defaults take them.
func (m *migrator) weights(prof *yaml.Node, score []scored) {
	var diff []framework.WeightedPlugin
	var v1 []string
	for _, sc := range score {
		name := m.translate(sc.name)
		w, ok := v1ScoreWeight(name)
		if sc.entry != nil || !ok || w == sc.weight {
			continue
		}
		diff = append(diff, framework.WeightedPlugin{Name: name, Weight: sc.weight})
		v1 = append(v1, fmt.Sprintf("%s %d", name, w))
	}
	m.newScorers(prof, score)
	if len(diff) == 0 {
		return
	}
	mp := ensureMapping(ensureMapping(prof, "plugins"), framework.PointMultiPoint)
	en := ensureSeq(mp, "enabled")
	for _, d := range diff {
		en.Content = append(en.Content, pluginEntry(d.Name, d.Weight))
	}
	if k := keyNode(mappingValue(prof, "plugins"), framework.PointMultiPoint); k != nil {
		k.HeadComment = joinComment(k.HeadComment, fmt.Sprintf("# %s's default score weights, where v1's differ (%s): written by yardmaster config migrate to keep the old ranking", m.s.apiVersion, strings.Join(v1, ", ")))
	}
}

// newFeatureScorers are plugins v1 scores with by default that score only
// pods using a feature the old versions did not have (DynamicResources:
// pods with resource claims, alpha and off by default then). They stay on.
var newFeatureScorers = []string{"DynamicResources"}

// newScorers disables at score the plugins v1 scores with by default that
// the version ran without scoring: VolumeBinding, whose capacity scoring
// (gate VolumeCapacityPriority) was alpha and off in every release that read
// an older version, and now ranks nodes for pods with unbound
// WaitForFirstConsumer claims.
func (m *migrator) newScorers(prof *yaml.Node, score []scored) {
	set := mappingValue(mappingValue(prof, "plugins"), framework.PointScore)
	for _, e := range seqContent(mappingValue(set, "disabled")) {
		if entryName(e) == wildcard {
			return
		}
	}
	for _, wp := range registry.DefaultPlugins() {
		r, ok := m.reg[wp.Name]
		if !ok || !r.Implements(framework.PointScore) || slices.Contains(newFeatureScorers, wp.Name) ||
			slices.ContainsFunc(score, func(sc scored) bool { return m.translate(sc.name) == wp.Name }) {
			continue
		}
		if slices.ContainsFunc(seqContent(mappingValue(set, "disabled")), func(e *yaml.Node) bool { return entryName(e) == wp.Name }) {
			continue
		}
		set = ensureMapping(ensureMapping(prof, "plugins"), framework.PointScore)
		dis := ensureSeq(set, "disabled")
		e := pluginEntry(wp.Name, 0)
		e.Content[1].LineComment = "# did not score in " + m.s.apiVersion + " (yardmaster config migrate)"
		dis.Content = append(dis.Content, e)
	}
}

// enabledEntries returns the first enabled entry of each plugin name, at
// any point.
func enabledEntries(plugins *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	for i := 0; plugins != nil && i+1 < len(plugins.Content); i += 2 {
		for _, e := range seqContent(mappingValue(plugins.Content[i+1], "enabled")) {
			if n := entryName(e); out[n] == nil {
				out[n] = e
			}
		}
	}
	return out
}

// pluginConfigEntry returns the pluginConfig entry of name, or nil.
func pluginConfigEntry(pcs *yaml.Node, name string) *yaml.Node {
	for _, e := range seqContent(pcs) {
		if entryName(e) == name {
			return e
		}
	}
	return nil
}

// deleteEntries deletes from the list under key of mapping set the
// entries whose name drop reports, and returns them.
func deleteEntries(set *yaml.Node, key string, drop func(string) bool) []*yaml.Node {
	list := mappingValue(set, key)
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil
	}
	var kept, gone []*yaml.Node
	for _, e := range list.Content {
		if drop(entryName(e)) {
			gone = append(gone, e)
		} else {
			kept = append(kept, e)
		}
	}
	list.Content = kept
	return gone
}

// deleteEmptySets deletes enabled and disabled lists that migration
// emptied, then point sets left empty.
func deleteEmptySets(plugins *yaml.Node) {
	if plugins == nil {
		return
	}
	var kept []*yaml.Node
	for i := 0; i+1 < len(plugins.Content); i += 2 {
		set := plugins.Content[i+1]
		if set.Kind == yaml.MappingNode {
			var inner []*yaml.Node
			for j := 0; j+1 < len(set.Content); j += 2 {
				if v := set.Content[j+1]; v.Kind == yaml.SequenceNode && len(v.Content) == 0 && v.Style&yaml.FlowStyle == 0 {
					continue
				}
				inner = append(inner, set.Content[j], set.Content[j+1])
			}
			emptied := len(inner) == 0 && len(set.Content) > 0
			set.Content = inner
			if emptied {
				continue
			}
		}
		kept = append(kept, plugins.Content[i], plugins.Content[i+1])
	}
	plugins.Content = kept
}

// entryName returns the name of a {name: ...} entry.
func entryName(e *yaml.Node) string {
	if n := mappingValue(e, "name"); n != nil {
		return n.Value
	}
	return ""
}

func seqContent(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// keyNode returns the key node of key in mapping n, or nil.
func keyNode(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

// deletePair deletes key from mapping n and returns its key and value
// nodes (nil when absent). The key's head comment moves to the next key.
func deletePair(n *yaml.Node, key string) (k, v *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			k, v = n.Content[i], n.Content[i+1]
			n.Content = append(n.Content[:i:i], n.Content[i+2:]...)
			if k.HeadComment != "" {
				if i < len(n.Content) {
					n.Content[i].HeadComment = joinComment(k.HeadComment, n.Content[i].HeadComment)
				} else {
					n.FootComment = joinComment(n.FootComment, k.HeadComment)
				}
			}
			return k, v
		}
	}
	return nil, nil
}

// commentNext puts comment above the key that now follows where deleted
// was, or at the end of mapping n.
func commentNext(n, deleted *yaml.Node, comment string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Line > deleted.Line {
			k.HeadComment = joinComment(k.HeadComment, comment)
			return
		}
	}
	n.FootComment = joinComment(n.FootComment, comment)
}

// setPair sets key in mapping n to v, appending it when absent.
func setPair(n *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content[i+1] = v
			return
		}
	}
	n.Content = append(n.Content, strNode(key), v)
}

// ensureMapping returns the mapping under key of n, making it when absent
// or null.
func ensureMapping(n *yaml.Node, key string) *yaml.Node {
	v := mappingValue(n, key)
	switch {
	case v != nil && v.Kind == yaml.MappingNode:
		return v
	case v != nil && !isNull(v):
		// Not a mapping: left for validation to report; edits go nowhere.
		return mapNode()
	}
	v = mapNode()
	setPair(n, key, v)
	return v
}

// ensureSeq returns the list under key of n, making it when absent.
func ensureSeq(n *yaml.Node, key string) *yaml.Node {
	v := mappingValue(n, key)
	switch {
	case v != nil && v.Kind == yaml.SequenceNode:
		v.Style &^= yaml.FlowStyle
		return v
	case v != nil && !isNull(v):
		return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"} // as ensureMapping
	}
	v = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	setPair(n, key, v)
	return v
}

func mapNode() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// pluginEntry returns {name: name, weight: weight}, without the weight
// when it is 0.
func pluginEntry(name string, weight int64) *yaml.Node {
	e := mapNode()
	setPair(e, "name", strNode(name))
	if weight != 0 {
		setPair(e, "weight", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(weight, 10)})
	}
	return e
}

// joinComment joins two comments, one per line.
func joinComment(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
