package e2e

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/deploy"
	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

// manifestsDir holds the manifests users copy to run kube-scheduler,
// exactly as upstream writes them but for the image (each file's header
// says where it comes from).
var manifestsDir = filepath.Join("testdata", "manifests")

// manifestImage is the image the manifests name instead of kube-scheduler's:
// yardmaster's, as `make image` and `make image-tarball` tag it.
const manifestImage = "yardmaster:dev"

// imageTarballEnv names a tarball `make image-tarball` wrote; without it
// the test builds the image with hack/image, as that target does.
const imageTarballEnv = "YARDMASTER_IMAGE_TARBALL"

// hackImageDir is hack/image, the module that builds the image.
var hackImageDir = filepath.Join("..", "..", "hack", "image")

// otherScheduler is a scheduler no manifest runs: its pod must stay.
const otherScheduler = "some-other-scheduler"

// TestKubeSchedulerManifests runs the manifests users copy to run a
// scheduler, written for kube-scheduler, with only the image changed to
// yardmaster's: the Kubernetes documentation's second scheduler (a
// Deployment calling /usr/local/bin/kube-scheduler --config, its
// ServiceAccount, RBAC and ConfigMap) and kubeadm's static pod (calling
// kube-scheduler through PATH with kubeadm's flags and
// /etc/kubernetes/scheduler.conf).
//
// The test plays the API client (kubectl apply of every object that is
// not the workload) and the kubelet and container runtime of the pod:
// the image is yardmaster's real image (the tarball hack/image builds),
// unpacked as the pod's root file system; the volumes are materialised
// (a configMap volume from the applied ConfigMap, the service account's
// token and CA at /var/run/secrets/kubernetes.io/serviceaccount, a
// hostPath as the host file kubeadm writes) and bind-mounted at the paths
// the manifest names, in a mount and PID namespace of the pod's own; the
// command runs as the image's user, resolved through the image's PATH,
// with the environment the kubelet gives (the image's, and
// KUBERNETES_SERVICE_HOST/PORT). Then the probes the manifest declares
// must answer 200 over HTTPS, a pod with the scheduler's name must be
// bound, and leader election must do what the flags say.
//
// It needs root (mount namespaces, chroot, setuid) and skips without.
func TestKubeSchedulerManifests(t *testing.T) {
	requirePodNamespaces(t)
	img := loadManifestImage(t)
	for _, tc := range []struct {
		name, file string
		// schedulerName is the name the running scheduler answers to: a
		// pod naming it is bound.
		schedulerName string
		// lease is the Lease the scheduler must hold in kube-system; empty
		// when its leader election is off, and then neither
		// schedulerName's Lease nor kube-scheduler's may appear.
		lease string
	}{
		{
			// The file's profile; leaderElection.leaderElect: false in it.
			name:          "kubernetes documentation's second scheduler",
			file:          "my-scheduler.yaml",
			schedulerName: "my-scheduler",
		},
		{
			// No --config, and run as kube-scheduler: kube-scheduler's
			// default profile and Lease names (docs/reliability.md), so
			// that the static pod replaces kube-scheduler. The identity of
			// kubeadm's scheduler.conf, system:kube-scheduler, may take
			// that Lease (the bootstrap Role
			// system::leader-locking-kube-scheduler in kube-system).
			name:          "kubeadm's static pod",
			file:          "kube-scheduler.yaml",
			schedulerName: v1.DefaultSchedulerName,
			lease:         config.KubeSchedulerLease,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			leases := e.client.CoordinationV1().Leases(metav1.NamespaceSystem)
			if tc.lease != "" {
				// Before the container starts, and, registered before
				// its stop, after it is stopped (a running leader would
				// make the Lease again).
				if err := ignoreNotFound(leases.Delete(e.ctx, tc.lease, metav1.DeleteOptions{})); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					if err := ignoreNotFound(leases.Delete(ctx, tc.lease, metav1.DeleteOptions{})); err != nil {
						t.Errorf("cleanup Lease: %v", err)
					}
				})
			}
			objs := readManifest(t, tc.file)
			pod := e.applyManifest(objs)
			proc, probes := e.runPod(img, pod)

			// The probes the manifest declares, as the kubelet makes them.
			for _, p := range probes {
				waitProbe(t, proc, p)
			}

			// A pod naming the scheduler is bound, to the only node it
			// may go to (the shared control plane has other tests'
			// nodes). A pod of another scheduler, created before it, is
			// left alone: yardmaster answers to its profiles' names only.
			node := e.addNode(e.node("n1").Capacity("4", "8Gi", 110))
			onNode := map[string]string{testLabel: e.ns}
			e.createPod(e.pod("not-mine").SchedulerName(otherScheduler).NodeSelector(onNode))
			e.createPod(e.pod("p").SchedulerName(tc.schedulerName).NodeSelector(onNode))
			bound := e.waitBoundOrLog(proc, 60*time.Second, "p")
			if bound["p"] != node.Name {
				t.Errorf("pod bound to %s, want %s", bound["p"], node.Name)
			}
			notMine, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "not-mine", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if notMine.Spec.NodeName != "" {
				t.Errorf("the pod of %s was bound to %s", otherScheduler, notMine.Spec.NodeName)
			}

			if tc.lease == "" {
				for _, name := range []string{tc.schedulerName, config.KubeSchedulerLease} {
					if l, err := leases.Get(e.ctx, name, metav1.GetOptions{}); err == nil {
						t.Errorf("leader election is off, but Lease kube-system/%s exists (holder %v)", name, l.Spec.HolderIdentity)
					}
				}
				return
			}
			l, err := leases.Get(e.ctx, tc.lease, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("--leader-elect=true, but Lease kube-system/%s: %v", tc.lease, err)
			}
			if h := l.Spec.HolderIdentity; h == nil || *h == "" {
				t.Errorf("Lease kube-system/%s has no holder", tc.lease)
			}
		})
	}
}

