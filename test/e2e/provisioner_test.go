package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// Annotations of the provisioning handshake, as the PV controller and the
// scheduler write them.
const (
	annStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	annSelectedNode       = "volume.kubernetes.io/selected-node"
	annProvisionedBy      = "pv.kubernetes.io/provisioned-by"
)

// provisioner is what a CSI driver's external-provisioner sidecar does for
// scheduling, and no more: for each claim the PV controller hands it (the
// claim's volume.kubernetes.io/storage-provisioner annotation names it) on
// the node a scheduler selected (volume.kubernetes.io/selected-node), it
// creates a volume of the claim's size, class and access modes, pinned by
// node affinity to that node's hostname and pre-bound to the claim, which
// the PV controller then binds. Nothing here fakes the PV controller.
type provisioner struct {
	name   string
	client kubernetes.Interface
	// paused makes it leave new claims alone.
	paused atomic.Bool
	// givingUp makes it give up on every claim, as external-provisioner
	// does after a final error on the selected node: it removes the
	// claim's selected-node annotation so that the pod is rescheduled.
	givingUp atomic.Bool

	mu sync.Mutex
	// made are the volumes created, by claim namespace/name.
	made map[string]string
}

// startProvisioner runs a provisioner named name until the test ends,
// then deletes the volumes it made.
func (e *env) startProvisioner(name string) *provisioner {
	t := e.t
	t.Helper()
	p := &provisioner{name: name, client: e.client, made: map[string]string{}}
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, pv := range p.made {
			e.deletePersistentVolume(pv)
		}
	})
	f := informers.NewSharedInformerFactory(e.client, 0)
	claims := f.Core().V1().PersistentVolumeClaims().Informer()
	if _, err := claims.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.claimChanged(obj.(*v1.PersistentVolumeClaim)) },
		UpdateFunc: func(_, obj any) { p.claimChanged(obj.(*v1.PersistentVolumeClaim)) },
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx.Done())
	t.Cleanup(func() { cancel(); f.Shutdown() })
	if !toolscache.WaitForCacheSync(ctx.Done(), claims.HasSynced) {
		t.Fatal("provisioner: claims never synced")
	}
	return p
}

// provisioned returns the volume made for claim namespace/name, if any.
func (p *provisioner) provisioned(namespace, name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.made[namespace+"/"+name]
}

func (p *provisioner) claimChanged(claim *v1.PersistentVolumeClaim) {
	node := claim.Annotations[annSelectedNode]
	if p.paused.Load() || claim.Annotations[annStorageProvisioner] != p.name || node == "" || claim.Spec.VolumeName != "" {
		return
	}
	// A handler must not block the informer; an API call takes a few
	// milliseconds here.
	go func() {
		if p.givingUp.Load() {
			if err := p.giveUp(claim); err != nil {
				fmt.Printf("provisioner %s: claim %s/%s: give up: %v\n", p.name, claim.Namespace, claim.Name, err)
			}
			return
		}
		if err := p.provision(claim, node); err != nil {
			fmt.Printf("provisioner %s: claim %s/%s: %v\n", p.name, claim.Namespace, claim.Name, err)
		}
	}()
}

func (p *provisioner) provision(claim *v1.PersistentVolumeClaim, nodeName string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node, err := p.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("selected node: %w", err)
	}
	host := node.Labels[v1.LabelHostname]
	if host == "" {
		host = node.Name
	}
	size := claim.Spec.Resources.Requests[v1.ResourceStorage]
	if size.IsZero() {
		size = resource.MustParse("1Gi")
	}
	class := ""
	if claim.Spec.StorageClassName != nil {
		class = *claim.Spec.StorageClassName
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "pvc-" + string(claim.UID),
			Annotations: map[string]string{annProvisionedBy: p.name},
		},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    claim.Spec.VolumeMode,
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			ClaimRef: &v1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
			},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				CSI: &v1.CSIPersistentVolumeSource{Driver: p.name, VolumeHandle: string(claim.UID)},
			},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{host}}},
			}}}},
		},
	}
	if _, err := p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create volume: %w", err)
	}
	p.mu.Lock()
	p.made[claim.Namespace+"/"+claim.Name] = pv.Name
	p.mu.Unlock()
	return nil
}

// giveUp removes the claim's selected-node annotation, leaving the others.
func (p *provisioner) giveUp(claim *v1.PersistentVolumeClaim) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	claims := p.client.CoreV1().PersistentVolumeClaims(claim.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := claims.Get(ctx, claim.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if _, ok := c.Annotations[annSelectedNode]; !ok {
			return nil
		}
		delete(c.Annotations, annSelectedNode)
		_, err = claims.Update(ctx, c, metav1.UpdateOptions{})
		return err
	})
}
