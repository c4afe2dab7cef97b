package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/internal/version"
	"github.com/yardmaster-io/yardmaster/scheduler"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// explainPath is the secure port's route for explanations:
// GET /debug/explain?namespace=NS&name=NAME answers an
// explain.Explanation in JSON; with &kept=true, the pod's last failed
// attempt as the scheduler kept it, without running a cycle. It is authorized as kube-scheduler's /debug
// paths are: a SubjectAccessReview of get on the non-resource path
// /debug/explain.
const explainPath = "GET /debug/explain"

// KubectlPluginName is the name under which the binary is a kubectl
// plugin: `kubectl yardmaster explain POD` runs `kubectl-yardmaster
// explain POD`.
const KubectlPluginName = "kubectl-yardmaster"

// explainHandler answers explainPath from the daemon's scheduler: its
// cache, plugins and nominations, between two cycles.
func (d *Daemon) explainHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		ns, name := q.Get("namespace"), q.Get("name")
		if ns == "" || name == "" {
			http.Error(w, "explain: namespace and name are required", http.StatusBadRequest)
			return
		}
		if !d.synced.Load() {
			// An empty cache would explain every pod as not found; a
			// standby under delayCacheUntilActive has none until it leads.
			http.Error(w, "explain: yardmaster's informer caches are not synced yet", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		var e *explain.Explanation
		var err error
		if kept, _ := strconv.ParseBool(q.Get("kept")); kept {
			e, err = d.Scheduler.KeptExplanation(ns, name)
		} else {
			e, err = d.Scheduler.ExplainPod(ctx, ns, name)
		}
		switch {
		case errors.Is(err, scheduler.ErrNotKept):
			http.Error(w, fmt.Sprintf("explain: %s/%s: %v", ns, name, err), http.StatusNotFound)
			return
		case apierrors.IsNotFound(err):
			http.Error(w, fmt.Sprintf("explain: pod %s/%s not found in yardmaster's cache", ns, name), http.StatusNotFound)
			return
		case errors.Is(err, scheduler.ErrNoProfile):
			http.Error(w, "explain: "+err.Error(), http.StatusUnprocessableEntity)
			return
		case err != nil:
			d.logger.Warn("explain failed", zap.String("pod", ns+"/"+name), zap.Error(err))
			http.Error(w, "explain: "+err.Error(), http.StatusInternalServerError)
			return
		}
		e.Source = explain.SourceLive
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(e)
	})
}

// explainFlags are the flags of `yardmaster explain`.
type explainFlags struct {
	// registry holds the plugins --config may name.
	registry                          framework.Registry
	namespace, kubeconfig, configFile string
	server, caFile                    string
	insecure                          bool
	output                            string
	nodes, kept                       bool
}

// newExplainCommand returns `yardmaster explain POD`.
func newExplainCommand(reg framework.Registry) *cobra.Command {
	f := explainFlags{registry: reg}
	cmd := &cobra.Command{
		Use:   "explain POD",
		Short: "Say why a pod is Pending, or why it went where it went",
		Long: "Run one cycle of yardmaster's own pipeline for the pod and print every node's verdict:\n" +
			"the filter plugin that rejected it and why, each score plugin's raw and normalized score\n" +
			"and weight and the weighted total of the nodes that passed, the best node, and what\n" +
			"preemption would do (a dry run: nothing is evicted or written).\n\n" +
			"With --server, a running yardmaster answers from its live cache over its secure port\n" +
			"(/debug/explain; the kubeconfig's credentials must be allowed get on that path). Without,\n" +
			"the cluster is read from the API (read only) and the pipeline built from --config, the\n" +
			"file the scheduler runs with.\n\n" +
			"POD is NAME (with -n) or NAMESPACE/NAME. As kubectl-yardmaster (a symlink to this\n" +
			"binary on the PATH), it is `kubectl yardmaster explain POD`.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, name := f.namespace, args[0]
			if before, after, ok := strings.Cut(name, "/"); ok {
				ns, name = before, after
			}
			if ns == "" {
				ns = "default"
			}
			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			var e *explain.Explanation
			var err error
			if f.kept && f.server == "" {
				return errors.New("--kept needs --server: only a running yardmaster keeps attempts")
			}
			if f.server != "" {
				e, err = explainRemote(ctx, f, ns, name)
			} else {
				e, err = explainSnapshot(ctx, f, ns, name)
			}
			if err != nil {
				return err
			}
			return explain.Print(cmd.OutOrStdout(), e, explain.PrintOptions{Format: f.output, AllNodes: f.nodes})
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.namespace, "namespace", "n", "", "the pod's namespace (default \"default\")")
	fs.StringVarP(&f.output, "output", "o", explain.FormatTable, "table, json or yaml")
	fs.BoolVar(&f.kept, "kept", false, "with --server: the pod's last failed attempt as yardmaster kept it (reason counts per plugin), without running a cycle")
	fs.BoolVar(&f.nodes, "nodes", false, "list every node in the table, not the groups of rejected nodes and the best 10")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig (default $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.configFile, "config", "", "KubeSchedulerConfiguration file the scheduler runs with (default: the defaults); without --server")
	fs.StringVar(&f.server, "server", "", "a running yardmaster's secure port, https://HOST:10259: explain from its live state")
	fs.StringVar(&f.caFile, "certificate-authority", "", "with --server: the CA that signed yardmaster's serving certificate")
	fs.BoolVar(&f.insecure, "insecure-skip-tls-verify", false, "with --server: do not verify yardmaster's serving certificate (its default one is self-signed)")
	return cmd
}

