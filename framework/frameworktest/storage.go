package frameworktest

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PVC appends a volume named after claim and backed by it.
func (p *PodWrapper) PVC(claim string) *PodWrapper {
	return p.Volume(v1.Volume{Name: claim, VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
	}})
}

// EphemeralVolume appends a generic ephemeral volume; its claim is named
// "<pod>-<name>".
func (p *PodWrapper) EphemeralVolume(name string) *PodWrapper {
	return p.Volume(v1.Volume{Name: name, VolumeSource: v1.VolumeSource{
		Ephemeral: &v1.EphemeralVolumeSource{VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{}},
	}})
}

// Volume appends a volume.
func (p *PodWrapper) Volume(v v1.Volume) *PodWrapper {
	p.Spec.Volumes = append(p.Spec.Volumes, v)
	return p
}

// PVCWrapper builds a PersistentVolumeClaim.
type PVCWrapper struct{ v1.PersistentVolumeClaim }

// MakePVC returns a pending claim with ReadWriteOnce access.
func MakePVC(namespace, name string) *PVCWrapper {
	return &PVCWrapper{v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}},
		Status:     v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}}
}

// Obj returns the claim.
func (w *PVCWrapper) Obj() *v1.PersistentVolumeClaim { return &w.PersistentVolumeClaim }

// Class sets spec.storageClassName.
func (w *PVCWrapper) Class(name string) *PVCWrapper {
	w.Spec.StorageClassName = &name
	return w
}

// VolumeName sets spec.volumeName only (a pre-bound claim).
func (w *PVCWrapper) VolumeName(pv string) *PVCWrapper {
	w.Spec.VolumeName = pv
	return w
}

// Bound binds the claim to pv as the PV controller does: spec.volumeName,
// the bind-completed annotation and phase Bound.
func (w *PVCWrapper) Bound(pv string) *PVCWrapper {
	w.Spec.VolumeName = pv
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations["pv.kubernetes.io/bind-completed"] = "yes"
	w.Status.Phase = v1.ClaimBound
	return w
}

// Request sets the claim's storage request ("5Gi").
func (w *PVCWrapper) Request(size string) *PVCWrapper {
	w.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}
	return w
}

// Annotation sets an annotation.
func (w *PVCWrapper) Annotation(k, v string) *PVCWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[k] = v
	return w
}

// Selector sets the claim's volume selector to match labels.
func (w *PVCWrapper) Selector(matchLabels map[string]string) *PVCWrapper {
	w.Spec.Selector = &metav1.LabelSelector{MatchLabels: matchLabels}
	return w
}

// Block asks for a raw block volume.
func (w *PVCWrapper) Block() *PVCWrapper {
	m := v1.PersistentVolumeBlock
	w.Spec.VolumeMode = &m
	return w
}

// UID sets the claim's UID.
func (w *PVCWrapper) UID(uid string) *PVCWrapper {
	w.ObjectMeta.UID = types.UID(uid)
	return w
}

// Version sets the resourceVersion.
func (w *PVCWrapper) Version(rv string) *PVCWrapper {
	w.ResourceVersion = rv
	return w
}

// AccessModes sets spec.accessModes.
func (w *PVCWrapper) AccessModes(modes ...v1.PersistentVolumeAccessMode) *PVCWrapper {
	w.Spec.AccessModes = modes
	return w
}

// Phase sets status.phase.
func (w *PVCWrapper) Phase(p v1.PersistentVolumeClaimPhase) *PVCWrapper {
	w.Status.Phase = p
	return w
}

// Terminating sets a deletion timestamp.
func (w *PVCWrapper) Terminating() *PVCWrapper {
	now := metav1.Now()
	w.DeletionTimestamp = &now
	return w
}

// ControlledBy makes pod the claim's controller (an ephemeral volume's
// claim).
func (w *PVCWrapper) ControlledBy(pod *v1.Pod) *PVCWrapper {
	yes := true
	w.OwnerReferences = append(w.OwnerReferences, metav1.OwnerReference{
		APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &yes,
	})
	return w
}

// PVWrapper builds a PersistentVolume.
type PVWrapper struct{ v1.PersistentVolume }

// MakePV returns an available 10Gi ReadWriteOnce volume without a source.
func MakePV(name string) *PVWrapper {
	return &PVWrapper{v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}}
}

// Obj returns the volume.
func (w *PVWrapper) Obj() *v1.PersistentVolume { return &w.PersistentVolume }

// Capacity sets the volume's storage capacity ("5Gi").
func (w *PVWrapper) Capacity(size string) *PVWrapper {
	w.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}
	return w
}

// Class sets spec.storageClassName.
func (w *PVWrapper) Class(name string) *PVWrapper {
	w.Spec.StorageClassName = name
	return w
}

