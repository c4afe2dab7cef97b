package controlplane_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// viewer is an identity with no RBAC bindings.
var viewer = controlplane.Token{Token: "viewer-token", User: "viewer", UID: "viewer-uid", Groups: []string{"viewers", "qa"}}

// startAll starts one control plane per opts concurrently. It skips the
// test when the binaries are not built, except in CI, where that fails.
func startAll(t *testing.T, opts ...controlplane.Options) []*controlplane.ControlPlane {
	t.Helper()
	cps := make([]*controlplane.ControlPlane, len(opts))
	errs := make([]error, len(opts))
	var wg sync.WaitGroup
	for i, o := range opts {
		wg.Go(func() {
			start := time.Now()
			cps[i], errs[i] = controlplane.Start(t.Context(), o)
			t.Logf("control plane %d: start took %s", i, time.Since(start).Round(time.Millisecond))
		})
	}
	wg.Wait()
	for _, cp := range cps {
		if cp != nil {
			t.Cleanup(func() {
				if err := cp.Stop(); err != nil {
					t.Errorf("Stop: %v", err)
				}
			})
		}
	}
	for _, err := range errs {
		if errors.Is(err, controlplane.ErrBinaryNotFound) && os.Getenv("CI") != "true" {
			t.Skipf("skipping: control-plane binaries are not built (%v); run make control-plane or set %s", err, controlplane.BinDirEnv)
		}
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
	}
	return cps
}

