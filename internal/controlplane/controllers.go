package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

// Names of kube-controller-manager v1.37 controllers, as its --controllers
// flag and its /healthz checks spell them (`kube-controller-manager --help`
// lists all of them).
const (
	// PersistentVolumeBinderController binds PersistentVolumeClaims to
	// PersistentVolumes and sets both to phase Bound; a claim of a
	// WaitForFirstConsumer class waits for a scheduler to pick a node.
	PersistentVolumeBinderController = "persistentvolume-binder-controller"
	// PersistentVolumeProtectionController removes the
	// kubernetes.io/pv-protection finalizer from a deleted volume once it
	// is no longer Bound.
	PersistentVolumeProtectionController = "persistentvolume-protection-controller"
	// PersistentVolumeClaimProtectionController removes the
	// kubernetes.io/pvc-protection finalizer from a deleted claim once no
	// pod uses it.
	PersistentVolumeClaimProtectionController = "persistentvolumeclaim-protection-controller"
	// EphemeralVolumeController creates the claim "<pod>-<volume>" of each
	// generic ephemeral volume of a pod.
	EphemeralVolumeController = "ephemeral-volume-controller"
	// ResourceClaimController creates the ResourceClaims of a pod's
	// ResourceClaimTemplates and records them in the pod's
	// status.resourceClaimStatuses; it drops deleted and finished pods from
	// a claim's status.reservedFor and deallocates a claim that nobody uses
	// any more.
	ResourceClaimController = "resourceclaim-controller"
	// PodGroupProtectionController removes the
	// scheduling.k8s.io/podgroup-protection finalizer from a deleted
	// PodGroup once no pod that has not terminated names it. It runs only
	// with the GenericWorkload feature gate
	// (GenericWorkloadControllerManagerFlags).
	PodGroupProtectionController = "podgroup-protection-controller"
)

// StorageControllers returns the controllers that make PersistentVolumes
// and their claims behave as in a cluster: claims get bound, generic
// ephemeral volumes get their claims, and the protection finalizers that
// kube-apiserver's admission adds are removed when the objects are
// deleted. Dynamic provisioning needs an external provisioner and is not
// among them.
func StorageControllers() []string {
	return []string{
		PersistentVolumeBinderController,
		PersistentVolumeProtectionController,
		PersistentVolumeClaimProtectionController,
		EphemeralVolumeController,
	}
}

// DRAControllers returns the controllers that dynamic resource allocation
// needs beside a scheduler: only ResourceClaimController. The
// DynamicResourceAllocation feature is GA and on (since v1.34), so no feature
// gate is needed. device-taint-eviction-controller is left out: it evicts
// pods from tainted devices, which a control plane without kubelets and
// drivers has no use for.
//
// Without garbage-collector-controller a claim generated for a pod that is
// deleted stays behind, deallocated and no longer reserved: the
// ResourceClaim controller deletes generated claims only of pods that it
// still sees as done, and leaves those of vanished pods to the garbage
// collector.
func DRAControllers() []string {
	return []string{ResourceClaimController}
}

// GangControllers returns the controllers that PodGroups
// (scheduling.k8s.io/v1beta1) need beside a scheduler: only
// PodGroupProtectionController. kube-apiserver's PodGroupProtection
// admission puts the finalizer scheduling.k8s.io/podgroup-protection on
// every new PodGroup, and without the controller that removes it a deleted
// PodGroup stays Terminating for ever. kube-controller-manager must run
// with GenericWorkloadControllerManagerFlags, and the API server with
// GenericWorkloadAPIServerFlags, or the controller is not built and the
// start times out naming it.
func GangControllers() []string {
	return []string{PodGroupProtectionController}
}

// GenericWorkloadAPIServerFlags returns the flags that make a v1.37
// kube-apiserver serve Workloads and PodGroups (scheduling.k8s.io/v1beta1)
// and accept a PodGroup's spec.schedulingConstraints.topology, for
// Options.ExtraAPIServerFlags. The beta version is off by default and is
// served only with the GenericWorkload feature gate too (beta, off by
// default in v1.37): with the runtime-config alone the group has no
// resources. TopologyAwareWorkloadScheduling (alpha, needs GenericWorkload)
// keeps the API server from dropping spec.schedulingConstraints. With the
// gate on, the built-in system:kube-scheduler role also reads podgroups and
// writes podgroups/status.
//
// Both are list flags that kube-apiserver adds up when given twice, and
// ExtraAPIServerFlags keeps every one given there, so a caller's own
// --runtime-config or --feature-gates beside these adds to them (a key
// given in both takes the later value). They are for v1.37 only: v1.35 and
// v1.36 serve other, alpha versions under the same gate.
func GenericWorkloadAPIServerFlags() []string {
	return []string{
		"--runtime-config=scheduling.k8s.io/v1beta1=true",
		"--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
	}
}