// requirePodNamespaces skips the test unless it can make a pod's private
// mount and PID namespaces and change its root and user: it needs root
// and util-linux's unshare.
func requirePodNamespaces(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the pod's root file system and volumes are bind mounts in a mount namespace of its own (CI runs as root)")
	}
	for _, tool := range []string{"unshare", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	if out, err := exec.Command("unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private", "true").CombinedOutput(); err != nil {
		t.Skipf("cannot make mount and PID namespaces (unshare --mount --pid): %v\n%s", err, out)
	}
}

// manifestImageConfig is what the pod takes from the image: its files and
// the parts of its config a container runtime uses.
type manifestImageConfig struct {
	// layers are the image's layers, bottom first, each a tar stream
	// (gzip or not).
	layers [][]byte
	user   string
	env    []string
	wd     string
}

// loadManifestImage returns the image the manifests name: the tarball of
// $YARDMASTER_IMAGE_TARBALL, else one hack/image builds now from a static
// yardmaster, as `make image-tarball` does.
func loadManifestImage(t *testing.T) *manifestImageConfig {
	t.Helper()
	tarball := os.Getenv(imageTarballEnv)
	if tarball == "" {
		dir := t.TempDir()
		bin := filepath.Join(dir, "yardmaster")
		build := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/yardmaster-io/yardmaster/cmd/yardmaster")
		// Static, as the image requires (hack/image refuses anything else).
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build yardmaster: %v\n%s", err, out)
		}
		tarball = filepath.Join(dir, "image.tar")
		run := exec.Command("go", "run", ".", "-binary", bin, "-ca-certs", "", "-tag", manifestImage, "-out", tarball)
		run.Dir = hackImageDir
		if out, err := run.CombinedOutput(); err != nil {
			t.Fatalf("hack/image: %v\n%s", err, out)
		}
	}
	img, err := readImageTarball(tarball, manifestImage)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// readImageTarball reads the image tagged tag from a `docker save`
