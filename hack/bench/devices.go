package main

// The devices of the dra workload, modelled on kube-scheduler's
// scheduler_perf DRA workloads (SchedulingWithResourceClaimTemplate). One
// DeviceClass, benchDeviceClassName, selects the devices of the driver
// benchDriver by CEL; every node publishes devicesPerNode of them in one
// ResourceSlice of its own, in a pool named after the node; and the
// phase's namespace has one ResourceClaimTemplate, benchTemplateName,
// asking for one device of the class. Pod i names the template in its
// spec.resourceClaims (as podClaimName) and its container uses that
// claim, so kube-controller-manager's ResourceClaim controller makes one
// claim per pod, "<pod>-gpu-<random>", owned by the pod and recorded in
// its status.resourceClaimStatuses. A scheduler then allocates a free
// device of the pod's node to the claim and reserves the claim for the
// pod before it binds it. Every device fits every claim, so the layout
// depends only on the number of nodes and every contender gets the same.
//
// The claims are made by the controller once the pods exist, not by the
// harness, so that the pods look like every pod with a template does; the
// drain's clock starts only once all of them are there (waitForClaims),
// or it would time the controller. The scheduler writes the
// resource.kubernetes.io/delete-protection finalizer onto the claims it
// allocates; deleteDevices removes it, since without kube-controller-
// manager's garbage collector nothing deletes the claims of deleted pods.

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

const (
	// benchDriver is the driver of every device.
	benchDriver = "gpu.bench.yardmaster.io"
	// benchDeviceClassName is the DeviceClass of every claim.
	benchDeviceClassName = "bench-gpu"
	// benchTemplateName is the ResourceClaimTemplate of every pod.
	benchTemplateName = "bench-gpu"
	// podClaimName is the name of the claim in every pod's spec.
	podClaimName = "gpu"
	// devicesPerNode is the number of devices each node's slice publishes.
	devicesPerNode = 8
	// sliceLabel marks the ResourceSlices the harness made, so that
	// cleanup finds them, and nothing else, among the cluster's.
	sliceLabel = "bench.yardmaster.io/slice"
	// devicesTimeout bounds each wait on the ResourceClaim controller and
	// on deletions.
	devicesTimeout = 2 * time.Minute
)

func sliceName(node int) string { return nodeName(node) + "-gpus" }
func deviceName(j int) string   { return fmt.Sprintf("gpu-%d", j) }

// benchDeviceClass selects every device of benchDriver.
func benchDeviceClass() *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: benchDeviceClassName},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", benchDriver)},
		}}},
	}
}

// benchSlice is node i's ResourceSlice: devicesPerNode devices in the pool
// named after the node, the only slice of that pool.
func benchSlice(i int) *resourceapi.ResourceSlice {
	node := nodeName(i)
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: sliceName(i), Labels: map[string]string{sliceLabel: "true"}},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   benchDriver,
			NodeName: ptr.To(node),
			Pool:     resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
		},
	}
	for j := range devicesPerNode {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{
			Name: deviceName(j),
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"index": {IntValue: ptr.To(int64(j))},
			},
		})
	}
	return s
}

// benchTemplate asks for one device of benchDeviceClassName.
func benchTemplate(ns string) *resourceapi.ResourceClaimTemplate {
	return &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: benchTemplateName},
		Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
			Requests: []resourceapi.DeviceRequest{{
				Name: "gpu",
				Exactly: &resourceapi.ExactDeviceRequest{
					DeviceClassName: benchDeviceClassName,
					AllocationMode:  resourceapi.DeviceAllocationModeExactCount,
					Count:           1,
				},
			}},
		}}},
	}
}

// withDeviceClaim makes p claim one device through benchTemplateName.
func withDeviceClaim(p *v1.Pod) *v1.Pod {
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: podClaimName, ResourceClaimTemplateName: ptr.To(benchTemplateName)}}
	for i := range p.Spec.Containers {
		p.Spec.Containers[i].Resources.Claims = []v1.ResourceClaim{{Name: podClaimName}}
	}
	return p
}

