package config

import (
	"github.com/yardmaster-io/yardmaster/framework"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The versioned file types: kubescheduler.config.k8s.io/v1 as yardmaster
// reads and writes it. They mirror k8s.io/kube-scheduler/config/v1 field for
// field, json names and all, so that strict decoding refuses exactly what
// is not in that schema. Fields yardmaster does not implement are still
// declared, so that using one gets a message saying so rather than
// "unknown field"; build decides what each of them means.
//
// Pointers mark fields whose absence matters (kube-scheduler defaults a nil
// pointer but keeps an explicit zero, which validation may then refuse).

// Group and versions of the file format.
const (
	groupName  = "kubescheduler.config.k8s.io"
	apiV1      = groupName + "/v1"
	apiV1beta3 = groupName + "/v1beta3"
	kindConfig = "KubeSchedulerConfiguration"
)

// fileConfig is a KubeSchedulerConfiguration.
type fileConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`

	Parallelism      *int32                `json:"parallelism,omitempty"`
	LeaderElection   *fileLeaderElection   `json:"leaderElection,omitempty"`
	ClientConnection *fileClientConnection `json:"clientConnection,omitempty"`

	// DebuggingConfiguration, inlined in kube-scheduler's type.
	EnableProfiling           *bool `json:"enableProfiling,omitempty"`
	EnableContentionProfiling *bool `json:"enableContentionProfiling,omitempty"`

	PercentageOfNodesToScore *int32 `json:"percentageOfNodesToScore,omitempty"`
	PodInitialBackoffSeconds *int64 `json:"podInitialBackoffSeconds,omitempty"`
	PodMaxBackoffSeconds     *int64 `json:"podMaxBackoffSeconds,omitempty"`

	Profiles []fileProfile `json:"profiles,omitempty"`

	Extenders             []fileExtender `json:"extenders,omitempty"`
	DelayCacheUntilActive *bool          `json:"delayCacheUntilActive,omitempty"`
}

// fileLeaderElection is component-base's LeaderElectionConfiguration.
type fileLeaderElection struct {
	LeaderElect       *bool            `json:"leaderElect,omitempty"`
	LeaseDuration     *metav1.Duration `json:"leaseDuration,omitempty"`
	RenewDeadline     *metav1.Duration `json:"renewDeadline,omitempty"`
	RetryPeriod       *metav1.Duration `json:"retryPeriod,omitempty"`
	ResourceLock      string           `json:"resourceLock,omitempty"`
	ResourceName      string           `json:"resourceName,omitempty"`
	ResourceNamespace string           `json:"resourceNamespace,omitempty"`
}

// fileClientConnection is component-base's ClientConnectionConfiguration.
// As in kube-scheduler, a zero qps, burst or contentType takes the default.
type fileClientConnection struct {
	Kubeconfig         string  `json:"kubeconfig,omitempty"`
	AcceptContentTypes string  `json:"acceptContentTypes,omitempty"`
	ContentType        string  `json:"contentType,omitempty"`
	QPS                float32 `json:"qps,omitempty"`
	Burst              int32   `json:"burst,omitempty"`
}

// fileProfile is a KubeSchedulerProfile.
type fileProfile struct {
	SchedulerName            *string            `json:"schedulerName,omitempty"`
	PercentageOfNodesToScore *int32             `json:"percentageOfNodesToScore,omitempty"`
	Plugins                  *filePlugins       `json:"plugins,omitempty"`
	PluginConfig             []filePluginConfig `json:"pluginConfig,omitempty"`
}

// The pod-group extension points of kube-scheduler v1.37's v1 schema
// (podGroupPostFilter is new in v1.37). yardmaster has no plugin for them,
// so nothing can be enabled there.
const (
	placementGenerate  = "placementGenerate"
	placementScore     = "placementScore"
	podGroupPostFilter = "podGroupPostFilter"
)

// podGroupPoints are the pod-group extension points.
var podGroupPoints = map[string]bool{placementGenerate: true, placementScore: true, podGroupPostFilter: true}

// filePlugins holds a plugin set per extension point.
type filePlugins struct {
	PreEnqueue         pluginSet `json:"preEnqueue,omitzero"`
	QueueSort          pluginSet `json:"queueSort,omitzero"`
	PreFilter          pluginSet `json:"preFilter,omitzero"`
	Filter             pluginSet `json:"filter,omitzero"`
	PostFilter         pluginSet `json:"postFilter,omitzero"`
	PreScore           pluginSet `json:"preScore,omitzero"`
	Score              pluginSet `json:"score,omitzero"`
	Reserve            pluginSet `json:"reserve,omitzero"`
	Permit             pluginSet `json:"permit,omitzero"`
	PreBind            pluginSet `json:"preBind,omitzero"`
	Bind               pluginSet `json:"bind,omitzero"`
	PostBind           pluginSet `json:"postBind,omitzero"`
	MultiPoint         pluginSet `json:"multiPoint,omitzero"`
	PlacementGenerate  pluginSet `json:"placementGenerate,omitzero"`
	PlacementScore     pluginSet `json:"placementScore,omitzero"`
	PodGroupPostFilter pluginSet `json:"podGroupPostFilter,omitzero"`
}

// pointSet is one extension point's plugin set with the point's name.
type pointSet struct {
	point string
	set   *pluginSet
}

// sets returns every extension point's set, multiPoint last, in the order
// kube-scheduler's Plugins type declares them.
func (p *filePlugins) sets() []pointSet {
	return []pointSet{
		{framework.PointPreEnqueue, &p.PreEnqueue},
		{framework.PointQueueSort, &p.QueueSort},
		{framework.PointPreFilter, &p.PreFilter},
		{framework.PointFilter, &p.Filter},
		{framework.PointPostFilter, &p.PostFilter},
		{framework.PointPreScore, &p.PreScore},
		{framework.PointScore, &p.Score},
		{framework.PointReserve, &p.Reserve},
		{framework.PointPermit, &p.Permit},
		{framework.PointPreBind, &p.PreBind},
		{framework.PointBind, &p.Bind},
		{framework.PointPostBind, &p.PostBind},
		{placementGenerate, &p.PlacementGenerate},
		{placementScore, &p.PlacementScore},
		{podGroupPostFilter, &p.PodGroupPostFilter},
		{framework.PointMultiPoint, &p.MultiPoint},
	}
}

// pluginSet is a PluginSet: plugins enabled and disabled at one point.
type pluginSet struct {
	Enabled  []filePlugin `json:"enabled,omitempty"`
	Disabled []filePlugin `json:"disabled,omitempty"`
}

// filePlugin is a Plugin. Weight is int64 here (int32 in kube-scheduler's
// type) so that an oversized weight gets a message about weights rather
// than about integer types; validation applies kube-scheduler's bound.
type filePlugin struct {
	Name   string `json:"name"`
	Weight *int64 `json:"weight,omitempty"`
}

// filePluginConfig is a PluginConfig. When decoding, Args holds the raw
// *yaml.Node (decoded later into the plugin's own args type, which only
// the registry knows); when encoding, the typed args.
type filePluginConfig struct {
	Name string `json:"name"`
	Args any    `json:"args,omitempty"`
}