// tarball (manifest.json, the config, the layers).
func readImageTarball(path, tag string) (*manifestImageConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if entries[h.Name], err = io.ReadAll(tr); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, h.Name, err)
		}
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil {
		return nil, fmt.Errorf("%s: manifest.json: %w", path, err)
	}
	for _, m := range manifest {
		if !slices.Contains(m.RepoTags, tag) {
			continue
		}
		var cf struct {
			Config struct {
				User       string
				Env        []string
				WorkingDir string
			} `json:"config"`
		}
		if err := json.Unmarshal(entries[m.Config], &cf); err != nil {
			return nil, fmt.Errorf("%s: config %s: %w", path, m.Config, err)
		}
		img := &manifestImageConfig{user: cf.Config.User, env: cf.Config.Env, wd: cf.Config.WorkingDir}
		for _, l := range m.Layers {
			data, ok := entries[l]
			if !ok {
				return nil, fmt.Errorf("%s: no layer %s", path, l)
			}
			img.layers = append(img.layers, data)
		}
		return img, nil
	}
	return nil, fmt.Errorf("%s holds no image tagged %s, the image the manifests name (make image-tarball IMAGE=%s)", path, tag, tag)
}

// unpack writes the image's file system under root, as a container
// runtime makes a container's root file system: modes, owners and
// symlinks as the layers have them.
func (img *manifestImageConfig) unpack(root string) error {
	for i, layer := range img.layers {
		var r io.Reader = bytes.NewReader(layer)
		if bytes.HasPrefix(layer, []byte{0x1f, 0x8b}) {
			gz, err := gzip.NewReader(r)
			if err != nil {
				return fmt.Errorf("layer %d: %w", i, err)
			}
			r = gz
		}
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("layer %d: %w", i, err)
			}
			name := path.Clean(strings.TrimPrefix(h.Name, "/"))
			if !filepath.IsLocal(name) || strings.HasPrefix(path.Base(name), ".wh.") {
				return fmt.Errorf("layer %d: %q: not a plain path in the root file system (whiteouts are not expected in a one-layer image)", i, h.Name)
			}
			dst := filepath.Join(root, name)
			mode := h.FileInfo().Mode() & (os.ModePerm | os.ModeSticky | os.ModeSetuid | os.ModeSetgid)
			switch h.Typeflag {
			case tar.TypeDir:
				if err := os.MkdirAll(dst, 0o755); err != nil {
					return err
				}
			case tar.TypeReg:
				if err := os.WriteFile(dst, nil, 0o600); err != nil {
					return err
				}
				f, err := os.OpenFile(dst, os.O_WRONLY|os.O_TRUNC, 0)
				if err != nil {
					return err
				}
				_, err = io.Copy(f, tr)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return err
				}
			case tar.TypeSymlink:
				if err := os.Symlink(h.Linkname, dst); err != nil {
					return err
				}
				if err := os.Lchown(dst, h.Uid, h.Gid); err != nil {
					return err
				}
				continue
			default:
				return fmt.Errorf("layer %d: %q: unexpected entry type %q", i, h.Name, h.Typeflag)
			}
			if err := os.Lchown(dst, h.Uid, h.Gid); err != nil {
				return err
			}
			// After the chown, which clears set-id bits.
			if err := os.Chmod(dst, mode); err != nil {
				return err
			}
		}
	}
	return nil
}

// readManifest decodes a file of manifestsDir, every document of it.
func readManifest(t *testing.T, file string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(manifestsDir, file))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := deploy.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return objs
}