// createDevices makes the class, the slices of nodes 0..nodes-1 and the
// template in ns.
func createDevices(ctx context.Context, c kubernetes.Interface, workers int, ns string, nodes int) error {
	if _, err := c.ResourceV1().DeviceClasses().Create(ctx, benchDeviceClass(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating DeviceClass %q: %w", benchDeviceClassName, err)
	}
	err := parallel(ctx, workers, nodes, func(ctx context.Context, i int) error {
		return createOnce(func() error {
			_, err := c.ResourceV1().ResourceSlices().Create(ctx, benchSlice(i), metav1.CreateOptions{})
			return err
		}, "ResourceSlice "+sliceName(i))
	})
	if err != nil {
		return err
	}
	return createOnce(func() error {
		_, err := c.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, benchTemplate(ns), metav1.CreateOptions{})
		return err
	}, "ResourceClaimTemplate "+ns+"/"+benchTemplateName)
}

// podClaim returns the name of the claim the ResourceClaim controller
// recorded in p's status for its device, or "".
func podClaim(p *v1.Pod) string {
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.Name == podClaimName && s.ResourceClaimName != nil {
			return *s.ResourceClaimName
		}
	}
	return ""
}

// waitForClaims waits until the ResourceClaim controller has made the
// claim of each of the count pods in ns and recorded it in the pod's
// status, as the recorder's pod informer sees them. The claims are listed
// too: the controller creates a claim before it records it, and the
// scheduler must find it.
func waitForClaims(ctx context.Context, c kubernetes.Interface, rec *recorder, ns string, count int) error {
	recorded, claims := 0, 0
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, devicesTimeout, true, func(ctx context.Context) (bool, error) {
		recorded = 0
		for _, p := range rec.pods() {
			if podClaim(p) != "" {
				recorded++
			}
		}
		if recorded < count {
			return false, nil
		}
		l, err := c.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, err
		}
		claims = len(l.Items)
		return claims >= count, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the ResourceClaim controller to make the claims of %d pods (%d recorded in pods, %d claims): %w", count, recorded, claims, err)
	}
	return nil
}

// deleteDevices deletes the claims and the template in ns, every slice the
// harness made and the class, removes the claims' finalizers, and waits
// until all of it is gone. The pods that used the claims must be gone
// already.
func deleteDevices(ctx context.Context, c kubernetes.Interface, workers int, ns string) error {
	claims, rs := c.ResourceV1().ResourceClaims(ns), c.ResourceV1().ResourceSlices()
	sel := metav1.ListOptions{LabelSelector: sliceLabel}
	if err := claims.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("deleting claims in %q: %w", ns, err)
	}
	// Deleted first, so that nothing adds the finalizer back; a merge
	// patch needs no resourceVersion, so it does not race the
	// ResourceClaim controller deallocating the claims of deleted pods.
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	left, err := claims.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing claims in %q: %w", ns, err)
	}
	err = parallel(ctx, workers, len(left.Items), func(ctx context.Context, i int) error {
		if len(left.Items[i].Finalizers) == 0 {
			return nil
		}
		_, err := claims.Patch(ctx, left.Items[i].Name, types.MergePatchType, unfinalize, metav1.PatchOptions{})
		return ignoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("removing the finalizers of claims in %q: %w", ns, err)
	}
	if err := c.ResourceV1().ResourceClaimTemplates(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("deleting ResourceClaimTemplates in %q: %w", ns, err)
	}
	if err := rs.DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		return fmt.Errorf("deleting ResourceSlices: %w", err)
	}
	if err := ignoreNotFound(c.ResourceV1().DeviceClasses().Delete(ctx, benchDeviceClassName, metav1.DeleteOptions{})); err != nil {
		return fmt.Errorf("deleting DeviceClass %q: %w", benchDeviceClassName, err)
	}
	what := ""
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, devicesTimeout, true, func(ctx context.Context) (bool, error) {
		cl, err := claims.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, err
		}
		sl, err := rs.List(ctx, metav1.ListOptions{LabelSelector: sliceLabel, Limit: 1})
		if err != nil {
			return false, err
		}
		tl, err := c.ResourceV1().ResourceClaimTemplates(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, err
		}
		_, cerr := c.ResourceV1().DeviceClasses().Get(ctx, benchDeviceClassName, metav1.GetOptions{})
		switch {
		case len(cl.Items) > 0:
			what = "claim " + ns + "/" + cl.Items[0].Name
		case len(sl.Items) > 0:
			what = "ResourceSlice " + sl.Items[0].Name
		case len(tl.Items) > 0:
			what = "ResourceClaimTemplate " + ns + "/" + tl.Items[0].Name
		case cerr == nil:
			what = "DeviceClass " + benchDeviceClassName
		case !apierrors.IsNotFound(cerr):
			return false, cerr
		default:
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for claims, slices, template and class to go (%s is left): %w", what, err)
	}
	return nil
}

