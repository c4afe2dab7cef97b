package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework"
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

// explainHandler answers explainPath from the daemon's scheduler: its
// cache, plugins and nominations, between two cycles.
func (d *Daemon) explainHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		ns, name := q.Get("namespace"), q.Get("name")
		if group := q.Get("podgroup"); group != "" && ns != "" && name == "" {
			d.explainPodGroup(w, r, ns, group, q.Get("api"))
			return
		}
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
		setPodGroupSource(e.PodGroup, explain.SourceLive)
		e.WithTypeMeta()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(e)
	})
}

// explainPodGroup answers explainPath's ?namespace=NS&podgroup=NAME
// (&api=scheduling.k8s.io or scheduling.x-k8s.io to choose): the dry run
// of the group's cycle, a PodGroupExplanation in JSON.
func (d *Daemon) explainPodGroup(w http.ResponseWriter, r *http.Request, ns, name, api string) {
	if !d.synced.Load() {
		http.Error(w, "explain: yardmaster's informer caches are not synced yet", http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	key, err := d.Scheduler.ResolvePodGroup(ns, name, api)
	var g *explain.PodGroupExplanation
	if err == nil {
		g, err = d.Scheduler.ExplainPodGroup(ctx, key)
	}
	switch {
	case errors.Is(err, scheduler.ErrPodGroupNotFound):
		http.Error(w, "explain: "+err.Error()+" in yardmaster's cache", http.StatusNotFound)
		return
	case errors.Is(err, scheduler.ErrPodGroupAmbiguous):
		http.Error(w, "explain: "+err.Error()+": write podgroups.scheduling.k8s.io/NAME or podgroups.scheduling.x-k8s.io/NAME", http.StatusConflict)
		return
	case errors.Is(err, scheduler.ErrNoProfile):
		http.Error(w, "explain: "+err.Error(), http.StatusUnprocessableEntity)
		return
	case err != nil:
		d.logger.Warn("explain failed", zap.String("podGroup", ns+"/"+name), zap.Error(err))
		http.Error(w, "explain: "+err.Error(), http.StatusInternalServerError)
		return
	}
	setPodGroupSource(g, explain.SourceLive)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(g.WithTypeMeta())
}

// setPodGroupSource sets the source of g and of its blocker's
// explanation.
func setPodGroupSource(g *explain.PodGroupExplanation, src string) {
	if g == nil {
		return
	}
	g.Source = src
	if g.Blocker != nil {
		g.Blocker.Source = src
	}
}

// explainFlags are the flags of `yardmaster explain`.
type explainFlags struct {
	// registry holds the plugins --config may name.
	registry framework.Registry
	// kube are kubectl's flags for the API server: kubeconfig, context,
	// namespace, identity, timeout.
	kube       *genericclioptions.ConfigFlags
	configFile string
	// scheduler is a running yardmaster's secure port: explain from its
	// live state instead of a snapshot.
	scheduler      string
	schedulerCA    string
	schedulerNoTLS bool
	output         string
	nodes, kept    bool
}

// newExplainCommand returns `yardmaster explain POD`, with `explain
// bandwidth` and `explain load` beneath it.
func newExplainCommand(reg framework.Registry) *cobra.Command {
	f := explainFlags{registry: reg, kube: newConfigFlags()}
	cmd := &cobra.Command{
		Use:   "explain (NAME | TYPE/NAME) [flags]",
		Short: "Say why a pod is Pending, or why it went where it went",
		Long: "Run one cycle of yardmaster's own pipeline for the pod and print every node's verdict:\n" +
			"the filter plugin that rejected it and why, each score plugin's raw and normalized score\n" +
			"and weight and the weighted total of the nodes that passed, the best node, and what\n" +
			"preemption would do (a dry run: nothing is evicted or written).\n\n" +
			"The pod is NAME, pod/NAME (pods/NAME, po/NAME) or `pod NAME`, in the namespace of -n,\n" +
			"else of the kubeconfig's current context, as kubectl reads it. A pod named bandwidth\n" +
			"or load is pod/bandwidth, pod/load: the bare words are the subcommands.\n\n" +
			"For a pod of a pod group, and for podgroup/NAME (podgroups/, pg/; podgroups.scheduling.k8s.io/\n" +
			"or podgroups.scheduling.x-k8s.io/ to choose the API when both have that name), a dry run of\n" +
			"the group cycle: would the group be placed now, how many of its pending members fit\n" +
			"together, and what stops the next one. Nothing is assumed, reserved or written.\n" +
			"-o json and -o yaml print a PodGroupExplanation for podgroup/NAME; -o name the members\n" +
			"that would stay Pending. Exit code 0 when the group would be placed, 2 when not.\n\n" +
			"Without --scheduler-url the cluster is read from the API server (read only) with\n" +
			"kubectl's flags (--kubeconfig, --context, -n, --as, --server, --request-timeout, ...)\n" +
			"and the pipeline built from --config, the file the scheduler runs with. With\n" +
			"--scheduler-url, a running yardmaster answers from its live cache over its secure port\n" +
			"(/debug/explain; the kubeconfig user's credentials must be allowed get on that path).\n\n" +
			"-o wide lists every node (as --nodes); -o json and -o yaml print the Explanation\n" +
			"(apiVersion " + explain.APIVersion + ", docs/schemas/); -o name prints node/NAME of the node\n" +
			"the pod is bound to or would go to, and nothing when it would stay Pending.\n\n" +
			exitCodesHelp + "\n\n" +
			"As kubectl-yardmaster (a symlink to this binary on the PATH), it is\n" +
			"`kubectl yardmaster explain POD`.",
		Example: "  kubectl yardmaster explain web-7d9f -n shop\n" +
			"  kubectl yardmaster explain pod/web-7d9f --context staging -o yaml\n" +
			"  kubectl yardmaster explain podgroup/train -n ml\n" +
			"  kubectl yardmaster explain web-7d9f --scheduler-url https://10.0.0.5:10259 --scheduler-insecure-skip-tls-verify --kept",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(&f.output); err != nil {
				return err
			}
			target, err := parseExplainArgs(args)
			if err != nil {
				return err
			}
			name := target.name
			if f.kept && target.podGroup {
				return errors.New("--kept is a pod's last attempt: a pod group has none of its own (explain one of its pods)")
			}
			if f.kept && f.scheduler == "" {
				return errors.New("--kept needs --scheduler-url (formerly --server, which now names the API server, as in kubectl): only a running yardmaster keeps attempts")
			}
			ns, err := namespace(f.kube)
			if err != nil {
				return err
			}
			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			if target.podGroup {
				return runExplainPodGroup(ctx, cmd.OutOrStdout(), f, ns, target)
			}
			var e *explain.Explanation
			if f.scheduler != "" {
				e, err = explainRemote(ctx, f, ns, name)
			} else {
				e, err = explainSnapshot(ctx, f, ns, name)
			}
			if err != nil {
				return err
			}
			if err := printExplanation(cmd.OutOrStdout(), e.WithTypeMeta(), f.output, f.nodes); err != nil {
				return err
			}
			if !e.Placed() {
				return pendingError("pod " + e.Pod)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	f.kube.AddFlags(fs)
	fs.StringVarP(&f.output, "output", "o", "", "Output format: wide, json, yaml or name (default: the table)")
	fs.BoolVar(&f.kept, "kept", false, "with --scheduler-url: the pod's last failed attempt as yardmaster kept it (reason counts per plugin), without running a cycle")
	fs.BoolVar(&f.nodes, "nodes", false, "list every node in the table, not the groups of rejected nodes and the best 10 (as -o wide)")
	fs.StringVar(&f.configFile, "config", "", "KubeSchedulerConfiguration file the scheduler runs with (default: the defaults); without --scheduler-url")
	fs.StringVar(&f.scheduler, "scheduler-url", "", "a running yardmaster's secure port, https://HOST:10259: explain from its live state (not the API server's --server)")
	fs.StringVar(&f.schedulerCA, "scheduler-certificate-authority", "", "with --scheduler-url: the CA that signed yardmaster's serving certificate")
	fs.BoolVar(&f.schedulerNoTLS, "scheduler-insecure-skip-tls-verify", false, "with --scheduler-url: do not verify yardmaster's serving certificate (its default one is self-signed)")
	cmd.AddCommand(newExplainBandwidthCommand(reg, "bandwidth"), newExplainLoadCommand(reg, "load"))
	return cmd
}

// printExplanation writes e in the format of -o.
func printExplanation(w io.Writer, e *explain.Explanation, output string, allNodes bool) error {
	switch output {
	case outputTable, outputWide:
		return explain.Print(w, e, explain.PrintOptions{AllNodes: allNodes || output == outputWide})
	case outputName:
		if !e.Placed() {
			return nil
		}
		if node := cmpOr(e.BoundTo, e.Selected); node != "" {
			_, err := fmt.Fprintln(w, "node/"+node)
			return err
		}
		return nil
	}
	return explain.Marshal(w, e, output)
}

// runExplainPodGroup explains the pod group of target in ns, prints it,
// and returns the ExitPending error when the group would not be placed.
func runExplainPodGroup(ctx context.Context, w io.Writer, f explainFlags, ns string, target explainTarget) error {
	var g *explain.PodGroupExplanation
	var err error
	if f.scheduler != "" {
		q := url.Values{"namespace": {ns}, "podgroup": {target.name}}
		if target.api != "" {
			q.Set("api", target.api)
		}
		g = &explain.PodGroupExplanation{}
		err = askScheduler(ctx, f, q, g)
	} else {
		var c *config.Config
		if c, err = loadConfigOrDefault(f.configFile, f.registry); err == nil {
			var cfg *rest.Config
			if cfg, err = restConfig(f.kube); err == nil {
				g, err = ExplainPodGroupSnapshot(ctx, cfg, c, ns, target.name, target.api)
			}
		}
	}
	if err != nil {
		return err
	}
	g.WithTypeMeta()
	switch f.output {
	case outputTable, outputWide:
		err = explain.PrintPodGroup(w, g, explain.PrintOptions{AllNodes: f.nodes || f.output == outputWide})
	case outputName:
		// As simulate's: the members that would stay Pending.
		for _, p := range g.Placements {
			if !g.Placed || p.Node == "" {
				_, name, _ := strings.Cut(p.Pod, "/")
				fmt.Fprintln(w, "pod/"+name)
			}
		}
	default:
		err = explain.Marshal(w, g, f.output)
	}
	if err != nil {
		return err
	}
	if !g.Placed && g.Pending > 0 {
		return pendingError("pod group " + g.PodGroup)
	}
	return nil
}

// ExplainPodGroupSnapshot is `yardmaster explain podgroup/NAME` without
// --scheduler-url: the dry run of the group's cycle with the pipeline of
// c's profiles on a snapshot of the cluster cfg reaches, read through a
// client that can only read. api is scheduling.k8s.io,
// scheduling.x-k8s.io, or "" for whichever has a PodGroup of that name.
func ExplainPodGroupSnapshot(ctx context.Context, cfg *rest.Config, c *config.Config, ns, name, api string) (*explain.PodGroupExplanation, error) {
	s, stop, err := startSnapshotScheduler(ctx, c, cfg)
	if err != nil {
		return nil, err
	}
	defer stop()
	key, err := s.ResolvePodGroup(ns, name, api)
	if errors.Is(err, scheduler.ErrPodGroupAmbiguous) {
		return nil, fmt.Errorf("%w: write podgroups.scheduling.k8s.io/%s or podgroups.scheduling.x-k8s.io/%s", err, name, name)
	}
	if err != nil {
		return nil, err
	}
	g, err := s.ExplainPodGroup(ctx, key)
	if err != nil {
		return nil, err
	}
	setPodGroupSource(g, explain.SourceSnapshot)
	return g, nil
}

// explainRemote asks a running yardmaster, with the credentials of the
// kubeconfig's user (after --context, --user, --token): its secure port
// authenticates and authorizes them as kube-scheduler's does.
func explainRemote(ctx context.Context, f explainFlags, ns, name string) (*explain.Explanation, error) {
	q := url.Values{"namespace": {ns}, "name": {name}}
	if f.kept {
		q.Set("kept", "true")
	}
	var e explain.Explanation
	if err := askScheduler(ctx, f, q, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// askScheduler GETs /debug/explain?q from the running yardmaster of
// f.scheduler and decodes its JSON answer into out.
func askScheduler(ctx context.Context, f explainFlags, q url.Values, out any) error {
	cfg, err := restConfig(f.kube)
	if err != nil {
		return err
	}
	// Impersonation from the flags (--as, --as-group, --as-uid) or from
	// the kubeconfig's user (as:, as-groups:, as-user-extra:). A
	// scheduler's secure port, as kube-scheduler's, does not impersonate:
	// the request would be authorized as the real user.
	if im := cfg.Impersonate; im.UserName != "" || im.UID != "" || len(im.Groups) > 0 || len(im.Extra) > 0 {
		return errors.New("impersonation (--as, --as-group, --as-uid, or the kubeconfig user's as:) is the API server's; yardmaster's secure port (--scheduler-url) does not impersonate: use a kubeconfig user (--user, --context) with the rights instead")
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Host = f.scheduler
	// yardmaster's certificate is not the API server's.
	cfg.TLSClientConfig.CAFile, cfg.TLSClientConfig.CAData = f.schedulerCA, nil
	cfg.TLSClientConfig.ServerName = ""
	cfg.Insecure = f.schedulerNoTLS
	cfg.Proxy = nil
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	u := strings.TrimSuffix(f.scheduler, "/") + "/debug/explain?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("ask yardmaster at %s: %w", f.scheduler, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("yardmaster at %s answered %s: %s", f.scheduler, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("yardmaster at %s: %w", f.scheduler, err)
	}
	return nil
}

// explainSnapshot builds the pipeline from the configuration file on a
// snapshot of the cluster read from the API, and explains.
func explainSnapshot(ctx context.Context, f explainFlags, ns, name string) (*explain.Explanation, error) {
	c, err := loadConfigOrDefault(f.configFile, f.registry)
	if err != nil {
		return nil, err
	}
	cfg, err := restConfig(f.kube)
	if err != nil {
		return nil, err
	}
	return ExplainSnapshot(ctx, cfg, c, ns, name)
}

// ExplainSnapshot is `yardmaster explain` without --scheduler-url: the pipeline
// of c's profiles on a snapshot of the cluster cfg reaches, read through
// a client that can only read.
func ExplainSnapshot(ctx context.Context, cfg *rest.Config, c *config.Config, ns, name string) (*explain.Explanation, error) {
	// The pod first, in one request: a name that is not there, or a
	// user who may not read it, is told so at once, not after the
	// whole cluster has been read.
	client, err := kubernetes.NewForConfig(readOnly(cfg))
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	if _, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("pod %q not found in namespace %q", name, ns)
		}
		return nil, fmt.Errorf("read pod %s/%s: %w", ns, name, err)
	}
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
	setPodGroupSource(e.PodGroup, explain.SourceSnapshot)
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
	// One request of each kind the informers need, first: their
	// reflectors retry an unreachable API server or a refused list for
	// ever, and the command would hang instead of failing.
	if _, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return nil, nil, fmt.Errorf("list nodes: %w", err)
	}
	if _, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return nil, nil, fmt.Errorf("list pods in all namespaces: %w", err)
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
