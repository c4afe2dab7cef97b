package main

// The storage of the volumes workload. Pod i of a phase mounts its own
// claim, claimName(i), in the phase's namespace: 1Gi of the class
// benchClassName, which binds WaitForFirstConsumer and has no provisioner,
// as local volumes' classes do. For every pod there is one local
// PersistentVolume, volumeName(i), of that class and size, pinned by
// kubernetes.io/hostname to node i mod nodes: the volumes are spread evenly
// and every claim fits every volume, so a scheduler must find, for each
// pod, a node that still has a free volume, and the PV binder of
// kube-controller-manager completes each binding the scheduler starts.
// Names and layout depend only on i and the number of nodes, so every
// contender gets the same storage.
//
// Volumes are cluster-scoped and carry the kubernetes.io/pv-protection
// finalizer, claims kubernetes.io/pvc-protection, both added by
// kube-apiserver's admission. deleteStorage deletes them and then removes
// the finalizers itself (the protection controller would keep a volume
// that is still Bound, and re-adds the finalizer to one not being
// deleted, so the order matters), so that the next phase starts with
// none of them left.

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

const (
	// benchClassName is the StorageClass of every claim and volume.
	benchClassName = "bench-local"
	// volumeLabel marks the volumes the harness made, so that cleanup
	// finds them, and nothing else, among the cluster's.
	volumeLabel = "bench.yardmaster.io/volume"
	// volumeSize is the size of every claim and every volume.
	volumeSize = "1Gi"
	// storageTimeout bounds each wait on the PV binder and on deletions.
	storageTimeout = 2 * time.Minute
)

func claimName(i int) string  { return fmt.Sprintf("claim-%06d", i) }
func volumeName(i int) string { return fmt.Sprintf("bench-pv-%06d", i) }

// benchClass is the no-provisioner WaitForFirstConsumer class.
func benchClass() *storagev1.StorageClass {
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: benchClassName},
		Provisioner:       storagehelpers.NotSupportedProvisioner,
		VolumeBindingMode: &mode,
	}
}

// benchVolume is the local volume of pod i, on node i mod nodes.
func benchVolume(i, nodes int) *v1.PersistentVolume {
	name := volumeName(i)
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{volumeLabel: "true"}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse(volumeSize)},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			// Retain: the PV binder has no deleter for local volumes; the
			// harness deletes them.
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              benchClassName,
			PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/bench/" + name}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{
					Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{nodeName(i % nodes)},
				}},
			}}}},
		},
	}
}

// benchClaim is pod i's claim, in namespace ns.
func benchClaim(i int, ns string) *v1.PersistentVolumeClaim {
	class := benchClassName
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: claimName(i)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(volumeSize)}},
			StorageClassName: &class,
		},
	}
}

// createStorage makes the class, the claims of pods 0..count-1 in ns and
// their volumes, and waits until the PV binder has made every volume
// Available: the API server creates them Pending, and a scheduler offers
// only Available volumes.
func createStorage(ctx context.Context, c kubernetes.Interface, workers int, ns string, count, nodes int) error {
	if _, err := c.StorageV1().StorageClasses().Create(ctx, benchClass(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating StorageClass %q: %w", benchClassName, err)
	}
	err := parallel(ctx, workers, count, func(ctx context.Context, i int) error {
		return createOnce(func() error {
			_, err := c.CoreV1().PersistentVolumes().Create(ctx, benchVolume(i, nodes), metav1.CreateOptions{})
			return err
		}, "PersistentVolume "+volumeName(i))
	})
	if err != nil {
		return err
	}
	err = parallel(ctx, workers, count, func(ctx context.Context, i int) error {
		return createOnce(func() error {
			_, err := c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, benchClaim(i, ns), metav1.CreateOptions{})
			return err
		}, "PersistentVolumeClaim "+ns+"/"+claimName(i))
	})
	if err != nil {
		return err
	}
	available := 0
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, storageTimeout, true, func(ctx context.Context) (bool, error) {
		l, err := c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: volumeLabel})
		if err != nil {
			return false, err
		}
		available = 0
		for i := range l.Items {
			if l.Items[i].Status.Phase == v1.VolumeAvailable {
				available++
			}
		}
		return available >= count, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the PV binder to make %d volumes Available (%d are): %w", count, available, err)
	}
	return nil
}

