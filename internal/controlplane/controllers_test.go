package controlplane_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// Names the controllers and kube-apiserver use on the objects they touch.
const (
	annBindCompleted   = "pv.kubernetes.io/bind-completed"
	pvcProtection      = "kubernetes.io/pvc-protection"
	pvProtection       = "kubernetes.io/pv-protection"
	annPodClaimName    = "resource.kubernetes.io/pod-claim-name"
	podGroupProtection = "scheduling.k8s.io/podgroup-protection"
	controllerDeadline = 30 * time.Second
)

// testControllers checks, on a control plane started with
// StorageControllers, DRAControllers and GangControllers (and the
// GenericWorkload flags), that each controller does on the
// API what tests of the scheduler will rely on.
func testControllers(t *testing.T, cp *controlplane.ControlPlane) {
	ctx := t.Context()
	client := cp.AdminClient()
	ns, err := controlplane.CreateNamespace(ctx, client, "controllers")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("persistent volume binder", func(t *testing.T) {
		// A claim made before its volume is found only at the binder's
		// resync, which Start shortens from 15s.
		for _, volumeFirst := range []bool{true, false} {
			name := fmt.Sprintf("immediate-volume-first-%t", volumeFirst)
			t.Run(name, func(t *testing.T) {
				pv := frameworktest.MakePV(ns+"-"+name).CSI("csi.example.com", name).Obj()
				pv.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
				pv.Status = v1.PersistentVolumeStatus{}
				pvc := frameworktest.MakePVC(ns, name).Class("").Obj()
				pvc.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
				pvc.Status = v1.PersistentVolumeClaimStatus{}
				if volumeFirst {
					createPV(t, client, pv)
					pvc = createPVC(t, client, pvc)
				} else {
					pvc = createPVC(t, client, pvc)
					createPV(t, client, pv)
				}

				got := waitPVC(t, client, ns, name, func(c *v1.PersistentVolumeClaim) bool { return c.Status.Phase == v1.ClaimBound })
				if got.Spec.VolumeName != pv.Name || got.Annotations[annBindCompleted] == "" {
					t.Errorf("claim: volumeName %q, annotations %v; want %q and %q", got.Spec.VolumeName, got.Annotations, pv.Name, annBindCompleted)
				}
				gotPV, err := client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if gotPV.Status.Phase != v1.VolumeBound || gotPV.Spec.ClaimRef == nil || gotPV.Spec.ClaimRef.UID != pvc.UID {
					t.Errorf("volume: phase %q, claimRef %+v; want Bound to claim uid %q", gotPV.Status.Phase, gotPV.Spec.ClaimRef, pvc.UID)
				}
			})
		}
	})

	t.Run("protection of a bound volume and a claim in use", func(t *testing.T) {
		const name = "in-use"
		pv := frameworktest.MakePV(ns+"-"+name).CSI("csi.example.com", name).Obj()
		pv.Status = v1.PersistentVolumeStatus{}
		pvc := frameworktest.MakePVC(ns, name).Class("").Obj()
		pvc.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
		pvc.Status = v1.PersistentVolumeClaimStatus{}
		createPV(t, client, pv)
		pvc = createPVC(t, client, pvc)
		// kube-apiserver's admission adds the finalizers; only the
		// controllers remove them.
		if !slices.Contains(pvc.Finalizers, pvcProtection) {
			t.Errorf("claim finalizers %q, want %q", pvc.Finalizers, pvcProtection)
		}
		waitPVC(t, client, ns, name, func(c *v1.PersistentVolumeClaim) bool { return c.Status.Phase == v1.ClaimBound })

		// A pod bound to a node uses the claim; the node need not exist.
		pod := frameworktest.MakePod().Namespace(ns).Name("user").Node("nowhere").PVC(name).Obj()
		pod.UID = ""
		if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// Long enough for both protection controllers to have looked: they
		// act within milliseconds of an event.
		time.Sleep(2 * time.Second)
		gotPVC, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || !slices.Contains(gotPVC.Finalizers, pvcProtection) {
			t.Fatalf("claim used by a pod after delete: err %v, want it kept with finalizer %q", err, pvcProtection)
		}
		gotPV, err := client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		if err != nil || !slices.Contains(gotPV.Finalizers, pvProtection) {
			t.Fatalf("bound volume after delete: err %v, want it kept with finalizer %q", err, pvProtection)
		}

		// The pod gone, the claim goes; the volume, released, follows.
		zero := int64(0)
		if err := client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, "claim "+name, func(ctx context.Context) error {
			_, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			return err
		})
		waitGone(t, "volume "+pv.Name, func(ctx context.Context) error {
			_, err := client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
			return err
		})
	})

	t.Run("ephemeral volume", func(t *testing.T) {
		pod := frameworktest.MakePod().Namespace(ns).Name("scratch-user").SchedulerName("nobody").Volume(v1.Volume{
			Name: "scratch",
			VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{
				Spec: v1.PersistentVolumeClaimSpec{
					AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
					Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}}},
		}).Obj()
		pod.UID = ""
		pod, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := waitPVC(t, client, ns, "scratch-user-scratch", func(*v1.PersistentVolumeClaim) bool { return true })
		if owner := metav1.GetControllerOf(got); owner == nil || owner.UID != pod.UID {
			t.Errorf("claim controller %+v, want pod uid %q", owner, pod.UID)
		}
	})

	t.Run("resource claim from template", func(t *testing.T) {
		testResourceClaimFromTemplate(t, client, ns)
	})

	t.Run("podgroup protection", func(t *testing.T) {
		testPodGroupProtection(t, client, ns)
	})
}