// TestControlPlane runs two control planes at once, the second with
// kube-controller-manager, checks what tests of the scheduler rely on
// against the first and what the controllers do against the second, and
// that Stop leaves nothing.
func TestControlPlane(t *testing.T) {
	cps := startAll(t,
		controlplane.Options{Tokens: []controlplane.Token{viewer}},
		controlplane.Options{
			LogDir:                      t.TempDir(),
			Controllers:                 slices.Concat(controlplane.StorageControllers(), controlplane.DRAControllers(), controlplane.GangControllers()),
			ExtraAPIServerFlags:         controlplane.GenericWorkloadAPIServerFlags(),
			ExtraControllerManagerFlags: controlplane.GenericWorkloadControllerManagerFlags(),
		},
	)
	a, b := cps[0], cps[1]
	ctx := t.Context()
	client := a.AdminClient()

	ns, err := controlplane.CreateNamespace(ctx, client, "cp-test")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("ready node", func(t *testing.T) {
		tests := []struct {
			name       string
			node       *v1.Node
			wantAlloc  v1.ResourceList
			wantTaints []v1.Taint
		}{
			{
				name: "capacity only: allocatable defaults to capacity, Ready added",
				node: &v1.Node{
					ObjectMeta: metav1.ObjectMeta{Name: "bare"},
					Status: v1.NodeStatus{Capacity: v1.ResourceList{
						v1.ResourceCPU:    resource.MustParse("4"),
						v1.ResourceMemory: resource.MustParse("8Gi"),
						v1.ResourcePods:   resource.MustParse("110"),
					}},
				},
				wantAlloc: v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse("4"),
					v1.ResourceMemory: resource.MustParse("8Gi"),
					v1.ResourcePods:   resource.MustParse("110"),
				},
			},
			{
				name: "builder node: own taint kept",
				node: frameworktest.MakeNode().Name("tainted").Capacity("2", "4Gi", 10).
					Taint("dedicated", "gpu", v1.TaintEffectNoSchedule).Obj(),
				wantAlloc: v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse("2"),
					v1.ResourceMemory: resource.MustParse("4Gi"),
					v1.ResourcePods:   resource.MustParse("10"),
				},
				wantTaints: []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}},
			},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if _, err := controlplane.CreateReadyNode(ctx, client, tc.node); err != nil {
					t.Fatal(err)
				}
				got, err := client.CoreV1().Nodes().Get(ctx, tc.node.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.wantTaints, got.Spec.Taints); diff != "" {
					t.Errorf("taints (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(quantities(tc.wantAlloc), quantities(got.Status.Allocatable)); diff != "" {
					t.Errorf("allocatable (-want +got):\n%s", diff)
				}
				if !isReady(got) {
					t.Errorf("conditions = %+v, want Ready=True", got.Status.Conditions)
				}
			})
		}
	})

	t.Run("pod for an unknown scheduler is admitted", func(t *testing.T) {
		pod := frameworktest.MakePod().Name("p").Namespace(ns).SchedulerName("nobody").Req("100m", "128Mi").Obj()
		pod.UID = "" // The API server assigns UIDs.
		got, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating pod: %v", err)
		}
		if got.Spec.SchedulerName != "nobody" || got.Spec.NodeName != "" {
			t.Errorf("pod schedulerName=%q nodeName=%q, want %q and unbound", got.Spec.SchedulerName, got.Spec.NodeName, "nobody")
		}
	})

	t.Run("token without RBAC", func(t *testing.T) {
		vc, err := kubernetes.NewForConfig(a.RESTConfig(viewer.Token))
		if err != nil {
			t.Fatal(err)
		}
		review, err := vc.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SelfSubjectReview: %v", err)
		}
		want := authenticationv1.UserInfo{Username: "viewer", UID: "viewer-uid", Groups: []string{"viewers", "qa", "system:authenticated"}}
		if diff := cmp.Diff(want, review.Status.UserInfo); diff != "" {
			t.Errorf("identity (-want +got):\n%s", diff)
		}
		_, err = vc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("listing nodes as %q: err = %v, want 403 Forbidden", viewer.User, err)
		}
	})

	t.Run("kubeconfig", func(t *testing.T) {
		for _, tc := range []struct {
			name, path string
		}{
			{"admin", a.AdminKubeconfig},
			{"written", filepath.Join(t.TempDir(), "kubeconfig")},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.path != a.AdminKubeconfig {
					if err := a.WriteKubeconfig(tc.path, a.AdminToken); err != nil {
						t.Fatal(err)
					}
				}
				cfg, err := clientcmd.BuildConfigFromFlags("", tc.path)
				if err != nil {
					t.Fatal(err)
				}
				kc, err := kubernetes.NewForConfig(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := kc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
					t.Errorf("getting namespace %q through %s: %v", ns, tc.path, err)
				}
			})
		}
	})

	t.Run("second control plane is independent", func(t *testing.T) {
		if a.APIServerURL == b.APIServerURL || a.EtcdURL == b.EtcdURL || a.Dir == b.Dir {
			t.Fatalf("control planes share an address or dir: %+v / %+v", a, b)
		}
		_, err := b.AdminClient().CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("namespace %q of the first control plane in the second: err = %v, want NotFound", ns, err)
		}
	})

	t.Run("controllers", func(t *testing.T) {
		testControllers(t, b)
	})

	// PodGroups are served only with GenericWorkloadAPIServerFlags.
	t.Run("podgroups served", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			plane  *controlplane.ControlPlane
			served bool
		}{
			{"defaults", a, false},
			{"GenericWorkloadAPIServerFlags", b, true},
		} {
			_, err := tc.plane.AdminClient().SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
			if tc.served && err != nil || !tc.served && !apierrors.IsNotFound(err) {
				t.Errorf("%s: list PodGroups: err = %v, want served %t", tc.name, err, tc.served)
			}
		}
	})

	// Controllers started later on the first, which has none; one is
	// stopped here, the other left for the control plane's Stop below.
	var late []*controlplane.ControllerManager
	t.Run("controller manager started later", func(t *testing.T) {
		for range 2 {
			m, err := a.StartControllerManager(ctx, []string{controlplane.PersistentVolumeBinderController}, nil)
			if err != nil {
				t.Fatalf("StartControllerManager: %v", err)
			}
			late = append(late, m)
		}
		if late[0].Log == late[1].Log || late[0].URL == late[1].URL {
			t.Errorf("two managers share a log or an address: %+v / %+v", late[0], late[1])
		}
		// The binder binds a claim to the volume made for it.
		const name = "late-binder"
		pv := frameworktest.MakePV(ns+"-"+name).CSI("csi.example.com", name).Obj()
		pv.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
		pv.Status = v1.PersistentVolumeStatus{}
		pvc := frameworktest.MakePVC(ns, name).Class("").Obj()
		pvc.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
		pvc.Status = v1.PersistentVolumeClaimStatus{}
		createPV(t, client, pv)
		createPVC(t, client, pvc)
		waitPVC(t, client, ns, name, func(c *v1.PersistentVolumeClaim) bool { return c.Status.Phase == v1.ClaimBound })

		pid := late[0].Pid()
		if err := late[0].Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("kill(%d, 0) after Stop = %v, want ESRCH", pid, err)
		}
		if _, err := a.StartControllerManager(ctx, nil, nil); err == nil {
			t.Error("StartControllerManager without controllers: no error")
		}
	})

	t.Run("restarts keep the state", func(t *testing.T) {
		// A client made before the restarts keeps working after them:
		// same address, same serving certificate, same token.
		if err := a.RestartAPIServer(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("after the API server restarted: %v", err)
		}
		pidsBefore := a.PIDs()
		if err := a.StopEtcd(); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := client.CoreV1().Namespaces().Get(short, ns, metav1.GetOptions{})
		cancel()
		if err == nil {
			t.Error("a read with etcd stopped succeeded")
		}
		if err := a.StartEtcd(ctx); err != nil {
			t.Fatal(err)
		}
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return err == nil, nil
		}); err != nil {
			t.Errorf("namespace after etcd restarted: %v", err)
		}
		if pids := a.PIDs(); pids[0] == pidsBefore[0] {
			t.Errorf("etcd's pid %d did not change", pids[0])
		}
	})

	t.Run("stop", func(t *testing.T) {
		for i, tc := range []struct {
			cp       *controlplane.ControlPlane
			wantPIDs int
		}{
			{a, 2}, // etcd, kube-apiserver
			{b, 3}, // and kube-controller-manager
		} {
			cp := tc.cp
			pids := cp.PIDs()
			if len(pids) != tc.wantPIDs {
				t.Fatalf("control plane %d: PIDs() = %v, want %d", i, pids, tc.wantPIDs)
			}
			start := time.Now()
			if err := cp.Stop(); err != nil {
				t.Errorf("control plane %d: Stop: %v", i, err)
			}
			t.Logf("control plane %d: stop took %s", i, time.Since(start).Round(time.Millisecond))
			if err := cp.Stop(); err != nil {
				t.Errorf("control plane %d: second Stop: %v", i, err)
			}
			for _, pid := range pids {
				// The negative pid addresses the process group.
				for _, id := range []int{pid, -pid} {
					if err := syscall.Kill(id, 0); !errors.Is(err, syscall.ESRCH) {
						t.Errorf("control plane %d: kill(%d, 0) = %v, want ESRCH", i, id, err)
					}
				}
			}
			if _, err := os.Stat(cp.Dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("control plane %d: dir %q after Stop: %v, want not exist", i, cp.Dir, err)
			}
		}
		for _, m := range late {
			// Stopped by a.Stop when the test above did not.
			if err := syscall.Kill(m.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("kube-controller-manager started later: kill(%d, 0) = %v, want ESRCH", m.Pid(), err)
			}
		}
		for _, log := range []string{b.APIServerLog, b.ControllerManagerLog} {
			if _, err := os.Stat(log); err != nil {
				t.Errorf("log in LogDir after Stop: %v", err)
			}
		}
		if a.ControllerManagerLog != "" || len(a.Controllers) != 0 {
			t.Errorf("control plane without controllers: ControllerManagerLog %q, Controllers %q; want both empty", a.ControllerManagerLog, a.Controllers)
		}
	})
}

