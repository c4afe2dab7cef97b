package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestReadOnlyClientRefusesWrites(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default"}}`))
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(readOnly(&rest.Config{Host: srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Fatalf("GET refused: %v", err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); !errors.Is(err, errReadOnly) {
		t.Errorf("create: %v, want %v", err, errReadOnly)
	}
	if err := client.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{}); !errors.Is(err, errReadOnly) {
		t.Errorf("delete: %v, want %v", err, errReadOnly)
	}
	if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); !errors.Is(err, errReadOnly) {
		t.Errorf("update status: %v, want %v", err, errReadOnly)
	}
	if diff := cmp.Diff([]string{http.MethodGet}, methods); diff != "" {
		t.Errorf("requests that reached the server (-want +got):\n%s", diff)
	}
}

func TestAsKubectlPlugin(t *testing.T) {
	for argv0, want := range map[string]bool{
		"/usr/local/bin/kubectl-yardmaster": true,
		"kubectl-yardmaster":                true,
		`C:\bin\kubectl-yardmaster.exe`:     false, // filepath.Base on Linux keeps the backslashes
		"kubectl-yardmaster.exe":            true,
		"/usr/local/bin/yardmaster":         false,
		"yardmaster":                        false,
	} {
		if got := asKubectlPlugin(argv0); got != want {
			t.Errorf("%s: %v, want %v", argv0, got, want)
		}
	}
}

const clusterFile = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status:
    allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
    conditions: [{type: Ready, status: "True"}]
- apiVersion: v1
  kind: Node
  metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
  status:
    allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
    conditions: [{type: Ready, status: "True"}]
- apiVersion: v1
  kind: Node
  metadata: {name: gpu, labels: {kubernetes.io/hostname: gpu}}
  spec:
    taints: [{key: gpu, value: "true", effect: NoSchedule}]
  status:
    allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
    conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Pod
metadata: {name: existing, namespace: default}
spec:
  nodeName: n2
  containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: done, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
status: {phase: Succeeded}
`

const webFile = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The cluster: n1 has 2 cpus free (the Succeeded pod does not count), n2
// 1 of 4, gpu is tainted: 2/0.5 + 1/0.5 = 6 replicas of 500m fit.
func TestSimulateFromFile(t *testing.T) {
	cluster := writeFile(t, "cluster.yaml", clusterFile)
	web := writeFile(t, "web.yaml", webFile)
	ctx := context.Background()

	var out bytes.Buffer
	if err := runSimulate(ctx, &out, simulateFlags{clusterFile: cluster, add: []string{web}, capacity: web}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	// After the 4 web pods (2 cpus), 6 - 4 = 2 more fit.
	for _, want := range []string{"4 placed, 0 Pending.", "Capacity: 2 more replicas fit.", "Runs out first: Insufficient cpu (2 of 3 nodes)."} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}

	out.Reset()
	// A pod that stays Pending is the answer ExitPending.
	if err := runSimulate(ctx, &out, simulateFlags{clusterFile: cluster, drain: "n2"}); exitCode(err) != ExitPending {
		t.Fatalf("drain: %v, want exit code %d", err, ExitPending)
	}
	// existing (3 cpus) fits on no node once n2 is cordoned: n1 has 2.
	if !strings.Contains(out.String(), "default/existing  Pending  0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable.") {
		t.Errorf("drain:\n%s", out.String())
	}
}

func TestExpandPods(t *testing.T) {
	path := writeFile(t, "w.yaml", webFile+`---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: x}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: jobs}
spec:
  parallelism: 3
  template:
    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: single}
spec: {containers: [{name: c, image: x}]}
`)
	objs, err := readObjects(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range expandPods(objs, "default") {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	want := []string{"default/web-sim-0", "default/web-sim-1", "default/web-sim-2", "default/web-sim-3",
		"default/db-0", "default/db-1", "jobs/batch-sim-0", "jobs/batch-sim-1", "jobs/batch-sim-2", "/single"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
}

func TestKubectlPluginHelp(t *testing.T) {
	root := kubectlPluginCommand(registry.NewInTree())
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"explain", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kubectl yardmaster explain (NAME | TYPE/NAME) [flags]") {
		t.Errorf("help does not say how kubectl runs it:\n%s", out.String())
	}
}

// One local volume of a WaitForFirstConsumer class, two claims that could
// each take it: simulate reserves it for the first pod, as the scheduler
// does, so the second pod stays Pending instead of being placed on it too.
const volumeClusterFile = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: storage.k8s.io/v1
  kind: StorageClass
  metadata: {name: local}
  provisioner: kubernetes.io/no-provisioner
  volumeBindingMode: WaitForFirstConsumer
- apiVersion: v1
  kind: PersistentVolume
  metadata: {name: pv-n1}
  spec:
    capacity: {storage: 1Gi}
    accessModes: [ReadWriteOnce]
    storageClassName: local
    local: {path: /mnt/disk}
    nodeAffinity:
      required:
        nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]
  status: {phase: Available}
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: data-a, namespace: default}
  spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 1Gi}}}
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: data-b, namespace: default}
  spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 1Gi}}}
`