// testPodGroupProtection checks that a PodGroup gets its protection
// finalizer from kube-apiserver's admission, that a deleted PodGroup stays
// while a pod that has not terminated names it, and that the PodGroup
// protection controller lets it go once that pod is gone.
func testPodGroupProtection(t *testing.T, client kubernetes.Interface, ns string) {
	ctx := t.Context()
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gang"},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2},
		}},
	}
	pg, err := client.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pg.Finalizers, podGroupProtection) {
		t.Errorf("PodGroup finalizers %q, want %q", pg.Finalizers, podGroupProtection)
	}

	// A member bound to a node (which need not exist) has not terminated.
	pod := frameworktest.MakePod().Namespace(ns).Name("gang-member").Node("nowhere").Obj()
	pod.UID = ""
	pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &pg.Name}
	pod, err = client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.SchedulingGroup == nil {
		t.Fatal("the API server dropped the pod's spec.schedulingGroup (GenericWorkload off?)")
	}
	if err := client.SchedulingV1beta1().PodGroups(ns).Delete(ctx, pg.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Long enough for the controller to have looked: it acts within
	// milliseconds of an event.
	time.Sleep(2 * time.Second)
	got, err := client.SchedulingV1beta1().PodGroups(ns).Get(ctx, pg.Name, metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp == nil || !slices.Contains(got.Finalizers, podGroupProtection) {
		t.Fatalf("PodGroup named by a pod after delete: err %v, want it Terminating with finalizer %q", err, podGroupProtection)
	}

	zero := int64(0)
	if err := client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "PodGroup "+pg.Name, func(ctx context.Context) error {
		_, err := client.SchedulingV1beta1().PodGroups(ns).Get(ctx, pg.Name, metav1.GetOptions{})
		return err
	})
}