// applyManifest creates every object of objs but the workload, as
// `kubectl apply -f` would, deleting them when the test ends, and returns
// the workload's pod: a Deployment's template, or the static pod.
func (e *env) applyManifest(objs []runtime.Object) *v1.Pod {
	e.t.Helper()
	var pod *v1.Pod
	for _, o := range objs {
		var err error
		var del func(context.Context) error
		ctx := e.ctx
		core, rbac := e.client.CoreV1(), e.client.RbacV1()
		switch o := o.(type) {
		case *appsv1.Deployment:
			pod = &v1.Pod{ObjectMeta: o.Spec.Template.ObjectMeta, Spec: o.Spec.Template.Spec}
			pod.Namespace = o.Namespace
			continue
		case *v1.Pod:
			pod = o
			continue
		case *v1.ServiceAccount:
			_, err = core.ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			del = func(ctx context.Context) error {
				return core.ServiceAccounts(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			}
		case *v1.ConfigMap:
			_, err = core.ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			del = func(ctx context.Context) error {
				return core.ConfigMaps(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			}
		case *rbacv1.ClusterRoleBinding:
			_, err = rbac.ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			del = func(ctx context.Context) error {
				return rbac.ClusterRoleBindings().Delete(ctx, o.Name, metav1.DeleteOptions{})
			}
		case *rbacv1.RoleBinding:
			_, err = rbac.RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			del = func(ctx context.Context) error {
				return rbac.RoleBindings(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			}
		default:
			e.t.Fatalf("the manifest has a %T, which the test does not apply", o)
		}
		if err != nil {
			e.t.Fatalf("create %T: %v", o, err)
		}
		e.t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := ignoreNotFound(del(ctx)); err != nil {
				e.t.Errorf("cleanup %T: %v", o, err)
			}
		})
	}
	if pod == nil || len(pod.Spec.Containers) != 1 {
		e.t.Fatalf("the manifest has no workload with one container (pod %v)", pod)
	}
	return pod
}

// podProbe is one HTTP probe of the container, its port resolved.
type podProbe struct {
	kind string
	get  v1.HTTPGetAction
	port int
}

// mount is one bind mount into the container's root file system.
type mount struct {
	source, target string
	readOnly       bool
}

// runPod runs the pod's container from img as a kubelet and container
// runtime would and returns the process (killed with its process group
// when the test ends) and the container's HTTP probes.
func (e *env) runPod(img *manifestImageConfig, pod *v1.Pod) (*procgroup.Process, []podProbe) {
	e.t.Helper()
	c := pod.Spec.Containers[0].DeepCopy()
	if c.Image != manifestImage {
		e.t.Fatalf("the manifest's image is %s, want %s: only the image is changed", c.Image, manifestImage)
	}
	if len(c.Command) == 0 || len(c.Args) > 0 {
		e.t.Fatalf("command %v, args %v: the manifests run kube-scheduler through command alone", c.Command, c.Args)
	}
	dir := e.t.TempDir()
	root := filepath.Join(dir, "rootfs")
	if err := img.unpack(root); err != nil {
		e.t.Fatalf("unpack the image: %v", err)
	}

	probes := e.containerPort(pod, c)

	// The command's file, as the runtime finds it: an absolute path, or a
	// name looked up in the image's PATH. It must be in the image.
	env := append([]string(nil), img.env...)
	if !imageHasCommand(root, env, c.Command[0]) {
		e.t.Fatalf("command %q: the image has no such executable (PATH in %v)", c.Command[0], env)
	}

	// The kubelet's environment: the image's, the service variables of
	// the API server's Service (the loopback address the API server
	// serves on here; a cluster gives the Service's ClusterIP), the
	// container's own.
	apiURL, err := url.Parse(e.plane.APIServerURL)
	if err != nil {
		e.t.Fatal(err)
	}
	env = append(env, "KUBERNETES_SERVICE_HOST="+apiURL.Hostname(), "KUBERNETES_SERVICE_PORT="+apiURL.Port())
	for _, ev := range c.Env {
		env = append(env, ev.Name+"="+ev.Value)
	}

	mounts := e.volumeMounts(pod, c, dir)

	// The process: in a mount and PID namespace of its own (so that the
	// bind mounts stay its own, and so that it dies with the namespace's
	// first process, which dies with the test), with /proc and the
	// devices a runtime gives, the volumes at their paths, then, rooted
	// in the image, as the image's user, the command.
	uid, gid, err := numericUser(img.user)
	if err != nil {
		e.t.Fatal(err)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		e.t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("set -e\n")
	fmt.Fprintf(&script, "mount -t proc proc %s\n", shellQuote(filepath.Join(root, "proc")))
	for _, dev := range []string{"null", "zero", "random", "urandom"} {
		mounts = append(mounts, mount{source: "/dev/" + dev, target: "/dev/" + dev})
	}
	for _, m := range mounts {
		dst := filepath.Join(root, m.target)
		if err := makeMountPoint(m.source, dst); err != nil {
			e.t.Fatal(err)
		}
		fmt.Fprintf(&script, "mount --bind %s %s\n", shellQuote(m.source), shellQuote(dst))
		if m.readOnly {
			fmt.Fprintf(&script, "mount -o remount,bind,ro %s\n", shellQuote(dst))
		}
	}
	// Not exec: this shell is the namespace's first process, which the
	// outer unshare kills if the test dies (--kill-child), taking the
	// scheduler with it; the scheduler itself, once it is not root,
	// keeps no parent-death signal.
	// env -i: the container's environment and nothing of the test's.
	script.WriteString("env -i")
	for _, kv := range env {
		script.WriteString(" " + shellQuote(kv))
	}
	fmt.Fprintf(&script, " %s --root=%s --wd=%s --setgid=%d --setuid=%d --", shellQuote(unshare), shellQuote(root), shellQuote(cmp.Or(img.wd, "/")), gid, uid)
	for _, a := range c.Command {
		script.WriteString(" " + shellQuote(a))
	}
	script.WriteString("\nexit $?\n")

	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o555); err != nil {
		e.t.Fatal(err)
	}
	logPath := filepath.Join(dir, c.Name+".log")
	proc, err := procgroup.Start(c.Name, unshare, []string{
		"--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
		"/bin/sh", "-c", script.String(),
	}, logPath)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if err := proc.Stop(5 * time.Second); err != nil {
			e.t.Logf("stop %s: %v", c.Name, err)
		}
		if e.t.Failed() {
			e.t.Logf("end of %s's log:\n%s", c.Name, proc.LogTail(replicaLogTail))
		}
	})
	return proc, probes
}

