package framework

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxShapeScore is the highest score a point of a utilization shape may
// give (kube-scheduler's MaxCustomPriorityScore); scores are scaled from
// [0, MaxShapeScore] to [0, MaxNodeScore].
const MaxShapeScore = 10

// MaxShapeUtilization is the highest utilization, in percent, a shape has.
const MaxShapeUtilization = 100

// Shape is a piecewise-linear function of utilization (percent) to a score
// in [0, MaxNodeScore], built from UtilizationShapePoints: the scorers'
// broken-linear function (kube-scheduler's helper.BuildBrokenLinearFunction).
type Shape []shapePoint

type shapePoint struct{ utilization, score int64 }

// NewShape returns the shape through points, whose scores it scales to
// [0, MaxNodeScore]. points must be valid (ValidateShape).
func NewShape(points []UtilizationShapePoint) Shape {
	s := make(Shape, len(points))
	for i, p := range points {
		s[i] = shapePoint{utilization: int64(p.Utilization), score: int64(p.Score) * (MaxNodeScore / MaxShapeScore)}
	}
	return s
}

// At evaluates the shape at utilization p: flat before the first point and
// after the last, linear (truncating) in between.
func (s Shape) At(p int64) int64 {
	for i, pt := range s {
		if p > pt.utilization {
			continue
		}
		if i == 0 {
			return pt.score
		}
		prev := s[i-1]
		return prev.score + (pt.score-prev.score)*(p-prev.utilization)/(pt.utilization-prev.utilization)
	}
	return s[len(s)-1].score
}

// ValidateShape checks a shape as kube-scheduler does: at least one point,
// utilization strictly increasing within [0, 100], score within [0, 10].
func ValidateShape(shape []UtilizationShapePoint, p *field.Path) field.ErrorList {
	if len(shape) == 0 {
		return field.ErrorList{field.Required(p, "at least one point must be specified")}
	}
	var errs field.ErrorList
	for i := 1; i < len(shape); i++ {
		if shape[i-1].Utilization >= shape[i].Utilization {
			errs = append(errs, field.Invalid(p.Index(i).Child("utilization"), shape[i].Utilization,
				"values must be sorted in strictly increasing order"))
			break
		}
	}
	for i, pt := range shape {
		if pt.Utilization < 0 || pt.Utilization > MaxShapeUtilization {
			errs = append(errs, field.Invalid(p.Index(i).Child("utilization"), pt.Utilization,
				fmt.Sprintf("not in range [0, %d]", MaxShapeUtilization)))
		}
		if pt.Score < 0 || pt.Score > MaxShapeScore {
			errs = append(errs, field.Invalid(p.Index(i).Child("score"), pt.Score,
				fmt.Sprintf("not in range [0, %d]", MaxShapeScore)))
		}
	}
	return errs
}
