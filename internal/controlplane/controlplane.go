// Package controlplane starts and stops a real local Kubernetes control plane
// (etcd, kube-apiserver and, when asked for, kube-controller-manager with a
// chosen few controllers and KWOK as the kubelet of simulated nodes) for
// e2e tests, the demo and benchmarks.
//
// The model: Start owns two to four child processes, each in its own
// process group, on loopback ports chosen at run time, with all state (etcd
// data, serving certificates, keys, token file, kubeconfig) in one
// temporary directory. Stop kills the process groups, the clients (kwok,
// kube-controller-manager) first, and removes that directory. Nothing is
// tied to the context passed to Start beyond the wait for readiness: a
// test's context ending must not kill a control plane that a later cleanup
// stops.
//
// Identities are static bearer tokens (--token-auth-file). An admin token in
// group system:masters is always created; Options.Tokens adds more.
//
// By default no controller runs. Options.Controllers starts
// kube-controller-manager with exactly those controllers, as the admin
// user; StorageControllers, DRAControllers and WorkloadControllers are the
// sets tests share. StartControllerManager starts one on a running control
// plane instead, for part of its life, and Stop stops those too.
//
// By default there is no kubelet: nodes must be made ready by hand
// (CreateReadyNode) and bound pods stay Pending. Options.KWOK starts KWOK,
// which plays the kubelet of the nodes that CreateKWOKNode makes: they
// report Ready and renew their Leases, pods bound to them go Running and
// Ready, pods of Jobs (or with KWOKRunDurationAnnotation) succeed, and
// deleted pods go, as the Stage files in kwok/ say. With
// WorkloadControllers beside it, Deployments, StatefulSets and Jobs run
// as in a cluster, with no scheduler but the one under test.
//
// Whatever it does not run stays undone: the ServiceAccount admission
// plugin is disabled (no token controller creates default
// ServiceAccounts), and namespaces are never finalized unless
// namespace-controller is asked for.
//
// The package needs Unix process groups and is meant for Linux, where a
// child also receives SIGKILL if the process that started it dies; package
// procgroup runs the children. A start that loses the race for a port
// picked as free is retried here, where the components' logs say so.
package controlplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

// ServiceAccountIssuer is the --service-account-issuer of every control plane.
const ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// ServiceClusterIPRange is the --service-cluster-ip-range of every control plane.
const ServiceClusterIPRange = "10.0.0.0/24"

// AdminUser is the user name of the admin token; it is in group system:masters.
const AdminUser = "yardmaster-admin"

// Client rate limits of RESTConfig. Benchmarks push about 2,000 requests/s;
// client-go's default of 5 QPS (kubernetes.NewForConfig) would measure the
// limiter instead of the scheduler.
const (
	clientQPS   = 1000
	clientBurst = 2000
)

const (
	defaultReadyTimeout = 90 * time.Second
	// startAttempts bounds retries when a port picked as free was taken by
	// someone else before etcd, kube-apiserver or kube-controller-manager
	// bound it.
	startAttempts = 3
)