// containerPort resolves the container's HTTP probes to ports. A pod
// outside the host network has a network namespace of its own in a
// cluster, where the manifest's port (10259) cannot collide; here every
// pod shares the host's. The manifest's port is used unchanged when it is
// free and this test holds it (an flock, so that two runs of this test on
// one host never race for it); otherwise the container gets a free port,
// and the flag (--secure-port) and the probes are rewritten to it,
// consistently, and the log says so.
func (e *env) containerPort(pod *v1.Pod, c *v1.Container) []podProbe {
	e.t.Helper()
	var probes []podProbe
	port := 0
	for _, p := range []struct {
		kind  string
		probe *v1.Probe
	}{{"startup", c.StartupProbe}, {"liveness", c.LivenessProbe}, {"readiness", c.ReadinessProbe}} {
		if p.probe == nil {
			continue
		}
		if p.probe.HTTPGet == nil {
			e.t.Fatalf("%s probe %+v: not an HTTP probe", p.kind, p.probe)
		}
		n, err := resolvePort(c, p.probe.HTTPGet.Port)
		if err != nil {
			e.t.Fatalf("%s probe: %v", p.kind, err)
		}
		if port != 0 && n != port {
			e.t.Fatalf("%s probe on port %d, another on %d: the test expects one port", p.kind, n, port)
		}
		port = n
		probes = append(probes, podProbe{kind: p.kind, get: *p.probe.HTTPGet, port: n})
	}
	if port == 0 {
		e.t.Fatal("the container declares no HTTP probe")
	}
	if holdPort(e.t, port) {
		return probes
	}
	free, err := procgroup.FreePort()
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Logf("port %d is taken on this host (hostNetwork %v); the container gets %d instead: --secure-port=%d and its probes", port, pod.Spec.HostNetwork, free, free)
	c.Command = slices.DeleteFunc(c.Command, func(a string) bool { return strings.HasPrefix(a, "--secure-port") })
	c.Command = append(c.Command, "--secure-port="+strconv.Itoa(free))
	for i := range probes {
		probes[i].port = free
	}
	return probes
}

// holdPort reports whether port is free on every interface, holding it
// for this test (an exclusive flock in the temporary directory, released
// when the test ends) so that another run of the test on this host
// takes another port.
func holdPort(t *testing.T, port int) bool {
	t.Helper()
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), fmt.Sprintf("yardmaster-e2e-port-%d.lock", port)), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return false
	}
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		lock.Close()
		return false
	}
	ln.Close()
	// Closing the file releases the lock; after the container is stopped
	// (cleanups run last added first).
	t.Cleanup(func() { lock.Close() })
	return true
}

// resolvePort resolves a probe's port as the kubelet does: a number, or
// the name of one of the container's ports.
func resolvePort(c *v1.Container, p intstr.IntOrString) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("no container port named %q", p.StrVal)
}

