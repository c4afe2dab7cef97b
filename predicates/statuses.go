package predicates

import "github.com/yardmaster-io/yardmaster/framework"

// The statuses filters reject a node with, for reasons that do not depend
// on the node. They are made once and shared by every call: the scheduler
// never changes a status a filter returns, and a rejection then costs the
// per-node loop no allocation (a spread or anti-affinity pod is rejected by
// most nodes in a big cluster).
var (
	statusPodAffinityRulesNotMatch          = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonPodAffinityRulesNotMatch)
	statusPodAntiAffinityRulesNotMatch      = framework.NewStatus(framework.Unschedulable, ReasonPodAntiAffinityRulesNotMatch)
	statusExistingAntiAffinityRulesNotMatch = framework.NewStatus(framework.Unschedulable, ReasonExistingAntiAffinityRulesNotMatch)
	statusNodeAffinity                      = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodeAffinity)
	statusNodeAffinityEnforced              = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodeAffinityEnforced)
	statusNodeName                          = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodeName)
	statusNodeDeclaredFeatures              = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodeDeclaredFeatures)
	statusNodePorts                         = framework.NewStatus(framework.Unschedulable, ReasonNodePorts)
	statusNodeUnschedulable                 = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodeUnschedulable)
	statusSpreadMissingLabel                = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonSpreadMissingLabel)
	statusSpreadConstraintsNotMatch         = framework.NewStatus(framework.Unschedulable, ReasonSpreadConstraintsNotMatch)
)