// Options configures Start. The zero value is usable.
type Options struct {
	// BinDir holds etcd (or etcd's "server" binary) and kube-apiserver.
	// Default: $YARDMASTER_BIN_DIR, else bin/ in the root of the
	// github.com/yardmaster-io/yardmaster module found by walking up from
	// the working directory.
	BinDir string
	// KubeVersion picks the minor version of kube-apiserver and
	// kube-controller-manager, such as "1.35": BinDir's
	// kube-apiserver-<KubeVersion> and kube-controller-manager-<KubeVersion>
	// (make compat-binaries builds them) instead of kube-apiserver and
	// kube-controller-manager. etcd and kwok are the same for every
	// version. Empty: the version this module is built for.
	KubeVersion string
	// EtcdPath, APIServerPath and ControllerManagerPath name the binaries
	// explicitly; each overrides what BinDir (and KubeVersion) would give.
	EtcdPath              string
	APIServerPath         string
	ControllerManagerPath string
	// Controllers, when not empty, starts kube-controller-manager with
	// exactly these controllers (its --controllers), each named
	// explicitly, e.g. append(StorageControllers(), DRAControllers()...).
	// Empty: kube-controller-manager is not started.
	Controllers []string
	// Tokens are extra static-token identities. They get no RBAC bindings.
	Tokens []Token
	// LogDir receives the components' logs. Default: the control plane's
	// temporary directory, removed by Stop.
	LogDir string
	// ExtraAPIServerFlags are appended after the defaults, and a flag given
	// here replaces the default of the same name (also a list flag, such
	// as --authorization-mode, which given twice would add up). Flags
	// given here are all kept: a list flag given twice here adds up, as
	// with append(GenericWorkloadAPIServerFlags(),
	// "--runtime-config=resource.k8s.io/v1=false").
	ExtraAPIServerFlags []string
	// ExtraControllerManagerFlags are added to kube-controller-manager's
	// defaults in the same way; unused without Controllers.
	ExtraControllerManagerFlags []string
	// KWOK starts KWOK's kwok controller after the other components, as
	// the kubelet of every node carrying KWOKNodeAnnotation (see
	// CreateKWOKNode and kwok.go). Run the workload controllers beside it
	// (WorkloadControllers) for pods that Deployments, StatefulSets and
	// Jobs create and that are replaced, evicted and collected.
	KWOK bool
	// KWOKPath names the kwok binary; it overrides what BinDir would give.
	KWOKPath string
	// NodeLeaseDuration is the duration of the node Leases KWOK holds;
	// it renews each every quarter of it, so N nodes cost N/(duration/4)
	// writes per second. Default: DefaultNodeLeaseDuration (40s, a
	// kubelet's). With node-lifecycle-controller running, the renewal
	// interval must stay well under its --node-monitor-grace-period (50s
	// by default) or it marks the nodes Unknown.
	NodeLeaseDuration time.Duration
	// ReadyTimeout bounds the whole start. Default: 90s (a 2-core machine
	// takes about 10-20s; kube-controller-manager adds a second or two).
	ReadyTimeout time.Duration
}

// Token is a static bearer-token identity, one line of --token-auth-file.
type Token struct {
	Token  string
	User   string
	UID    string
	Groups []string
}

// ControlPlane is a running etcd, kube-apiserver and, with
// Options.Controllers, kube-controller-manager. Its exported fields are set
// by Start and must not be changed.
type ControlPlane struct {
	// Dir is the temporary directory holding all state; Stop removes it.
	Dir string
	// EtcdURL is etcd's client URL (plain http on loopback).
	EtcdURL string
	// APIServerURL is kube-apiserver's https URL on loopback.
	APIServerURL string
	// AdminToken is the bearer token of AdminUser (group system:masters).
	AdminToken string
	// AdminKubeconfig is the path of a kubeconfig for AdminToken.
	AdminKubeconfig string
	// EtcdLog and APIServerLog are the paths of the components' logs.
	EtcdLog      string
	APIServerLog string
	// ControllerManagerLog is the path of kube-controller-manager's log;
	// empty when it does not run.
	ControllerManagerLog string
	// Controllers are the controllers kube-controller-manager runs;
	// empty when it does not run.
	Controllers []string
	// KWOKLog is the path of kwok's log; empty when it does not run.
	KWOKLog string

	caData []byte  // PEM of the apiserver's self-signed serving cert and its CA
	tokens []Token // admin first, then Options.Tokens

	// etcd and apiserver are replaced by a restart (under mu).
	etcd, apiserver, controllerManager *procgroup.Process
	// kwok runs with Options.KWOK (set under mu).
	kwok *procgroup.Process
	// The binaries and arguments etcd and kube-apiserver were started
	// with, for restarts.
	etcdPath, apiserverPath string
	etcdArgs, apiserverArgs []string

	// opts are the Options Start was given (ReadyTimeout defaulted), and
	// logDir where the logs go, for StartControllerManager.
	opts   Options
	logDir string

	adminClient kubernetes.Interface
	adminHTTP   *http.Client

	// mu guards what StartControllerManager adds after Start.
	mu sync.Mutex
	// managers are the kube-controller-managers StartControllerManager
	// started, and lateManagers numbers their logs.
	managers     []*ControllerManager
	lateManagers int
	// stopped is set by Stop; no manager starts after it.
	stopped bool

	stopOnce sync.Once
	stopErr  error
}

