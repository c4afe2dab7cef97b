package config

import "go.yaml.in/yaml/v3"

// Older versions of the file format are refused, with the list of edits
// that turn the file into v1. Reading them silently is not done: their
// defaults differ from v1's (score weights, the plugin set, per-point
// rather than multiPoint defaults), so a file read as v1 would mean
// something else than it did. `config migrate` (Migrate, migrate.go)
// writes the v1 file instead, the old defaults made explicit in it.

// legacyVersions are the versions explainLegacy knows how to migrate:
// those kube-scheduler v1.37 no longer reads.
var legacyVersions = map[string]bool{
	apiV1beta3:              true,
	groupName + "/v1beta2":  true,
	groupName + "/v1beta1":  true,
	groupName + "/v1alpha2": true,
	groupName + "/v1alpha1": true,
}

// removedFields are top-level fields of older versions, with what to do.
var removedFields = map[string]string{
	"healthzBindAddress":             "removed in v1beta3: delete it",
	"metricsBindAddress":             "removed in v1beta3: delete it",
	"algorithmSource":                "removed in v1beta1 (scheduler policies are gone): delete it and express the policy as profiles[].plugins",
	"hardPodAffinitySymmetricWeight": "removed in v1beta1: delete it; it is InterPodAffinity's pluginConfig args hardPodAffinityWeight",
	"schedulerName":                  "moved in v1beta1: write it as profiles[].schedulerName",
	"plugins":                        "moved in v1beta1: write it as profiles[].plugins",
	"pluginConfig":                   "moved in v1beta1: write it as profiles[].pluginConfig",
}

// explainLegacy reports an older file as one problem per edit to make,
// each at its line.
func explainLegacy(root, apiVersion *yaml.Node, p *problems) {
	if apiVersion.Value == apiV1beta3 {
		// v1beta3's fields are v1's, with v1's default weights.
		p.addNode(apiVersion, "apiVersion", "%s is not read by kube-scheduler v1.37, nor by yardmaster: change it to %s (its fields mean the same there) and make the edits listed with it, if any; `yardmaster config migrate FILE` writes that file",
			apiVersion.Value, apiV1)
	} else {
		p.addNode(apiVersion, "apiVersion", "%s is not read by yardmaster (kube-scheduler dropped it too): change it to %s and make the edits listed with it; note that v1's default score weights are TaintToleration 3, NodeAffinity 2, PodTopologySpread 2, InterPodAffinity 2 (most were 1 before v1beta3): set weights under plugins.score.enabled to keep the old ranking; `yardmaster config migrate FILE` writes that file, old weights included",
			apiVersion.Value, apiV1)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if hint, ok := removedFields[k.Value]; ok {
			p.addNode(k, k.Value, "%s", hint)
		}
		if k.Value != "profiles" || v.Kind != yaml.SequenceNode {
			continue
		}
		for j, prof := range v.Content {
			path := indexPath("profiles", j)
			if plugins := mappingValue(prof, "plugins"); plugins != nil && plugins.Kind == yaml.MappingNode {
				for m := 0; m+1 < len(plugins.Content); m += 2 {
					point, set := plugins.Content[m].Value, plugins.Content[m+1]
					for _, list := range []string{"enabled", "disabled"} {
						legacyPluginNames(mappingValue(set, list), childPath(childPath(childPath(path, "plugins"), point), list), p)
					}
				}
			}
			legacyPluginNames(mappingValue(prof, "pluginConfig"), childPath(path, "pluginConfig"), p)
		}
	}
}

// legacyPluginNames reports removed plugins in a list of {name: ...}.
func legacyPluginNames(list *yaml.Node, path string, p *problems) {
	if list == nil || list.Kind != yaml.SequenceNode {
		return
	}
	for i, e := range list.Content {
		name := mappingValue(e, "name")
		if name == nil {
			continue
		}
		if hint, ok := removedPlugins[name.Value]; ok {
			p.addNode(name, childPath(indexPath(path, i), "name"), "plugin %q was %s", name.Value, hint)
		}
	}
}

// mappingValue returns the value of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