// createOnce runs create, retrying transient errors; AlreadyExists after a
// retry means an earlier attempt got through.
func createOnce(create func() error, what string) error {
	attempt := 0
	return retry.OnError(retry.DefaultBackoff, isTransient, func() error {
		attempt++
		err := create()
		if attempt > 1 && apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("creating %s: %w", what, err)
		}
		return nil
	})
}

// deleteStorage deletes the claims in ns, every volume the harness made
// and the class, removes the protection finalizers of what is left, and
// waits until all of it is gone. The pods that used the claims must be
// gone already.
func deleteStorage(ctx context.Context, c kubernetes.Interface, workers int, ns string) error {
	pvcs, pvs := c.CoreV1().PersistentVolumeClaims(ns), c.CoreV1().PersistentVolumes()
	sel := metav1.ListOptions{LabelSelector: volumeLabel}
	if err := pvcs.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("deleting claims in %q: %w", ns, err)
	}
	if err := pvs.DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		return fmt.Errorf("deleting volumes: %w", err)
	}
	// Deleted first, so that the protection controllers no longer add
	// the finalizers back; a merge patch needs no resourceVersion, so it
	// does not race them.
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	claims, err := pvcs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing claims in %q: %w", ns, err)
	}
	err = parallel(ctx, workers, len(claims.Items), func(ctx context.Context, i int) error {
		_, err := pvcs.Patch(ctx, claims.Items[i].Name, types.MergePatchType, unfinalize, metav1.PatchOptions{})
		return ignoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("removing the finalizers of claims in %q: %w", ns, err)
	}
	volumes, err := pvs.List(ctx, sel)
	if err != nil {
		return fmt.Errorf("listing volumes: %w", err)
	}
	err = parallel(ctx, workers, len(volumes.Items), func(ctx context.Context, i int) error {
		_, err := pvs.Patch(ctx, volumes.Items[i].Name, types.MergePatchType, unfinalize, metav1.PatchOptions{})
		return ignoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("removing the finalizers of volumes: %w", err)
	}
	if err := ignoreNotFound(c.StorageV1().StorageClasses().Delete(ctx, benchClassName, metav1.DeleteOptions{})); err != nil {
		return fmt.Errorf("deleting StorageClass %q: %w", benchClassName, err)
	}
	left := ""
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, storageTimeout, true, func(ctx context.Context) (bool, error) {
		cl, err := pvcs.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, err
		}
		vl, err := pvs.List(ctx, metav1.ListOptions{LabelSelector: volumeLabel, Limit: 1})
		if err != nil {
			return false, err
		}
		switch {
		case len(cl.Items) > 0:
			left = "claim " + ns + "/" + cl.Items[0].Name
		case len(vl.Items) > 0:
			left = "volume " + vl.Items[0].Name
		default:
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for claims and volumes to go (%s is left): %w", left, err)
	}
	return nil
}

// listStorage returns the claims in ns and the volumes the harness made,
// for the placement check.
func listStorage(ctx context.Context, c kubernetes.Interface, ns string) ([]*v1.PersistentVolumeClaim, []*v1.PersistentVolume, error) {
	cl, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing claims in %q: %w", ns, err)
	}
	vl, err := c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: volumeLabel})
	if err != nil {
		return nil, nil, fmt.Errorf("listing volumes: %w", err)
	}
	claims := make([]*v1.PersistentVolumeClaim, len(cl.Items))
	for i := range cl.Items {
		claims[i] = &cl.Items[i]
	}
	pvs := make([]*v1.PersistentVolume, len(vl.Items))
	for i := range vl.Items {
		pvs[i] = &vl.Items[i]
	}
	return claims, pvs, nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