// Start starts etcd and kube-apiserver and returns when the API server is
// ready: /readyz answers 200, the "default" namespace and the bootstrap
// RBAC roles exist. With opts.Controllers it then starts
// kube-controller-manager and also waits until its /healthz passes a check
// for each of those controllers, which it adds once it has built them.
// With opts.KWOK it then starts kwok, once kube-node-lease exists, and
// waits until kwok's controllers run. ctx bounds only these waits; the
// processes live until Stop. If a binary cannot be found the error wraps
// ErrBinaryNotFound.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if err := validateTokens(opts.Tokens); err != nil {
		return nil, err
	}
	if err := validateControllers(opts.Controllers); err != nil {
		return nil, err
	}
	bins, err := opts.binaries()
	if err != nil {
		return nil, err
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = defaultReadyTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, opts.ReadyTimeout)
	defer cancel()

	var errs []error
	for range startAttempts {
		cp, err := start(ctx, opts, bins)
		if err == nil {
			return cp, nil
		}
		if !errors.Is(err, errPortInUse) {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("starting control plane: %d attempts lost a port race: %w", startAttempts, errors.Join(errs...))
}

// start makes one attempt; on failure it leaves nothing running and no
// temporary directory behind.
func start(ctx context.Context, opts Options, bins binaryPaths) (_ *ControlPlane, err error) {
	dir, err := os.MkdirTemp("", "yardmaster-cp-")
	if err != nil {
		return nil, fmt.Errorf("creating control plane dir: %w", err)
	}
	c := &ControlPlane{Dir: dir, opts: opts}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
		}
	}()

	logDir := opts.LogDir
	if logDir == "" {
		logDir = dir
	} else if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating log dir %q: %w", logDir, err)
	}
	c.logDir = logDir
	// The temp dir's unique name keeps logs of concurrent control planes
	// sharing one LogDir apart.
	c.EtcdLog = filepath.Join(logDir, filepath.Base(dir)+"-etcd.log")
	c.APIServerLog = filepath.Join(logDir, filepath.Base(dir)+"-kube-apiserver.log")
	if len(opts.Controllers) > 0 {
		c.ControllerManagerLog = filepath.Join(logDir, filepath.Base(dir)+"-kube-controller-manager.log")
		c.Controllers = append([]string(nil), opts.Controllers...)
	}
	if opts.KWOK {
		c.KWOKLog = filepath.Join(logDir, filepath.Base(dir)+"-kwok.log")
	}

	adminToken, err := randomToken()
	if err != nil {
		return nil, err
	}
	c.AdminToken = adminToken
	c.tokens = append([]Token{{Token: adminToken, User: AdminUser, UID: AdminUser, Groups: []string{"system:masters"}}}, opts.Tokens...)

	ports, err := procgroup.FreePorts(3)
	if err != nil {
		return nil, err
	}
	etcdClientPort, etcdPeerPort, securePort := ports[0], ports[1], ports[2]

	if err := c.startEtcd(ctx, bins.etcd, etcdClientPort, etcdPeerPort); err != nil {
		return nil, err
	}
	if err := c.startAPIServer(ctx, bins.apiserver, securePort, opts.ExtraAPIServerFlags); err != nil {
		return nil, err
	}

	c.adminHTTP, err = rest.HTTPClientFor(c.RESTConfig(c.AdminToken))
	if err != nil {
		return nil, fmt.Errorf("building admin HTTP client: %w", err)
	}
	c.adminClient, err = kubernetes.NewForConfigAndClient(c.RESTConfig(c.AdminToken), c.adminHTTP)
	if err != nil {
		return nil, fmt.Errorf("building admin client: %w", err)
	}
	if err := c.waitForBootstrap(ctx); err != nil {
		return nil, err
	}

	c.AdminKubeconfig = filepath.Join(dir, "admin.kubeconfig")
	if err := c.WriteKubeconfig(c.AdminKubeconfig, c.AdminToken); err != nil {
		return nil, err
	}
	if len(c.Controllers) > 0 {
		if err := c.startControllerManager(ctx, bins.controllerManager, c.Controllers, opts.ExtraControllerManagerFlags); err != nil {
			return nil, err
		}
	}
	if opts.KWOK {
		if err := c.startKWOK(ctx, bins.kwok); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Stop kills kwok and kube-controller-manager (if they run, and any
// kube-controller-manager that StartControllerManager started and that
// still runs), kube-apiserver and etcd, in that order, with their process groups (SIGTERM, then SIGKILL
// after a grace period), waits for each and removes Dir.
// It is idempotent and safe for concurrent use; later calls return the
// first call's result.
func (c *ControlPlane) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		if c.adminHTTP != nil {
			c.adminHTTP.CloseIdleConnections()
		}
		c.mu.Lock()
		c.stopped = true
		managers := c.managers
		etcd, apiserver, kwok := c.etcd, c.apiserver, c.kwok
		c.mu.Unlock()
		// The clients first, kwok before the controller managers: pods it
		// finished or removed meanwhile would only make them act again.
		if kwok != nil {
			errs = append(errs, kwok.Stop(stopGracePeriod))
		}
		for _, m := range managers {
			errs = append(errs, m.Stop())
		}
		// Each component before the one it talks to: stopping a server
		// under its client only makes the client log connection errors
		// (or, for controllers, retry writes) while it shuts down.
		for _, p := range []*procgroup.Process{c.controllerManager, apiserver, etcd} {
			if p != nil {
				errs = append(errs, p.Stop(stopGracePeriod))
			}
		}
		if c.Dir != "" {
			if err := os.RemoveAll(c.Dir); err != nil {
				errs = append(errs, fmt.Errorf("removing %q: %w", c.Dir, err))
			}
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

// PIDs returns the process ids of etcd, kube-apiserver,
// kube-controller-manager when Start started it and kwok when it runs
// (each also the id of its process group), for diagnostics and for tests
// that check Stop. Those that StartControllerManager started have their
// own Pid.
func (c *ControlPlane) PIDs() []int {
	c.mu.Lock()
	procs := []*procgroup.Process{c.etcd, c.apiserver, c.controllerManager, c.kwok}
	c.mu.Unlock()
	var pids []int
	for _, p := range procs {
		if p != nil {
			pids = append(pids, p.Pid())
		}
	}
	return pids
}

// RESTConfig returns a new config for the identity of token: https on
// loopback verified against the API server's self-signed CA, QPS 1000 and
// Burst 2000. Callers may change the copy they get, e.g. set ContentType to
// protobuf for benchmarks.
func (c *ControlPlane) RESTConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            c.APIServerURL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: append([]byte(nil), c.caData...)},
		QPS:             clientQPS,
		Burst:           clientBurst,
	}
}

// AdminClient returns a clientset for the admin token. It is shared; its
// idle connections are closed by Stop.
func (c *ControlPlane) AdminClient() kubernetes.Interface { return c.adminClient }

// WriteKubeconfig writes to path (mode 0600) a kubeconfig for the identity
// of token. The user entry is named after the token's user when the token
// is one of this control plane's.
func (c *ControlPlane) WriteKubeconfig(path, token string) error {
	user := "user"
	for _, t := range c.tokens {
		if t.Token == token {
			user = t.User
			break
		}
	}
	const name = "yardmaster"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: c.APIServerURL, CertificateAuthorityData: c.caData}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	cfg.CurrentContext = name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %q: %w", path, err)
	}
	return nil
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