// volumeMounts materialises the container's volumes under dir and returns
// their bind mounts: a configMap volume's keys as files, a hostPath as the
// host file it names, and, for a pod with a ServiceAccount, the token
// volume the ServiceAccount admission plugin adds (it is off on this
// control plane) with a token the kubelet would request.
func (e *env) volumeMounts(pod *v1.Pod, c *v1.Container, dir string) []mount {
	e.t.Helper()
	volumes := map[string]v1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	var mounts []mount
	for _, vm := range c.VolumeMounts {
		v, ok := volumes[vm.Name]
		if !ok {
			e.t.Fatalf("volumeMount %s: no such volume", vm.Name)
		}
		src := filepath.Join(dir, "volumes", v.Name)
		switch {
		case v.ConfigMap != nil:
			cm, err := e.client.CoreV1().ConfigMaps(pod.Namespace).Get(e.ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				e.t.Fatalf("volume %s: %v", v.Name, err)
			}
			if len(v.ConfigMap.Items) > 0 {
				e.t.Fatalf("volume %s: items are not materialised by this test", v.Name)
			}
			files := map[string][]byte{}
			for k, s := range cm.Data {
				files[k] = []byte(s)
			}
			// defaultMode 0644, the API's default.
			writeVolume(e.t, src, files, 0o644)
			// The kubelet mounts configMap volumes read-only.
			mounts = append(mounts, mount{source: src, target: vm.MountPath, readOnly: true})
		case v.HostPath != nil:
			hostFile, ok := e.hostFiles()[v.HostPath.Path]
			if !ok {
				e.t.Fatalf("volume %s: the test knows no host file %s", v.Name, v.HostPath.Path)
			}
			src = hostFile(dir)
			mounts = append(mounts, mount{source: src, target: vm.MountPath, readOnly: vm.ReadOnly})
		default:
			e.t.Fatalf("volume %s: a kind this test does not materialise", v.Name)
		}
	}
	if sa := pod.Spec.ServiceAccountName; sa != "" && (pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken) {
		// The projected kube-api-access volume: a bound token (the
		// kubelet's request: an hour and its 7 seconds), the cluster's CA
		// (kube-root-ca.crt), the namespace.
		tr, err := e.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(e.ctx, sa, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr[int64](3607)},
		}, metav1.CreateOptions{})
		if err != nil {
			e.t.Fatalf("token of ServiceAccount %s/%s: %v", pod.Namespace, sa, err)
		}
		src := filepath.Join(dir, "volumes", "kube-api-access")
		writeVolume(e.t, src, map[string][]byte{
			"token":     []byte(tr.Status.Token),
			"ca.crt":    e.plane.RESTConfig("").TLSClientConfig.CAData,
			"namespace": []byte(pod.Namespace),
		}, 0o644)
		mounts = append(mounts, mount{source: src, target: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true})
	}
	return mounts
}

// hostFiles are the host's files that hostPath volumes of the manifests
// name, each written under dir as the tool that makes it writes it.
func (e *env) hostFiles() map[string]func(dir string) string {
	return map[string]func(string) string{
		// kubeadm's kubeconfig of kube-scheduler: the API server, its CA,
		// and the identity system:kube-scheduler (kubeadm's is a client
		// certificate with that common name and no organisation; here
		// the admin's token impersonates that user, which RBAC then
		// authorizes exactly as that user: the bootstrap bindings of
		// system:kube-scheduler and system:volume-scheduler, and the
		// reader of extension-apiserver-authentication), mode 0600 and
		// owned by root, as kubeadm writes it.
		"/etc/kubernetes/scheduler.conf": func(dir string) string {
			p := filepath.Join(dir, "host", "etc", "kubernetes", "scheduler.conf")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				e.t.Fatal(err)
			}
			cfg := clientcmdapi.NewConfig()
			cfg.Clusters["kubernetes"] = &clientcmdapi.Cluster{Server: e.plane.APIServerURL, CertificateAuthorityData: e.plane.RESTConfig("").TLSClientConfig.CAData}
			cfg.AuthInfos["system:kube-scheduler"] = &clientcmdapi.AuthInfo{Token: e.plane.AdminToken, Impersonate: "system:kube-scheduler"}
			cfg.Contexts["system:kube-scheduler@kubernetes"] = &clientcmdapi.Context{Cluster: "kubernetes", AuthInfo: "system:kube-scheduler"}
			cfg.CurrentContext = "system:kube-scheduler@kubernetes"
			if err := clientcmd.WriteToFile(*cfg, p); err != nil {
				e.t.Fatal(err)
			}
			if err := os.Chmod(p, 0o600); err != nil {
				e.t.Fatal(err)
			}
			return p
		},
	}
}