const volumePodsFile = `apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default}
spec:
  containers: [{name: c, image: x}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data-a}}]
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: default}
spec:
  containers: [{name: c, image: x}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data-b}}]
`

func TestSimulateReservesVolumes(t *testing.T) {
	cluster := writeFile(t, "cluster.yaml", volumeClusterFile)
	pods := writeFile(t, "pods.yaml", volumePodsFile)
	var out bytes.Buffer
	if err := runSimulate(context.Background(), &out, simulateFlags{clusterFile: cluster, add: []string{pods}}); !errors.Is(err, ErrPending) {
		t.Fatalf("%v, want %v", err, ErrPending)
	}
	got := out.String()
	for _, want := range []string{"1 placed, 1 Pending.", "default/a  n1", "default/b  Pending"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// gangFile is a gang of three 1-cpu pods (a Job of parallelism 3 naming
// its PodGroup), with cpu as given.
func gangFile(cpu string) string {
	return `apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, namespace: default}
spec:
  schedulingPolicy: {gang: {minCount: 3}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: default}
spec:
  parallelism: 3
  template:
    spec:
      schedulingGroup: {podGroupName: train}
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: "` + cpu + `"}}}]
`
}

// simulate --capacity of a file with a PodGroup counts copies of the
// group the group cycle places: on clusterFile's 2 + 1 free cpus, one
// gang of three 1-cpu pods, two of three 500m pods; the next copy's
// reason is the group's.
func TestSimulatePodGroupCapacity(t *testing.T) {
	cluster := writeFile(t, "cluster.yaml", clusterFile)
	tests := []struct {
		cpu         string
		want        int
		wantFit     int
		wantMessage string
		wantSummary string
	}{
		// Copy 2: its first member fits nowhere, and 0 + 2 < 3.
		{cpu: "1", want: 1, wantFit: 0, wantMessage: "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining",
			wantSummary: "Would stay Pending: 3 pending pods need 1 cpu each; the cluster has room for none of them: minCount (3) cannot be satisfied"},
		{cpu: "500m", want: 2, wantFit: 0, wantMessage: "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining"},
		// 1.5 cpu: n1 takes one, n2 none; the second member fits nowhere.
		{cpu: "1500m", want: 0, wantFit: 1, wantMessage: "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining",
			wantSummary: "the cluster has room for 1 of them (n1: 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.cpu, func(t *testing.T) {
			gang := writeFile(t, "gang.yaml", gangFile(tc.cpu))
			var out bytes.Buffer
			err := runSimulate(context.Background(), &out, simulateFlags{clusterFile: cluster, capacity: gang, output: outputJSON})
			if err != nil {
				t.Fatal(err)
			}
			var res SimulationResult
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			g := res.CapacityPodGroup
			if res.Capacity == nil || *res.Capacity != tc.want || g == nil {
				t.Fatalf("capacity %v, group %+v; want %d", res.Capacity, g, tc.want)
			}
			if g.Placed || g.Fit != tc.wantFit || g.Pending != 3 || g.MinCount != 3 || !strings.HasPrefix(g.Message, tc.wantMessage) {
				t.Errorf("the copy that does not fit: placed %v, fit %d, pending %d, minCount %d, message %q; want fit %d, message %q",
					g.Placed, g.Fit, g.Pending, g.MinCount, g.Message, tc.wantFit, tc.wantMessage)
			}
			if res.Limit == nil || !strings.Contains(res.Limit.Message, "Insufficient cpu") {
				t.Errorf("limit: %+v", res.Limit)
			}
			if !strings.Contains(g.Summary, tc.wantSummary) {
				t.Errorf("summary %q lacks %q", g.Summary, tc.wantSummary)
			}
			if want := fmt.Sprintf("default/train-%d", tc.want); g.PodGroup != want {
				t.Errorf("copy %q, want %q", g.PodGroup, want)
			}
		})
	}
}
