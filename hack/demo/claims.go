package main

// The demo's volumes and devices: local volumes of a WaitForFirstConsumer
// class on the SSD nodes, which VolumeBinding matches to the claims that
// the StatefulSet controller makes from volumeClaimTemplates and
// kube-controller-manager's PV binder then binds; and GPUs published in
// ResourceSlices on the GPU nodes, which DynamicResources allocates to
// pods' ResourceClaims (one named, the others made from a template by
// kube-controller-manager's ResourceClaim controller).

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

const (
	localClass = "local-ssd"
	gpuDriver  = "gpu.demo.yardmaster.io"
	gpuClass   = "demo-gpu"
	// gpuTemplate asks for any one GPU.
	gpuTemplate = "one-gpu"
)

// createStorage makes the class and a local volume on each SSD node,
// alternately 10Gi and 20Gi, pinned to its node by hostname.
func createStorage(ctx context.Context, client kubernetes.Interface) error {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	if _, err := client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: localClass},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: &wffc,
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for i := firstSSD; i < numNodes; i++ {
		node := nodeName(i)
		size := "10Gi"
		if i%2 == 1 {
			size = "20Gi"
		}
		pv := &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "ssd-" + node},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
				StorageClassName:              localClass,
				PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/ssd"}},
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
				}}}},
			},
		}
		if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// createDevices publishes GPUs on the GPU nodes: node-00 has a 40Gi and
// an 80Gi one, node-01 a 40Gi one. The class selects the driver's devices;
// the template asks for one of them, the claim "big-gpu" for one with at
// least 80Gi.
func createDevices(ctx context.Context, client kubernetes.Interface) error {
	if _, err := client.ResourceV1().DeviceClasses().Create(ctx, &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: gpuClass},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", gpuDriver)},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	gpus := map[string][]int64{nodeName(0): {40, 80}, nodeName(1): {40}}
	for _, node := range []string{nodeName(0), nodeName(1)} {
		s := &resourceapi.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"},
			Spec: resourceapi.ResourceSliceSpec{
				Driver:   gpuDriver,
				NodeName: &node,
				Pool:     resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			},
		}
		for i, mem := range gpus[node] {
			s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{
				Name:       fmt.Sprintf("gpu-%d", i),
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"memoryGi": {IntValue: &mem}},
			})
		}
		if _, err := client.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	one := resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
		Name:    "gpu",
		Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: gpuClass},
	}}}
	if _, err := client.ResourceV1().ResourceClaimTemplates(namespace).Create(ctx, &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: gpuTemplate},
		Spec:       resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: one}},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	big := resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
		Name: "gpu",
		Exactly: &resourceapi.ExactDeviceRequest{
			DeviceClassName: gpuClass,
			Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
				Expression: fmt.Sprintf("device.attributes[%q].memoryGi >= 80", gpuDriver),
			}}},
		},
	}}}
	_, err := client.ResourceV1().ResourceClaims(namespace).Create(ctx, &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "big-gpu"},
		Spec:       resourceapi.ResourceClaimSpec{Devices: big},
	}, metav1.CreateOptions{})
	return err
}

// gpuDeployment makes a Deployment whose pods tolerate the GPU nodes'
// taint and select no node: only their claim, the shared named one or one
// of their own from the template, takes them to a GPU node.
func gpuDeployment(name string, replicas int32, claim, template string) *appsv1.Deployment {
	pod := frameworktest.MakePod().Namespace(namespace).Req("500m", "1Gi").
		Toleration("dedicated", v1.TolerationOpEqual, "gpu", v1.TaintEffectNoSchedule)
	pc := v1.PodResourceClaim{Name: "gpu"}
	if claim != "" {
		pc.ResourceClaimName = &claim
	} else {
		pc.ResourceClaimTemplateName = &template
	}
	pod.Spec.ResourceClaims = []v1.PodResourceClaim{pc}
	pod.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	return deployment(name, replicas, pod)
}

// printClaims shows what each volume claim and each ResourceClaim got.
func printClaims(ctx context.Context, client kubernetes.Interface) error {
	pvcs, err := client.CoreV1().PersistentVolumeClaims(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	step("Volumes (VolumeBinding chose, kube-controller-manager's PV binder bound)")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "   CLAIM\tASKS\tVOLUME\tSIZE\tNODE")
	sort.Slice(pvcs.Items, func(i, j int) bool { return pvcs.Items[i].Name < pvcs.Items[j].Name })
	for _, c := range pvcs.Items {
		volume, size, node := "-", "-", "-"
		if c.Spec.VolumeName != "" {
			volume = c.Spec.VolumeName
			if pv, err := client.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{}); err == nil {
				size = pv.Spec.Capacity.Storage().String()
				if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil && len(na.Required.NodeSelectorTerms) > 0 {
					node = strings.Join(na.Required.NodeSelectorTerms[0].MatchExpressions[0].Values, ",")
				}
			}
		}
		fmt.Fprintf(tw, "   %s\t%s\t%s\t%s\t%s\n", c.Name, c.Spec.Resources.Requests.Storage(), volume, size, node)
	}
	_ = tw.Flush()

	claims, err := client.ResourceV1().ResourceClaims(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	step("Devices (DynamicResources allocated; the claims' status.allocation)")
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "   CLAIM\tRESERVED FOR\tDEVICES (driver/pool/device)")
	sort.Slice(claims.Items, func(i, j int) bool { return claims.Items[i].Name < claims.Items[j].Name })
	for _, c := range claims.Items {
		var users, devices []string
		for _, r := range c.Status.ReservedFor {
			users = append(users, r.Name)
		}
		if a := c.Status.Allocation; a != nil {
			for _, d := range a.Devices.Results {
				devices = append(devices, d.Driver+"/"+d.Pool+"/"+d.Device)
			}
		}
		if len(users) == 0 {
			users = []string{"-"}
		}
		if len(devices) == 0 {
			devices = []string{"not allocated"}
		}
		fmt.Fprintf(tw, "   %s\t%s\t%s\n", c.Name, strings.Join(users, ","), strings.Join(devices, " "))
	}
	return tw.Flush()
}