// clientConfig loads the kubeconfig as kubectl does: --kubeconfig, else
// $KUBECONFIG, else ~/.kube/config, else the in-cluster config.
func clientConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.UserAgent = "yardmaster-explain/" + version.Version
	return cfg, nil
}

// explainRemote asks a running yardmaster, with the kubeconfig's
// credentials.
func explainRemote(ctx context.Context, f explainFlags, ns, name string) (*explain.Explanation, error) {
	cfg, err := clientConfig(f.kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Host = f.server
	// yardmaster's certificate is not the API server's.
	cfg.TLSClientConfig.CAFile, cfg.TLSClientConfig.CAData = f.caFile, nil
	cfg.TLSClientConfig.ServerName = ""
	cfg.Insecure = f.insecure
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	q := url.Values{"namespace": {ns}, "name": {name}}
	if f.kept {
		q.Set("kept", "true")
	}
	u := strings.TrimSuffix(f.server, "/") + "/debug/explain?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ask yardmaster at %s: %w", f.server, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("yardmaster at %s answered %s: %s", f.server, resp.Status, strings.TrimSpace(string(body)))
	}
	var e explain.Explanation
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("yardmaster at %s: %w", f.server, err)
	}
	return &e, nil
}

// explainSnapshot builds the pipeline from the configuration file on a
// snapshot of the cluster read from the API, and explains.
func explainSnapshot(ctx context.Context, f explainFlags, ns, name string) (*explain.Explanation, error) {
	c, err := loadConfigOrDefault(f.configFile, f.registry)
	if err != nil {
		return nil, err
	}
	cfg, err := clientConfig(f.kubeconfig)
	if err != nil {
		return nil, err
	}
	return ExplainSnapshot(ctx, cfg, c, ns, name)
}

// ExplainSnapshot is `yardmaster explain` without --server: the pipeline
// of c's profiles on a snapshot of the cluster cfg reaches, read through
// a client that can only read.
func ExplainSnapshot(ctx context.Context, cfg *rest.Config, c *config.Config, ns, name string) (*explain.Explanation, error) {
	s, stop, err := startSnapshotScheduler(ctx, c, cfg)
	if err != nil {
		return nil, err
	}
	defer stop()
	e, err := s.ExplainPod(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("pod %s/%s not found (a Succeeded or Failed pod is not scheduled)", ns, name)
	}
	if err != nil {
		return nil, err
	}
	e.Source = explain.SourceSnapshot
	return e, nil
}

// loadConfigOrDefault loads the file at path against the plugins of reg
// (nil: the built-in ones), or gives the defaults when path is empty.
func loadConfigOrDefault(path string, reg framework.Registry) (*config.Config, error) {
	if reg == nil {
		reg = registry.NewInTree()
	}
	if path == "" {
		return config.DefaultWith(reg), nil
	}
	return config.LoadWith(path, reg, config.Overrides{})
}

// SnapshotScheduler is the scheduler explain and simulate run on the live
// cluster: c's profiles over informers of the cluster cfg reaches, through
// a client that can only read, its loop never run. stop ends the
// informers.
func SnapshotScheduler(ctx context.Context, cfg *rest.Config, c *config.Config) (s *scheduler.Scheduler, stop func(), err error) {
	return startSnapshotScheduler(ctx, c, cfg)
}

// startSnapshotScheduler builds a Scheduler of c's profiles over
// informers of the cluster cfg reaches, through a client that can only
// read, and waits for their caches. Its loop never runs: nothing is
// bound, evicted or written. stop ends the informers.
func startSnapshotScheduler(ctx context.Context, c *config.Config, cfg *rest.Config) (*scheduler.Scheduler, func(), error) {
	ro := readOnly(cfg)
	ro.QPS, ro.Burst = 50, 100
	client, err := kubernetes.NewForConfig(ro)
	if err != nil {
		return nil, nil, fmt.Errorf("build client: %w", err)
	}
	return startScheduler(ctx, c, client, ro)
}

