package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// Marshal returns c as a kubescheduler.config.k8s.io/v1 file that Decode
// reads back to c: every setting explicit, each profile's plugins listed
// per extension point in order with their weights (multiPoint's defaults
// disabled, so that the lists are exactly what runs) and every plugin's
// arguments under pluginConfig.
func (c *Config) Marshal() ([]byte, error) {
	f, err := c.file()
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encode configuration: %w", err)
	}
	// JSON keeps the field order of the types (kind first, profiles after
	// the settings); the YAML node tree keeps it too, where a map would not.
	var doc yaml.Node
	if err := yaml.Unmarshal(js, &doc); err != nil {
		return nil, fmt.Errorf("encode configuration: %w", err)
	}
	blockStyle(&doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encode configuration: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode configuration: %w", err)
	}
	return buf.Bytes(), nil
}

// MarshalJSON returns what Marshal returns, as one indented JSON
// document: the same kubescheduler.config.k8s.io/v1 file, which Decode
// reads too.
func (c *Config) MarshalJSON() ([]byte, error) {
	f, err := c.file()
	if err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode configuration: %w", err)
	}
	return append(js, '\n'), nil
}

// blockStyle turns the flow style of parsed JSON into block style, pinning
// each scalar's type so that a string such as "*" or "true" stays quoted.
func blockStyle(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		n.Tag = n.ShortTag()
	}
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// file returns c in the file types.
func (c *Config) file() (*fileConfig, error) {
	if c.Parallelism > math.MaxInt32 || c.ClientConnection.Burst > math.MaxInt32 || c.ClientConnection.Burst < math.MinInt32 {
		return nil, fmt.Errorf("parallelism %d or burst %d does not fit the file format (int32)", c.Parallelism, c.ClientConnection.Burst)
	}
	initial, err := wholeSeconds("podInitialBackoffSeconds", c.PodInitialBackoff)
	if err != nil {
		return nil, err
	}
	maxBackoff, err := wholeSeconds("podMaxBackoffSeconds", c.PodMaxBackoff)
	if err != nil {
		return nil, err
	}
	le := c.LeaderElection
	f := &fileConfig{
		APIVersion:  apiV1,
		Kind:        kindConfig,
		Parallelism: new(int32(c.Parallelism)),
		LeaderElection: &fileLeaderElection{
			LeaderElect:       new(le.LeaderElect),
			LeaseDuration:     &metav1.Duration{Duration: le.LeaseDuration},
			RenewDeadline:     &metav1.Duration{Duration: le.RenewDeadline},
			RetryPeriod:       &metav1.Duration{Duration: le.RetryPeriod},
			ResourceLock:      le.ResourceLock,
			ResourceName:      le.ResourceName,
			ResourceNamespace: le.ResourceNamespace,
		},
		ClientConnection: &fileClientConnection{
			Kubeconfig:         c.ClientConnection.Kubeconfig,
			AcceptContentTypes: c.ClientConnection.AcceptContentTypes,
			ContentType:        c.ClientConnection.ContentType,
			QPS:                c.ClientConnection.QPS,
			Burst:              int32(c.ClientConnection.Burst),
		},
		EnableProfiling:           new(c.EnableProfiling),
		EnableContentionProfiling: new(c.EnableContentionProfiling),
		PercentageOfNodesToScore:  new(c.PercentageOfNodesToScore),
		PodInitialBackoffSeconds:  new(initial),
		PodMaxBackoffSeconds:      new(maxBackoff),
	}
	f.Extenders = extendersFile(c.Extenders)
	if c.DelayCacheUntilActive {
		// Left out when false, as kube-scheduler's (omitempty, no pointer).
		f.DelayCacheUntilActive = new(true)
	}
	for _, prof := range c.Profiles {
		f.Profiles = append(f.Profiles, profileFile(prof))
	}
	return f, nil
}

func wholeSeconds(field string, d time.Duration) (int64, error) {
	if d%time.Second != 0 {
		return 0, fmt.Errorf("%s: %v is not a whole number of seconds, which the file format needs", field, d)
	}
	return int64(d / time.Second), nil
}

// profileFile lists a profile's plugins explicitly per point.
func profileFile(prof framework.Profile) fileProfile {
	enabled := func(names ...string) pluginSet {
		var s pluginSet
		for _, n := range names {
			s.Enabled = append(s.Enabled, filePlugin{Name: n})
		}
		return s
	}
	plugins := &filePlugins{
		PreEnqueue: enabled(append([]string{registry.SchedulingGatesName}, prof.PreEnqueue...)...),
		QueueSort:  enabled(prof.QueueSort),
		PreFilter:  enabled(prof.PreFilter...),
		Filter:     enabled(prof.Filter...),
		PreScore:   enabled(prof.PreScore...),
		PostFilter: enabled(prof.PostFilter...),
		Reserve:    enabled(prof.Reserve...),
		Permit:     enabled(prof.Permit...),
		PreBind:    enabled(prof.PreBind...),
		Bind:       enabled(prof.Bind...),
		PostBind:   enabled(prof.PostBind...),
		MultiPoint: pluginSet{Disabled: []filePlugin{{Name: wildcard}}},
	}
	for _, w := range prof.Score {
		plugins.Score.Enabled = append(plugins.Score.Enabled, filePlugin{Name: w.Name, Weight: new(w.Weight)})
	}
	fp := fileProfile{
		SchedulerName:            new(prof.SchedulerName),
		PercentageOfNodesToScore: prof.PercentageOfNodesToScore,
		Plugins:                  plugins,
	}
	// Args of the profile's plugins in plugin order, then any others (a
	// plugin configured but not enabled) by name.
	names := prof.Plugins()
	var others []string
	for n := range prof.Args {
		if !slices.Contains(names, n) {
			others = append(others, n)
		}
	}
	sort.Strings(others)
	for _, n := range append(names, others...) {
		if a, ok := prof.Args[n]; ok && a != nil {
			fp.PluginConfig = append(fp.PluginConfig, filePluginConfig{Name: n, Args: a})
		}
	}
	return fp
}
