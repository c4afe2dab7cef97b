package e2e

// Tests against API servers of other versions than the one yardmaster is
// built for, each on a control plane of its own: kube-apiserver and
// kube-controller-manager v1.35 and v1.36 (make compat-binaries builds
// them from hack/tools/kube-<minor>), and v1.37 with resource.k8s.io/v1
// turned off. What yardmaster watches and which of its features act is
// decided from the server's discovery; these tests show it scheduling what
// each server serves, and saying what it turned off, in its log and in
// yardmaster_feature_enabled. They also hold docs/compatibility.md's table
// of what each server serves to the servers' discovery.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// The features decided from discovery that these tests name, as the
// daemon names them in its log and in yardmaster_feature_enabled.
const (
	featureDynamicResources = "DynamicResources"
	featureDeviceTaintRules = "DeviceTaintRules"
)

// featureOff is a feature the daemon must turn off on a server, and the
// API the reason it logs must name: a resource and its group/version.
type featureOff struct {
	name, resource, groupVersion string
}

// deviceTaintRulesOff is off on servers that serve no DeviceTaintRule in
// resource.k8s.io/v1: those before v1.37.
var deviceTaintRulesOff = featureOff{featureDeviceTaintRules, "devicetaintrules", "resource.k8s.io/v1"}

// podGroupsOff is off on servers that serve no scheduling.k8s.io/v1beta1
// PodGroups (before v1.37, or without GenericWorkload), and
// coschedulingOff where scheduler-plugins' PodGroup CRD is not installed.
var (
	podGroupsOff    = featureOff{"PodGroups", "podgroups", "scheduling.k8s.io/v1beta1"}
	coschedulingOff = featureOff{"CoschedulingPodGroups", "podgroups", "scheduling.x-k8s.io/v1alpha1"}
)

// metricFeatureEnabled is the daemon's gauge of the features decided from
// discovery, 1 on and 0 off, labelled feature.
const metricFeatureEnabled = "yardmaster_feature_enabled"

// logFeatureOff is the message of the line the daemon logs at its start
// for each feature it turns off, with the fields feature and reason.
const logFeatureOff = "feature turned off"

// On kube-apiserver v1.35 and v1.36 (with their own
// kube-controller-manager, whose PV binder and ResourceClaim controller
// do their part, and KWOK as the nodes' kubelet), yardmaster schedules
// plain pods, which KWOK then runs, a pod whose WaitForFirstConsumer claim
// it binds to a local volume, and a pod whose claim, made from a template,
// it allocates a device to; and it turns off, saying so, DeviceTaintRules
// (DeviceTaintRule is served in resource.k8s.io/v1 only from v1.37) and
// PodGroups (scheduling.k8s.io/v1beta1 is v1.37's) and scheduler-plugins'
// PodGroups (no CRD), and nothing else: DynamicResources and the storage
// features stay on.
func TestOlderAPIServers(t *testing.T) {
	for _, version := range []string{"1.35", "1.36"} {
		t.Run(version, func(t *testing.T) {
			plane := startPlaneOf(t, controlplane.Options{
				KubeVersion: version,
				Tokens:      identities(),
				KWOK:        true,
				Controllers: append(controlplane.StorageControllers(), controlplane.DRAControllers()...),
			})
			// make compat-binaries stamps the release into each binary.
			v, err := plane.AdminClient().Discovery().ServerVersion()
			if err != nil {
				t.Fatalf("server version: %v", err)
			}
			if !strings.HasPrefix(v.GitVersion, "v"+version+".") {
				t.Fatalf("server version %s, want v%s.x (rebuild: make compat-binaries)", v.GitVersion, version)
			}
			expectServedAsDocumented(t, plane, "v"+version)
			e := newEnvOn(t, plane)
			d, logs := e.startObservedScheduler()
			e.expectFeatures(endpoint(d.HTTPAddr()), logs, []string{featureDynamicResources}, []featureOff{deviceTaintRulesOff, podGroupsOff, coschedulingOff})

			for _, n := range []string{"n0", "n1"} {
				e.addKWOKNode(e.node(n).Capacity("4", "8Gi", 110))
			}
			plain := e.createPlainPods(4)

			vol := &volumeRun{e: e}
			vol.localClass("local")
			vol.localVolume("pv0", "local", "n1", "1Gi")
			vol.volumeClaim("data", "local", "1Gi")
			e.createPod(e.pod("volume").Req("100m", "64Mi").PVC("data"))

			dra := &draRun{e: e, notes: map[string]string{}}
			dra.class("gpu", "")
			dra.slice("n0", gpus(1)...)
			dra.template("gpu", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{dra.request("gpu", "gpu", 1, "")}})
			e.createPod(dra.podOf(draPod{name: "dra", claims: []string{"tmpl:gpu"}}))

			got := e.waitBound(90*time.Second, append(plain, "volume", "dra")...)
			if want := e.ns + "-n1"; got["volume"] != want {
				t.Errorf("volume pod on %s, want %s, the node of its only volume", got["volume"], want)
			}
			if want := e.ns + "-n0"; got["dra"] != want {
				t.Errorf("DRA pod on %s, want %s, the node of the only device", got["dra"], want)
			}
			e.waitClaimBoundTo("data", e.ns+"-pv0")
			e.waitDeviceAllocated("dra", e.ns+"-n0")
			e.waitRunning(plain...)
			e.assertNoOvercommit()
		})
	}
}