// Block makes the volume a raw block volume.
func (w *PVWrapper) Block() *PVWrapper {
	m := v1.PersistentVolumeBlock
	w.Spec.VolumeMode = &m
	return w
}

// AccessModes sets spec.accessModes.
func (w *PVWrapper) AccessModes(modes ...v1.PersistentVolumeAccessMode) *PVWrapper {
	w.Spec.AccessModes = modes
	return w
}

// Phase sets status.phase.
func (w *PVWrapper) Phase(p v1.PersistentVolumePhase) *PVWrapper {
	w.Status.Phase = p
	return w
}

// Terminating sets a deletion timestamp.
func (w *PVWrapper) Terminating() *PVWrapper {
	now := metav1.Now()
	w.DeletionTimestamp = &now
	return w
}

// Version sets the resourceVersion.
func (w *PVWrapper) Version(rv string) *PVWrapper {
	w.ResourceVersion = rv
	return w
}

// OnNode pins the volume to the node whose hostname label is host, as a
// local volume is.
func (w *PVWrapper) OnNode(host string) *PVWrapper {
	return w.NodeAffinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{
		Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{host},
	}}})
}

// CSI sets a CSI source.
func (w *PVWrapper) CSI(driver, handle string) *PVWrapper {
	w.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}
	return w
}

// HostPath sets a hostPath source.
func (w *PVWrapper) HostPath(path string) *PVWrapper {
	w.Spec.HostPath = &v1.HostPathVolumeSource{Path: path}
	return w
}

// NodeAffinity appends a required node affinity term.
func (w *PVWrapper) NodeAffinity(term v1.NodeSelectorTerm) *PVWrapper {
	if w.Spec.NodeAffinity == nil {
		w.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{}}
	}
	w.Spec.NodeAffinity.Required.NodeSelectorTerms = append(w.Spec.NodeAffinity.Required.NodeSelectorTerms, term)
	return w
}

// Label adds a label.
func (w *PVWrapper) Label(k, v string) *PVWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

// ClaimRef binds the volume to a claim.
func (w *PVWrapper) ClaimRef(namespace, name string) *PVWrapper {
	w.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: namespace, Name: name}
	w.Status.Phase = v1.VolumeBound
	return w
}

// MakeStorageClass returns a class with the given provisioner and binding
// mode ("" leaves the mode unset, as no API server would).
func MakeStorageClass(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner}
	if mode != "" {
		sc.VolumeBindingMode = &mode
	}
	return sc
}

// AllowedTopologies restricts where class provisions to nodes whose key
// label is one of values.
func AllowedTopologies(class *storagev1.StorageClass, key string, values ...string) *storagev1.StorageClass {
	class.AllowedTopologies = append(class.AllowedTopologies, v1.TopologySelectorTerm{
		MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: key, Values: values}},
	})
	return class
}

// MakeCSIDriver returns a CSIDriver that says whether it publishes
// storage capacity.
func MakeCSIDriver(name string, storageCapacity bool) *storagev1.CSIDriver {
	return &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSIDriverSpec{StorageCapacity: &storageCapacity}}
}

// MakeCSIStorageCapacity returns the capacity of class on the nodes whose
// key label is value; maxVolume, when not empty, sets maximumVolumeSize.
func MakeCSIStorageCapacity(name, class, key, value, capacity, maxVolume string) *storagev1.CSIStorageCapacity {
	c := &storagev1.CSIStorageCapacity{
		ObjectMeta:       metav1.ObjectMeta{Namespace: "kube-system", Name: name},
		StorageClassName: class,
		NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{key: value}},
	}
	if capacity != "" {
		q := resource.MustParse(capacity)
		c.Capacity = &q
	}
	if maxVolume != "" {
		q := resource.MustParse(maxVolume)
		c.MaximumVolumeSize = &q
	}
	return c
}

// MakeCSINode returns the CSINode of node with the given drivers and their
// attach limits; a negative limit leaves allocatable unset.
func MakeCSINode(node string, limits map[string]int32) *storagev1.CSINode {
	cn := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}}
	for driver, limit := range limits {
		d := storagev1.CSINodeDriver{Name: driver, NodeID: node}
		if limit >= 0 {
			d.Allocatable = &storagev1.VolumeNodeResources{Count: &limit}
		}
		cn.Spec.Drivers = append(cn.Spec.Drivers, d)
	}
	return cn
}

// MakeVolumeAttachment returns an attachment of pv to node by driver.
func MakeVolumeAttachment(name, driver, pv, node string) *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.VolumeAttachmentSpec{
			Attacher: driver, NodeName: node,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv},
		},
	}
}
