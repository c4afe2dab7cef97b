package dynamicresources

import (
	"context"
	"testing"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/yardmaster-io/yardmaster/framework"
)

func TestQueueingHints(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "p-uid"}}
	pod.Spec.ResourceClaims = []v1.PodResourceClaim{
		{Name: "gpu", ResourceClaimName: ptr.To("shared-gpu")},
		{Name: "nic", ResourceClaimTemplateName: ptr.To("nic-template")},
	}
	pod.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "nic", ResourceClaimName: ptr.To("p-nic-abc")}}
	claim := func(ns, name string) *resourceapi.ResourceClaim {
		return &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	allocated := func(c *resourceapi.ResourceClaim) *resourceapi.ResourceClaim {
		c = c.DeepCopy()
		c.Status.Allocation = &resourceapi.AllocationResult{}
		c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "x", UID: "x"}}
		return c
	}
	unreserved := func(c *resourceapi.ResourceClaim) *resourceapi.ResourceClaim {
		c = c.DeepCopy()
		c.Status.ReservedFor = nil
		return c
	}
	owned := claim("ns", "p-gpus-extended")
	owned.OwnerReferences = []metav1.OwnerReference{{Kind: "Pod", Name: "p", UID: "p-uid", Controller: ptr.To(true)}}
	other := claim("ns", "other")
	withStatus := pod.DeepCopy()
	withStatus.Status.ResourceClaimStatuses = append(withStatus.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: "x"})
	claimAdd := framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Add}
	claimUpdate := framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Update}
	claimDelete := framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Delete}
	tests := []struct {
		name     string
		event    framework.ClusterEvent
		old, new any
		want     framework.QueueingHint
	}{
		{"its named claim created", claimAdd, nil, claim("ns", "shared-gpu"), framework.Queue},
		{"its generated claim created", claimAdd, nil, claim("ns", "p-nic-abc"), framework.Queue},
		{"its extended-resource claim", claimAdd, nil, owned, framework.Queue},
		{"another claim created", claimAdd, nil, other, framework.QueueSkip},
		{"same name in another namespace", claimAdd, nil, claim("other", "shared-gpu"), framework.QueueSkip},
		{"another claim allocated", claimUpdate, other, allocated(other), framework.QueueSkip},
		{"another claim deallocated", claimUpdate, allocated(other), other, framework.Queue},
		{"another claim's reservation removed", claimUpdate, allocated(other), unreserved(allocated(other)), framework.Queue},
		{"its claim allocated", claimUpdate, claim("ns", "shared-gpu"), allocated(claim("ns", "shared-gpu")), framework.Queue},
		{"its extended-resource claim deleted", claimDelete, owned, nil, framework.Queue},
		{"another claim deleted with its allocation", claimDelete, allocated(other), nil, framework.Queue},
		{"another claim deleted unallocated", claimDelete, other, nil, framework.QueueSkip},
		{"its generated claims recorded", framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.UpdatePodGeneratedResourceClaim}, pod, withStatus, framework.Queue},
		{"a slice published", framework.ClusterEvent{Resource: framework.ResourceSlice, ActionType: framework.Add}, nil, &resourceapi.ResourceSlice{}, framework.Queue},
		{"a slice deleted", framework.ClusterEvent{Resource: framework.ResourceSlice, ActionType: framework.Delete}, &resourceapi.ResourceSlice{}, nil, framework.Queue},
		{"a node relabelled", framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeLabel}, &v1.Node{}, &v1.Node{}, framework.Queue},
		{"a node's taints: not registered", framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeTaint}, &v1.Node{}, &v1.Node{}, framework.QueueSkip},
		{"an assigned pod deleted: not registered", framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}, &v1.Pod{}, nil, framework.QueueSkip},
	}
	regs, err := (&DynamicResources{}).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := framework.QueueSkip
			for _, r := range regs {
				if !r.Event.Match(tc.event) {
					continue
				}
				h := framework.Queue
				if r.QueueingHintFn != nil {
					if h, err = r.QueueingHintFn(zap.NewNop(), pod, tc.old, tc.new); err != nil {
						t.Fatal(err)
					}
				}
				if h == framework.Queue {
					got = h
				}
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
}