// GenericWorkloadControllerManagerFlags returns the flags that
// kube-controller-manager v1.37 needs to build PodGroupProtectionController,
// for Options.ExtraControllerManagerFlags: the GenericWorkload feature gate.
func GenericWorkloadControllerManagerFlags() []string {
	return []string{"--feature-gates=GenericWorkload=true"}
}

// controllerManagerPollInterval paces the readiness wait of
// kube-controller-manager, which is up within a few seconds of starting.
const controllerManagerPollInterval = 100 * time.Millisecond

// pvClaimBinderSyncPeriod replaces the PV binder's 15s default resync. The
// binder looks for a volume for a pending claim only when the claim
// changes or at a resync, so a test that creates a claim before its volume
// would otherwise wait up to 15s; on the few objects of a local control
// plane a resync is cheap.
const pvClaimBinderSyncPeriod = 2 * time.Second

// validateControllers rejects controller lists that kube-controller-manager
// would misread or that the readiness wait could not check: it waits for
// each named controller, so names must be explicit, without "*" or "-name".
func validateControllers(controllers []string) error {
	seen := map[string]bool{}
	for _, c := range controllers {
		switch {
		case c == "" || c == "*" || strings.HasPrefix(c, "-"):
			return fmt.Errorf("controller %q: name each controller to run explicitly", c)
		case strings.ContainsAny(c, ", \t\r\n"):
			return fmt.Errorf("controller %q: name must not contain commas or spaces", c)
		case seen[c]:
			return fmt.Errorf("controller %q: listed twice", c)
		}
		seen[c] = true
	}
	return nil
}

// startControllerManager starts Options.Controllers' kube-controller-manager,
// the one Start owns, and waits until every one of them has been built.
func (c *ControlPlane) startControllerManager(ctx context.Context, path string, controllers, extraFlags []string) error {
	p, _, err := c.runControllerManager(ctx, path, c.ControllerManagerLog, controllers, extraFlags)
	// Set even on failure: start's cleanup stops it.
	c.controllerManager = p
	return err
}

// ControllerManager is a kube-controller-manager that StartControllerManager
// started on a running control plane. Its exported fields are set by
// StartControllerManager and must not be changed.
type ControllerManager struct {
	// Controllers are the controllers it runs.
	Controllers []string
	// Log is the path of its log.
	Log string
	// URL is its https serving address on loopback, with a self-signed
	// certificate (for /healthz, and /metrics or /debug/pprof when the
	// extra flags allow them).
	URL string

	p *procgroup.Process
}

// Pid returns its process id, also the id of its process group.
func (m *ControllerManager) Pid() int { return m.p.Pid() }

// Stop ends it (SIGTERM, then SIGKILL after a grace period) and waits. It
// is idempotent; the control plane's Stop calls it too.
func (m *ControllerManager) Stop() error { return m.p.Stop(stopGracePeriod) }