func TestStartMissingBinaries(t *testing.T) {
	_, err := controlplane.Start(t.Context(), controlplane.Options{BinDir: t.TempDir()})
	if !errors.Is(err, controlplane.ErrBinaryNotFound) {
		t.Errorf("Start with an empty BinDir: err = %v, want ErrBinaryNotFound", err)
	}
}

// TestStartMissingControllerManager checks that kube-controller-manager is
// looked up, before anything starts, only when controllers are asked for.
func TestStartMissingControllerManager(t *testing.T) {
	// Executables that are never run: resolution fails first.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "kube-controller-manager")
	_, err = controlplane.Start(t.Context(), controlplane.Options{
		EtcdPath: exe, APIServerPath: exe, ControllerManagerPath: missing,
		Controllers: controlplane.StorageControllers(),
	})
	if !errors.Is(err, controlplane.ErrBinaryNotFound) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Start with a missing kube-controller-manager: err = %v, want ErrBinaryNotFound naming %q", err, missing)
	}
}

// TestStartKubeVersionBinaries checks that Options.KubeVersion picks the
// versioned kube-apiserver and kube-controller-manager of the bin directory,
// before anything starts.
func TestStartKubeVersionBinaries(t *testing.T) {
	tests := []struct {
		name string
		// have are the executables in the bin directory.
		have        []string
		version     string
		controllers []string
		// missing is the binary the error must name.
		missing string
	}{
		{"current apiserver is not used", []string{"etcd", "kube-apiserver"}, "1.35", nil, "kube-apiserver-1.35"},
		{"current controller manager is not used", []string{"etcd", "kube-apiserver-1.36", "kube-controller-manager"}, "1.36", controlplane.StorageControllers(), "kube-controller-manager-1.36"},
		{"no version: the current ones", []string{"etcd", "kube-apiserver-1.35"}, "", nil, "kube-apiserver"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range tc.have {
				// Never run: resolution fails first.
				if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			_, err := controlplane.Start(t.Context(), controlplane.Options{BinDir: dir, KubeVersion: tc.version, Controllers: tc.controllers})
			if want := strconv.Quote(filepath.Join(dir, tc.missing)); !errors.Is(err, controlplane.ErrBinaryNotFound) || !strings.Contains(err.Error(), want) {
				t.Errorf("Start: err = %v, want ErrBinaryNotFound naming %q", err, tc.missing)
			}
		})
	}
	t.Run("not a file name", func(t *testing.T) {
		_, err := controlplane.Start(t.Context(), controlplane.Options{BinDir: t.TempDir(), KubeVersion: "../1.35"})
		if err == nil || errors.Is(err, controlplane.ErrBinaryNotFound) {
			t.Errorf("Start with KubeVersion %q: err = %v, want a version error", "../1.35", err)
		}
	})
}

