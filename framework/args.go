package framework

// Argument types shared by more than one plugin, as written under
// pluginConfig[].args in a KubeSchedulerConfiguration file: the scoring
// strategy of NodeResourcesFit (predicates/noderesources), whose
// utilization shape VolumeBinding's args use too. A plugin's own args
// type lives in its folder.

// ScoringStrategyType names how NodeResourcesFit scores a node.
type ScoringStrategyType string

// The scoring strategies of NodeResourcesFit.
const (
	LeastAllocated           ScoringStrategyType = "LeastAllocated"
	MostAllocated            ScoringStrategyType = "MostAllocated"
	RequestedToCapacityRatio ScoringStrategyType = "RequestedToCapacityRatio"
)

// ResourceSpec names a resource and its weight in a score.
type ResourceSpec struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight,omitempty"`
}

// UtilizationShapePoint is one point of the RequestedToCapacityRatio curve:
// utilization in percent (0..100) maps to score (0..10).
type UtilizationShapePoint struct {
	Utilization int32 `json:"utilization"`
	Score       int32 `json:"score"`
}

// RequestedToCapacityRatioParam holds the curve of the
// RequestedToCapacityRatio strategy.
type RequestedToCapacityRatioParam struct {
	Shape []UtilizationShapePoint `json:"shape,omitempty"`
}

// ScoringStrategy configures NodeResourcesFit scoring.
type ScoringStrategy struct {
	Type                     ScoringStrategyType            `json:"type,omitempty"`
	Resources                []ResourceSpec                 `json:"resources,omitempty"`
	RequestedToCapacityRatio *RequestedToCapacityRatioParam `json:"requestedToCapacityRatio,omitempty"`
}

// DefaultResourceSpecs are the resources scored when none are configured.
func DefaultResourceSpecs() []ResourceSpec {
	return []ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}
}