// On kube-apiserver v1.37 with resource.k8s.io/v1 turned off
// (--runtime-config), yardmaster turns off DynamicResources and
// DeviceTaintRules, saying so, and nothing else, and still schedules plain
// pods; a pod with a ResourceClaim stays Pending with a FailedScheduling
// event that says why.
func TestWithoutResourceAPI(t *testing.T) {
	plane := startPlaneOf(t, controlplane.Options{
		Tokens:      identities(),
		Controllers: controlplane.StorageControllers(),
		ExtraAPIServerFlags: []string{
			"--runtime-config=resource.k8s.io/v1=false",
			// The Node authorizer watches ResourceSlices in resource.k8s.io/v1
			// whenever DynamicResourceAllocation is on, which it always is
			// since v1.35 (locked): with it the server never becomes ready.
			// Nothing here authenticates as a node.
			"--authorization-mode=RBAC",
		},
	})
	expectServedAsDocumented(t, plane, columnWithoutResourceAPI)
	e := newEnvOn(t, plane)
	d, logs := e.startObservedScheduler()
	e.expectFeatures(endpoint(d.HTTPAddr()), logs, nil, []featureOff{
		{featureDynamicResources, "resourceclaims", "resource.k8s.io/v1"},
		deviceTaintRulesOff, podGroupsOff, coschedulingOff,
	})

	for _, n := range []string{"n0", "n1"} {
		e.addNode(e.node(n).Capacity("4", "8Gi", 110))
	}
	// The claim cannot exist: the server serves no ResourceClaim.
	dra := &draRun{e: e}
	e.createPod(dra.podOf(draPod{name: "dra", claims: []string{"gpu"}}))
	plain := e.createPlainPods(4)

	e.waitBound(60*time.Second, plain...)
	msg := e.waitFailedScheduling("dra", "resource.k8s.io/v1")
	t.Logf("the DRA pod's FailedScheduling: %q", msg)
	e.expectPending("dra", 2*time.Second)
}

// kube-apiserver v1.37 serves what docs/compatibility.md says it serves:
// with its defaults (on a control plane of the test's own), and with the
// GenericWorkload flags, as the API server the package's tests share.
func TestCurrentAPIServerServesAsDocumented(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		expectServedAsDocumented(t, startPlaneOf(t, controlplane.Options{}), "v1.37")
	})
	t.Run("GenericWorkload", func(t *testing.T) {
		expectServedAsDocumented(t, cp, columnGenericWorkload)
	})
}

// compatibilityDoc is the document whose table expectServedAsDocumented
// reads, relative to this package.
const compatibilityDoc = "../../docs/compatibility.md"

// compatibilityHeader is the header row of its table of served APIs.
var compatibilityHeader = []string{"group/version", "resource", "yardmaster reads it for", "v1.35", "v1.36", "v1.37", columnWithoutResourceAPI, columnGenericWorkload}

// columnWithoutResourceAPI is the table's column of TestWithoutResourceAPI's
// server.
const columnWithoutResourceAPI = "v1.37, resource.k8s.io/v1=false"

// columnGenericWorkload is the table's column of the shared server, started
// with controlplane.GenericWorkloadAPIServerFlags.
const columnGenericWorkload = "v1.37, GenericWorkload"