func TestStartInvalidControllers(t *testing.T) {
	tests := []struct {
		name        string
		controllers []string
	}{
		{"empty name", []string{""}},
		{"all", []string{"*"}},
		{"disabled", []string{"-" + controlplane.ResourceClaimController}},
		{"comma", []string{controlplane.PersistentVolumeBinderController + "," + controlplane.ResourceClaimController}},
		{"twice", []string{controlplane.ResourceClaimController, controlplane.ResourceClaimController}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Controllers are checked before anything is started or looked up.
			_, err := controlplane.Start(t.Context(), controlplane.Options{BinDir: t.TempDir(), Controllers: tc.controllers})
			if err == nil || errors.Is(err, controlplane.ErrBinaryNotFound) {
				t.Errorf("Start with controllers %q: err = %v, want a controller error", tc.controllers, err)
			}
		})
	}
}

func TestStartInvalidToken(t *testing.T) {
	tests := []struct {
		name  string
		token controlplane.Token
	}{
		{"no token", controlplane.Token{User: "u"}},
		{"no user", controlplane.Token{Token: "t"}},
		{"comma in group", controlplane.Token{Token: "t", User: "u", Groups: []string{"a,b"}}},
		{"line break", controlplane.Token{Token: "t", User: "u\nv"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Tokens are checked before anything is started or looked up.
			_, err := controlplane.Start(t.Context(), controlplane.Options{BinDir: t.TempDir(), Tokens: []controlplane.Token{tc.token}})
			if err == nil || errors.Is(err, controlplane.ErrBinaryNotFound) {
				t.Errorf("Start with token %+v: err = %v, want a token error", tc.token, err)
			}
		})
	}
}

func quantities(rl v1.ResourceList) map[v1.ResourceName]string {
	m := make(map[v1.ResourceName]string, len(rl))
	for k, q := range rl {
		m[k] = q.String()
	}
	return m
}

func isReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