// StartControllerManager starts kube-controller-manager with exactly
// controllers on a running control plane, which need not have been started
// with any, and waits, as Start does, until each has been built.
// extraFlags are added to the defaults as Options.ExtraControllerManagerFlags
// are. The binary is found as Start finds it, from the Options the control
// plane was started with.
//
// It is for callers that need controllers for part of a control plane's
// life: hack/bench runs the storage controllers for its volume workload
// only, because their pod informers would cost every other workload CPU.
// The caller stops it with Stop; the control plane's Stop stops it too if
// it is still running then.
func (c *ControlPlane) StartControllerManager(ctx context.Context, controllers, extraFlags []string) (*ControllerManager, error) {
	if len(controllers) == 0 {
		return nil, errors.New("no controllers to run")
	}
	if err := validateControllers(controllers); err != nil {
		return nil, err
	}
	o := c.opts
	o.Controllers = controllers
	bins, err := o.binaries()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.ReadyTimeout)
	defer cancel()

	var errs []error
	for range startAttempts {
		c.mu.Lock()
		if c.stopped {
			c.mu.Unlock()
			return nil, errors.New("control plane stopped")
		}
		c.lateManagers++
		logPath := filepath.Join(c.logDir, fmt.Sprintf("%s-kube-controller-manager-%d.log", filepath.Base(c.Dir), c.lateManagers))
		c.mu.Unlock()

		p, url, err := c.runControllerManager(ctx, bins.controllerManager, logPath, controllers, extraFlags)
		if err == nil {
			m := &ControllerManager{Controllers: slices.Clone(controllers), Log: logPath, URL: url, p: p}
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.stopped {
				// Stop ran meanwhile and did not see it.
				return nil, errors.Join(errors.New("control plane stopped"), m.Stop())
			}
			c.managers = append(c.managers, m)
			return m, nil
		}
		if p != nil {
			err = errors.Join(err, p.Stop(stopGracePeriod))
		}
		if !errors.Is(err, errPortInUse) {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("starting kube-controller-manager: %d attempts lost a port race: %w", startAttempts, errors.Join(errs...))
}

// runControllerManager starts kube-controller-manager with the given
// controllers against the API server, as the admin user, serving on a
// loopback port, with its log in logPath, and waits until every one of
// them has been built. It returns the process (also on a failed wait, for
// the caller to stop) and its serving URL.
func (c *ControlPlane) runControllerManager(ctx context.Context, path, logPath string, controllers, extraFlags []string) (*procgroup.Process, string, error) {
	// Picked now rather than with the other ports: a port held back through
	// the API server's start would be open to others that much longer.
	port, err := procgroup.FreePort()
	if err != nil {
		return nil, "", err
	}
	// Each its own: a later one must not read an earlier one's certificate.
	certDir, err := os.MkdirTemp(c.Dir, "controller-manager-certs-")
	if err != nil {
		return nil, "", fmt.Errorf("creating cert dir: %w", err)
	}
	args := []string{
		"--kubeconfig=" + c.AdminKubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		// One identity for every controller: the admin's. Per-controller
		// service accounts would need the token controller, which needs
		// the service-account signing key and a kubelet-less cluster
		// gains nothing from it.
		"--use-service-account-credentials=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + certDir,
		// The controllers share one client; at the default 20 QPS a test
		// creating a few hundred claims would measure the limiter.
		"--kube-api-qps=" + strconv.Itoa(clientQPS),
		"--kube-api-burst=" + strconv.Itoa(clientBurst),
		"--pvclaimbinder-sync-period=" + pvClaimBinderSyncPeriod.String(),
		"--profiling=false",
		"-v=1",
	}
	args = withFlags(args, extraFlags)
	p, err := procgroup.Start("kube-controller-manager", path, args, logPath)
	if err != nil {
		return nil, "", err
	}

	// Like kube-apiserver, it writes its self-signed serving cert (and
	// the CA after it) into --cert-dir before it listens.
	certFile := filepath.Join(certDir, "kube-controller-manager.crt")
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	var hc *http.Client
	defer func() {
		if hc != nil {
			hc.CloseIdleConnections()
		}
	}()
	err = poll(ctx, p, controllerManagerPollInterval, func(ctx context.Context) error {
		if hc == nil {
			ca, err := os.ReadFile(certFile)
			if err != nil {
				return fmt.Errorf("reading serving cert: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(ca) {
				return fmt.Errorf("no certificate in %q yet", certFile)
			}
			hc = &http.Client{
				Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{RootCAs: pool}},
				Timeout:   5 * time.Second,
			}
		}
		return controllersBuilt(ctx, hc, url+"/healthz?verbose", controllers)
	})
	return p, url, err
}

// controllersBuilt returns nil once /healthz answers 200 with a passing
// check for each controller. /healthz alone answers 200 as soon as the
// server listens, before any controller exists; kube-controller-manager
// adds a check named after each controller once it has built them all,
// just before it starts their informers, so an object created after that
// is in the informers' first list or watch. (There is no endpoint that
// says the informers have synced.) A controller that is listed but
// disabled, say by a feature gate, never gets a check, and the wait times
// out naming it.
func controllersBuilt(ctx context.Context, hc *http.Client, url string, controllers []string) error {
	body, err := getBody(ctx, hc, url, "")
	if err != nil {
		return err
	}
	var missing []string
	for _, name := range controllers {
		if !strings.Contains(body, "[+]"+name+" ok") {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no passing health check yet for %q", missing)
	}
	return nil
}