// startScheduler builds a Scheduler of c's profiles over informers of
// client (built from rc, nil for a fake) and waits for their caches; its
// loop never runs.
func startScheduler(ctx context.Context, c *config.Config, client kubernetes.Interface, rc *rest.Config) (*scheduler.Scheduler, func(), error) {
	// Explanations and simulations never call the extenders; they are
	// there to be named as not consulted.
	extenders, err := newExtenders(c)
	if err != nil {
		return nil, nil, err
	}
	apis := discoverAPIs(client, zap.NewNop())
	factory := scheduler.NewInformerFactory(client, apis)
	var dynamicFactory dynamicinformer.DynamicSharedInformerFactory
	if rc != nil {
		if dynamicFactory, err = newDynamicFactory(rc); err != nil {
			return nil, nil, err
		}
	}
	s, err := scheduler.New(scheduler.Options{
		Client:                   client,
		RESTConfig:               rc,
		InformerFactory:          factory,
		DynamicInformerFactory:   dynamicFactory,
		Registry:                 c.Registry,
		Profiles:                 c.Profiles,
		PercentageOfNodesToScore: c.PercentageOfNodesToScore,
		Parallelism:              c.Parallelism,
		Extenders:                extenders,
		APIs:                     apis,
	})
	if err != nil {
		return nil, nil, err
	}
	stopCh := make(chan struct{})
	stop := func() {
		close(stopCh)
		factory.Shutdown()
		if dynamicFactory != nil {
			dynamicFactory.Shutdown()
		}
		s.Close()
	}
	factory.Start(stopCh)
	if dynamicFactory != nil {
		dynamicFactory.Start(stopCh)
	}
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			stop()
			return nil, nil, fmt.Errorf("reading %v from the API did not finish", typ)
		}
	}
	if dynamicFactory != nil {
		// The plugins' custom resources, for a while: one whose CRD is
		// not installed never syncs, and the answer goes without it.
		wait, cancel := context.WithTimeout(ctx, dynamicSyncWait)
		dynamicFactory.WaitForCacheSync(wait.Done())
		cancel()
	}
	if !s.WaitForHandlersSync(ctx) {
		stop()
		return nil, nil, ctx.Err()
	}
	return s, stop, nil
}

// dynamicSyncWait bounds how long explain and simulate wait for the
// plugins' custom resources to be read.
const dynamicSyncWait = 10 * time.Second

// newDynamicFactory returns the factory of informers of unstructured
// objects over rc, for the plugins' custom resources
// (framework.ResourceOf).
func newDynamicFactory(rc *rest.Config) (dynamicinformer.DynamicSharedInformerFactory, error) {
	dc, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("build dynamic client: %w", err)
	}
	return dynamicinformer.NewDynamicSharedInformerFactory(dc, 0), nil
}

// errReadOnly is what a read-only client answers a write with.
var errReadOnly = errors.New("yardmaster explain and simulate never write to the API")

// readOnly returns a copy of cfg whose client refuses every request but
// GET (list and watch are GETs): explain and simulate cannot write to the
// cluster, whatever a plugin tries.
func readOnly(cfg *rest.Config) *rest.Config {
	ro := rest.CopyConfig(cfg)
	ro.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method != http.MethodGet && req.Method != http.MethodHead {
				return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, errReadOnly)
			}
			return rt.RoundTrip(req)
		})
	})
	return ro
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// asKubectlPlugin reports whether the binary runs as kubectl's plugin:
// its name (argv[0]) is kubectl-yardmaster.
func asKubectlPlugin(argv0 string) bool {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	return base == KubectlPluginName
}

// kubectlPluginCommand returns the commands `kubectl yardmaster` offers:
// explain and simulate, which only read the cluster.
func kubectlPluginCommand(reg framework.Registry) *cobra.Command {
	root := &cobra.Command{
		Use:           "yardmaster",
		Short:         "Ask yardmaster why a pod is Pending, and where pods would go",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Help says "kubectl yardmaster explain", as the user types it.
		Annotations:       map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl yardmaster"},
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.AddCommand(newExplainCommand(reg), newSimulateCommand(reg), newVersionCommand())
	return root
}

// ExecuteArgv is Execute for a whole argv: as kubectl-yardmaster (a
// symlink), the kubectl plugin's commands; otherwise yardmaster's. It is
// what a main package calls, with the Options of its plugins.
func ExecuteArgv(argv []string, opts ...Option) int {
	if len(argv) > 0 && asKubectlPlugin(argv[0]) {
		s := newSettings(opts)
		root := kubectlPluginCommand(s.registry)
		root.PersistentPreRunE = func(*cobra.Command, []string) error { return s.err }
		root.SetArgs(argv[1:])
		if err := root.Execute(); err != nil {
			fmt.Fprintln(os.Stderr, "kubectl yardmaster:", err)
			return 1
		}
		return 0
	}
	return Execute(argv[1:], opts...)
}