// writeVolume writes files into a new directory dir with mode.
func writeVolume(t *testing.T, dir string, files map[string][]byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, mode); err != nil {
			t.Fatal(err)
		}
		// WriteFile's mode passes through the umask.
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// makeMountPoint makes dst, in the container's root file system, a mount
// point for source: a directory for a directory, an empty file for a
// file, as a runtime does.
func makeMountPoint(source, dst string) error {
	fi, err := os.Stat(source)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return os.MkdirAll(dst, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// imageHasCommand reports whether the image in root has an executable
// for command: the path itself when absolute, else the first match on the
// image's PATH, each symlink resolved inside root.
func imageHasCommand(root string, env []string, command string) bool {
	candidates := []string{command}
	if !strings.Contains(command, "/") {
		candidates = nil
		for _, kv := range env {
			if p, ok := strings.CutPrefix(kv, "PATH="); ok {
				for _, d := range filepath.SplitList(p) {
					candidates = append(candidates, path.Join(d, command))
				}
			}
		}
	}
	for _, c := range candidates {
		if !path.IsAbs(c) {
			continue
		}
		resolved, err := resolveIn(root, c)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(resolved); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// resolveIn resolves the absolute path p inside root, following symlinks
// as they would resolve with root as /.
func resolveIn(root, p string) (string, error) {
	cur := "/"
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	for hops := 0; len(parts) > 0; {
		part := parts[0]
		parts = parts[1:]
		next := path.Join(cur, part)
		fi, err := os.Lstat(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("%s: too many symlinks", p)
		}
		target, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if !path.IsAbs(target) {
			target = path.Join(cur, target)
		}
		parts = append(strings.Split(strings.TrimPrefix(path.Clean(target), "/"), "/"), parts...)
		cur = "/"
	}
	return filepath.Join(root, cur), nil
}

// numericUser parses an image's "uid:gid" (or "uid", gid then the same).
func numericUser(user string) (uid, gid int, err error) {
	u, g, ok := strings.Cut(user, ":")
	if !ok {
		g = u
	}
	if uid, err = strconv.Atoi(u); err != nil {
		return 0, 0, fmt.Errorf("image user %q: not numeric", user)
	}
	if gid, err = strconv.Atoi(g); err != nil {
		return 0, 0, fmt.Errorf("image user %q: not numeric", user)
	}
	return uid, gid, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// waitProbe waits until probe answers 200, as the kubelet asks: HTTPS
// without verifying the certificate, at the probe's host (the pod's
// address, here loopback: the pod shares the host's network), port and
// path.
func waitProbe(t *testing.T, proc *procgroup.Process, p podProbe) {
	t.Helper()
	scheme := strings.ToLower(string(cmp.Or(p.get.Scheme, v1.URISchemeHTTP)))
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(cmp.Or(p.get.Host, "127.0.0.1"), strconv.Itoa(p.port)), Path: p.get.Path}
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // as the kubelet's probes
	}
	defer client.CloseIdleConnections()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if ended, err := proc.Exited(); ended {
			return false, fmt.Errorf("the container exited: %v", err)
		}
		resp, err := client.Get(u.String())
		if err != nil {
			last = err.Error()
			return false, nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		last = fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(body))
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("%s probe %s: %v (last answer: %s)\n%s", p.kind, u.String(), err, last, proc.LogTail(replicaLogTail))
	}
}

// waitBoundOrLog is waitBound that shows the container's log when the
// pods are not bound.
func (e *env) waitBoundOrLog(proc *procgroup.Process, timeout time.Duration, names ...string) map[string]string {
	e.t.Helper()
	got, err := e.pollBound(timeout, names)
	if err != nil {
		e.t.Fatalf("waiting for pods %v to be bound (got %v): %v\n%s", names, got, err, proc.LogTail(replicaLogTail))
	}
	return got
}