// listDevices returns the claims in ns and the slices the harness made,
// for the placement check.
func listDevices(ctx context.Context, c kubernetes.Interface, ns string) ([]*resourceapi.ResourceClaim, []*resourceapi.ResourceSlice, error) {
	cl, err := c.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing claims in %q: %w", ns, err)
	}
	sl, err := c.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{LabelSelector: sliceLabel})
	if err != nil {
		return nil, nil, fmt.Errorf("listing ResourceSlices: %w", err)
	}
	claims := make([]*resourceapi.ResourceClaim, len(cl.Items))
	for i := range cl.Items {
		claims[i] = &cl.Items[i]
	}
	rs := make([]*resourceapi.ResourceSlice, len(sl.Items))
	for i := range sl.Items {
		rs[i] = &sl.Items[i]
	}
	return claims, rs, nil
}

// checkDevices adds to res the checks of the pods' claims: no device
// (driver, pool, device) is allocated to two claims; and the claim of
// every bound pod is the one recorded in its status, exists, is allocated
// exactly one device of benchDriver that the slice of the pod's node
// publishes in that node's pool, and is reserved for the pod (its
// status.reservedFor names the pod, uid included). The claims of pods
// still pending are not checked: an incomplete drain is reported as such.
func checkDevices(res *Placement, pods []*v1.Pod, claims []*resourceapi.ResourceClaim, rs []*resourceapi.ResourceSlice) {
	published := map[string]bool{} // driver/pool/device
	for _, s := range rs {
		for _, d := range s.Spec.Devices {
			published[s.Spec.Driver+"/"+s.Spec.Pool.Name+"/"+d.Name] = true
		}
	}
	claimByName := make(map[string]*resourceapi.ResourceClaim, len(claims))
	allocatedTo := map[string][]string{} // device → the claims it is allocated to
	for _, c := range claims {
		claimByName[c.Name] = c
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			id := r.Driver + "/" + r.Pool + "/" + r.Device
			allocatedTo[id] = append(allocatedTo[id], c.Namespace+"/"+c.Name)
		}
	}
	shared := make([]string, 0, len(allocatedTo))
	for id, keys := range allocatedTo {
		if len(keys) > 1 {
			shared = append(shared, id)
		}
	}
	sort.Strings(shared)
	for _, id := range shared {
		keys := allocatedTo[id]
		sort.Strings(keys)
		res.violate(&res.SharedDevices, "device %s allocated to %d claims: %s", id, len(keys), strings.Join(keys, ", "))
	}

	for _, p := range pods {
		if p.Spec.NodeName == "" || len(p.Spec.ResourceClaims) == 0 {
			continue
		}
		name := podClaim(p)
		c := claimByName[name]
		switch {
		case name == "":
			res.violate(&res.DeviceAllocation, "pod %s on %s: no claim recorded in its status", p.Name, p.Spec.NodeName)
			continue
		case c == nil:
			res.violate(&res.DeviceAllocation, "pod %s on %s: its claim %s does not exist", p.Name, p.Spec.NodeName, name)
			continue
		case c.Status.Allocation == nil:
			res.violate(&res.DeviceAllocation, "pod %s on %s: its claim %s is not allocated", p.Name, p.Spec.NodeName, name)
			continue
		}
		results := c.Status.Allocation.Devices.Results
		if len(results) != 1 {
			res.violate(&res.DeviceAllocation, "claim %s of pod %s is allocated %d devices, want 1", name, p.Name, len(results))
		}
		for _, r := range results {
			id := r.Driver + "/" + r.Pool + "/" + r.Device
			switch {
			case r.Driver != benchDriver || r.Pool != p.Spec.NodeName:
				res.violate(&res.DeviceAllocation, "claim %s of pod %s on %s is allocated %s, not a device of its node's pool", name, p.Name, p.Spec.NodeName, id)
			case !published[id]:
				res.violate(&res.DeviceAllocation, "claim %s of pod %s is allocated %s, which no slice publishes", name, p.Name, id)
			}
		}
		if !slices.ContainsFunc(c.Status.ReservedFor, func(ref resourceapi.ResourceClaimConsumerReference) bool {
			return ref.Resource == "pods" && ref.Name == p.Name && ref.UID == p.UID
		}) {
			res.violate(&res.DeviceAllocation, "claim %s is not reserved for its pod %s (reservedFor %v)", name, p.Name, c.Status.ReservedFor)
		}
	}
}