// testResourceClaimFromTemplate checks that the ResourceClaim controller
// creates a pod's claim from its template and reports it in the pod's
// status, and that once the pod is deleted it drops the pod from the
// claim's reservedFor, deallocates the claim and removes its finalizer.
func testResourceClaimFromTemplate(t *testing.T, client kubernetes.Interface, ns string) {
	ctx := t.Context()
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-gpu"}}
	if _, err := client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.ResourceV1().DeviceClasses().Delete(context.Background(), class.Name, metav1.DeleteOptions{})
	})
	requests := []resourcev1.DeviceRequest{{
		Name:    "gpu",
		Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class.Name, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
	}}
	tmpl := &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "one-gpu"},
		Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: requests}}},
	}
	if _, err := client.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Unscheduled, for a scheduler that does not exist: the controller
	// creates claims for every pod, scheduled or not.
	pod := frameworktest.MakePod().Namespace(ns).Name("gpu-user").SchedulerName("nobody").Obj()
	pod.UID = ""
	pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &tmpl.Name}}
	pod.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	pod, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var claimName string
	poll(t, "pod status.resourceClaimStatuses", func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, s := range p.Status.ResourceClaimStatuses {
			if s.Name == "gpu" && s.ResourceClaimName != nil {
				claimName = *s.ResourceClaimName
				return true, nil
			}
		}
		return false, nil
	})
	claim, err := client.ResourceV1().ResourceClaims(ns).Get(ctx, claimName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("generated claim %q: %v", claimName, err)
	}
	if owner := metav1.GetControllerOf(claim); owner == nil || owner.UID != pod.UID {
		t.Errorf("claim %q controller %+v, want pod uid %q", claimName, owner, pod.UID)
	}
	if got := claim.Annotations[annPodClaimName]; got != "gpu" {
		t.Errorf("claim %q annotation %s = %q, want %q", claimName, annPodClaimName, got, "gpu")
	}
	if diff := cmp.Diff(requests, claim.Spec.Devices.Requests); diff != "" {
		t.Errorf("claim %q requests (-want +got):\n%s", claimName, diff)
	}

	// Allocate and reserve the claim for the pod as kube-scheduler's DRA
	// plugin does: the finalizer first, then the status.
	claim.Finalizers = append(claim.Finalizers, resourcev1.Finalizer)
	claim, err = client.ResourceV1().ResourceClaims(ns).Update(ctx, claim, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
		Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0"}},
	}}
	claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: pod.Name, UID: pod.UID}}
	if _, err := client.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	zero := int64(0)
	if err := client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	var last *resourcev1.ResourceClaim
	poll(t, "claim released", func(ctx context.Context) (bool, error) {
		c, err := client.ResourceV1().ResourceClaims(ns).Get(ctx, claimName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// Deleting it would be as good; without a garbage
			// collector the controller does not (see DRAControllers).
			return true, nil
		}
		if err != nil {
			return false, err
		}
		last = c
		return len(c.Status.ReservedFor) == 0 && c.Status.Allocation == nil && !slices.Contains(c.Finalizers, resourcev1.Finalizer), nil
	})
	if last != nil {
		t.Logf("claim %q after its pod was deleted: reservedFor %v, allocation %v, finalizers %q", claimName, last.Status.ReservedFor, last.Status.Allocation, last.Finalizers)
	}
}

func createPV(t *testing.T, client kubernetes.Interface, pv *v1.PersistentVolume) *v1.PersistentVolume {
	t.Helper()
	got, err := client.CoreV1().PersistentVolumes().Create(t.Context(), pv, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func createPVC(t *testing.T, client kubernetes.Interface, pvc *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
	t.Helper()
	got, err := client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Create(t.Context(), pvc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// waitPVC waits until claim ns/name exists and ok holds for it, and
// returns it.
func waitPVC(t *testing.T, client kubernetes.Interface, ns, name string, ok func(*v1.PersistentVolumeClaim) bool) *v1.PersistentVolumeClaim {
	t.Helper()
	var got *v1.PersistentVolumeClaim
	poll(t, "claim "+name, func(ctx context.Context) (bool, error) {
		c, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		got = c
		return ok(c), nil
	})
	return got
}

// waitGone waits until get returns NotFound.
func waitGone(t *testing.T, what string, get func(context.Context) error) {
	t.Helper()
	poll(t, what+" gone", func(ctx context.Context) (bool, error) {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// poll calls cond every 100ms until it is true, failing the test after
// controllerDeadline.
func poll(t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, controllerDeadline, true, cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