// expectServedAsDocumented checks that plane's API server serves each
// resource of docs/compatibility.md's table whose cell in column is "yes",
// and none whose cell is "no".
func expectServedAsDocumented(t *testing.T, plane *controlplane.ControlPlane, column string) {
	t.Helper()
	b, err := os.ReadFile(compatibilityDoc)
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(compatibilityHeader, column)
	rows := markdownTable(string(b), compatibilityHeader)
	if col < 0 || len(rows) == 0 {
		t.Fatalf("%s has no table with the header %q and a column %q", compatibilityDoc, compatibilityHeader, column)
	}
	_, lists, err := plane.AdminClient().Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	served := map[string]bool{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			served[l.GroupVersion+" "+r.Name] = true
		}
	}
	for _, row := range rows {
		api := strings.Trim(row[0], "`") + " " + strings.Trim(row[1], "`")
		var want bool
		switch row[col] {
		case "yes":
			want = true
		case "no":
		default:
			t.Errorf("%s: cell %q of %s: want yes or no", compatibilityDoc, row[col], api)
			continue
		}
		if served[api] != want {
			t.Errorf("%s says %s of %s is served: %s; the server says %t", compatibilityDoc, column, api, row[col], served[api])
		}
	}
}

// markdownTable returns the cells of the rows of the first Markdown table
// in text whose header row is header, without the header and separator
// rows; rows with another number of cells are left out.
func markdownTable(text string, header []string) [][]string {
	var rows [][]string
	in := false
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if in {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case !in && slices.Equal(cells, header):
			in = true
		case in && strings.HasPrefix(cells[0], "---"):
		case in && len(cells) == len(header):
			rows = append(rows, cells)
		}
	}
	return rows
}

// startPlaneOf starts a control plane of its own for the test, stopped
// when the test ends. A test of a version whose binaries are not built is
// skipped, except under CI, where make test has built them.
func startPlaneOf(t *testing.T, opts controlplane.Options) *controlplane.ControlPlane {
	t.Helper()
	opts.LogDir = t.TempDir()
	start := time.Now()
	plane, err := controlplane.Start(context.Background(), opts)
	if errors.Is(err, controlplane.ErrBinaryNotFound) && opts.KubeVersion != "" && os.Getenv("CI") != "true" {
		t.Skipf("skipping: kube-apiserver and kube-controller-manager %s are not built (%v); run make compat-binaries", opts.KubeVersion, err)
	}
	if err != nil {
		t.Fatalf("start control plane (version %q): %v", opts.KubeVersion, err)
	}
	t.Logf("control plane (version %q) ready in %s", opts.KubeVersion, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			for _, log := range []string{plane.APIServerLog, plane.ControllerManagerLog, plane.KWOKLog} {
				if log != "" {
					t.Logf("end of %s:\n%s", log, fileTail(log, replicaLogTail))
				}
			}
		}
		if err := plane.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	return plane
}

// fileTail returns up to n bytes of the end of the file at path.
func fileTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	off := max(0, fi.Size()-n)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil {
		return err.Error()
	}
	return string(b)
}

// startObservedScheduler is startScheduler serving /metrics on a loopback
// port chosen at run time, its log also kept for the test to read.
func (e *env) startObservedScheduler() (*app.Daemon, *observer.ObservedLogs) {
	e.t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	logger := zap.New(zapcore.NewTee(zaptest.NewLogger(e.t).Core(), core))
	o := app.Options{
		RESTConfig:      e.plane.RESTConfig(e.plane.AdminToken),
		HTTPBindAddress: "127.0.0.1:0",
		Overrides: config.Overrides{
			SchedulerName: ptr(e.scheduler),
			LeaderElect:   ptr(false),
			QPS:           ptr[float32](500),
			Burst:         ptr(1000),
		},
	}
	d, err := app.NewDaemon(o, logger)
	if err != nil {
		e.t.Fatalf("new daemon: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("scheduler exited: %v", err)
		}
	})
	return d, logs
}

