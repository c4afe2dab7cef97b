package noderesources

import "github.com/yardmaster-io/yardmaster/framework"

// FitRegistration is NodeResourcesFit's, for a framework.Registry: the
// filter and the scorer, sharing the args. The filter leaves to
// DynamicResources the extended resources a DeviceClass serves when h has
// DRA, and its hints read nodes through h's informers and cache.
func FitRegistration() framework.Registration {
	return framework.NewRegistration(FitName,
		[]string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
		DefaultFitArgs, ValidateFitArgs,
		func(args *FitArgs, h framework.Handle) ([]framework.Plugin, error) {
			scorer, err := NewFitScorer(args)
			if err != nil {
				return nil, err
			}
			fit := NewFitFilter(args)
			if h != nil && h.SharedDRAManager() != nil {
				fit.UseDeviceClasses(h.SharedDRAManager())
			}
			if h != nil && h.SharedInformerFactory() != nil {
				fit.UseNodeLister(h.SharedInformerFactory().Core().V1().Nodes().Lister())
			}
			if h != nil {
				fit.UseNodeInfoReader(h.ReadNodeInfo, h.NominatedPodsForNode)
			}
			return []framework.Plugin{fit, scorer}, nil
		})
}

// BalancedAllocationRegistration is NodeResourcesBalancedAllocation's, for
// a framework.Registry.
func BalancedAllocationRegistration() framework.Registration {
	return framework.NewRegistration(BalancedAllocationName,
		[]string{framework.PointPreScore, framework.PointScore},
		DefaultBalancedAllocationArgs, ValidateBalancedAllocationArgs,
		func(args *BalancedAllocationArgs, _ framework.Handle) ([]framework.Plugin, error) {
			p, err := NewBalancedAllocation(args)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{p}, nil
		})
}