// expectFeatures checks what the daemon says it decided from discovery:
// the features of off, and no others, are turned off: each has
// yardmaster_feature_enabled 0 and exactly one "feature turned off" line
// in the log, whose reason names the API the server does not serve; every
// other feature of the metric is 1, those of on among them.
func (e *env) expectFeatures(ep endpoint, logs *observer.ObservedLogs, on []string, off []featureOff) {
	e.t.Helper()
	want := map[string]float64{}
	for _, f := range on {
		want[f] = 1
	}
	for _, f := range off {
		want[f.name] = 0
	}
	// The metric is set before the daemon serves: the first scrape that
	// has the family has every feature.
	var got map[string]float64
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		s, err := ep.scrape()
		if err != nil || s[metricFeatureEnabled] == nil {
			return false, nil
		}
		got = map[string]float64{}
		for _, m := range s[metricFeatureEnabled].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "feature" {
					got[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
		return true, nil
	})
	if err != nil {
		e.t.Fatalf("no %s on %s/metrics: %v", metricFeatureEnabled, ep, err)
	}
	for f := range got {
		if _, named := want[f]; !named {
			want[f] = 1
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		e.t.Errorf("%s (-want +got):\n%s", metricFeatureEnabled, diff)
	}

	reasons := map[string][]string{}
	for _, entry := range logs.FilterMessage(logFeatureOff).All() {
		fields := entry.ContextMap()
		name := fmt.Sprint(fields["feature"])
		reasons[name] = append(reasons[name], fmt.Sprint(fields["reason"]))
	}
	for _, f := range off {
		r := reasons[f.name]
		delete(reasons, f.name)
		if len(r) != 1 {
			e.t.Errorf("%d lines %q for %s (reasons %q), want 1", len(r), logFeatureOff, f.name, r)
			continue
		}
		if !strings.Contains(r[0], f.resource) || !strings.Contains(r[0], f.groupVersion) {
			e.t.Errorf("%q for %s: reason %q, want it to name %s of %s", logFeatureOff, f.name, r[0], f.resource, f.groupVersion)
		}
		e.t.Logf("%s turned off: %s", f.name, r[0])
	}
	for f, r := range reasons {
		e.t.Errorf("%q for %s (reasons %q), which the server serves", logFeatureOff, f, r)
	}
}

// createPlainPods creates n pods of 500m and 128Mi, which any of the
// tests' nodes holds, and returns their names.
func (e *env) createPlainPods(n int) []string {
	e.t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("plain-%d", i)
		e.createPod(e.pod(names[i]).Req("500m", "128Mi"))
	}
	return names
}

// waitClaimBoundTo waits until the PV binder has bound claim name to
// volume: both phase Bound, the claim's bind-completed annotation.
func (e *env) waitClaimBoundTo(name, volume string) {
	e.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pv, err := e.client.CoreV1().PersistentVolumes().Get(ctx, volume, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = fmt.Sprintf("claim %s volume %q, volume %s", c.Status.Phase, c.Spec.VolumeName, pv.Status.Phase)
		return c.Spec.VolumeName == volume && c.Status.Phase == v1.ClaimBound &&
			c.Annotations["pv.kubernetes.io/bind-completed"] != "" && pv.Status.Phase == v1.VolumeBound, nil
	})
	if err != nil {
		e.t.Fatalf("claim %s never bound to volume %s (last: %s): %v", name, volume, last, err)
	}
}

// waitDeviceAllocated waits until the claim the ResourceClaim controller
// made for pod has an allocation on node, reserved for the pod.
func (e *env) waitDeviceAllocated(pod, node string) {
	e.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := e.client.CoreV1().Pods(e.ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if len(p.Status.ResourceClaimStatuses) != 1 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
			last = fmt.Sprintf("pod's claim statuses %v", p.Status.ResourceClaimStatuses)
			return false, nil
		}
		name := *p.Status.ResourceClaimStatuses[0].ResourceClaimName
		c, err := e.client.ResourceV1().ResourceClaims(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		a := c.Status.Allocation
		last = fmt.Sprintf("claim %s: allocation %v, reserved for %v", name, a, c.Status.ReservedFor)
		if a == nil || len(a.Devices.Results) != 1 || a.Devices.Results[0].Pool != node || len(c.Status.ReservedFor) != 1 {
			return false, nil
		}
		return c.Status.ReservedFor[0].UID == p.UID, nil
	})
	if err != nil {
		e.t.Fatalf("pod %s's claim never allocated on %s (last: %s): %v", pod, node, last, err)
	}
}

// waitRunning waits until KWOK runs every named pod.
func (e *env) waitRunning(names ...string) {
	e.t.Helper()
	phases := map[string]v1.PodPhase{}
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			p, err := e.client.CoreV1().Pods(e.ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			phases[n] = p.Status.Phase
		}
		for _, ph := range phases {
			if ph != v1.PodRunning {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		e.t.Fatalf("pods not all Running (phases %v): %v", phases, err)
	}
}
