package app

// The commands that read a cluster (explain, explain load, simulate)
// follow kubectl's conventions, so that `kubectl yardmaster ...` takes what
// `kubectl get ...` takes and means the same by it: cli-runtime's
// ConfigFlags for the kubeconfig, context, namespace, identity and
// timeouts; TYPE/NAME arguments; -o; and exit codes a script can test.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/internal/version"
)

// KubectlPluginName is the name under which the binary is a kubectl
// plugin: `kubectl yardmaster explain POD` runs `kubectl-yardmaster
// explain POD`.
const KubectlPluginName = "kubectl-yardmaster"

// Exit codes of the commands, documented in docs/explain.md and in each
// command's --help.
const (
	// ExitPlaced: the pod is bound or would be placed; every pod of a
	// simulation would be placed.
	ExitPlaced = 0
	// ExitError: the command failed (bad input, a flag it does not take,
	// the API or the scheduler unreachable, a request refused).
	ExitError = 1
	// ExitPending: the answer is that a pod would stay Pending (explain
	// on a pod that fits nowhere, simulate when any pod it placed fits
	// nowhere).
	ExitPending = 2
)

// exitCodesHelp is the paragraph of --help that lists the exit codes of a
// command that answers whether pods fit.
const exitCodesHelp = "Exit codes: 0 the pod is bound or would be placed (simulate: every pod would be\n" +
	"placed); 2 a pod would stay Pending; 1 an error (bad input, the API unreachable, a\n" +
	"request refused)."

// ExitCodeError is an error that asks Execute and ExecuteArgv for an exit
// code other than ExitError: ExitPending when a command's answer is that a
// pod would stay Pending. Its message is printed to stderr like any error's.
type ExitCodeError struct {
	Code int
	Err  error
}

// Error returns the message of the wrapped error.
func (e *ExitCodeError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *ExitCodeError) Unwrap() error { return e.Err }

// ErrPending is the error wrapped, with ExitPending, when a pod would stay
// Pending.
var ErrPending = errors.New("would stay Pending")

// pendingError returns the ExitPending error for what (a pod, or "2 of 5
// pods").
func pendingError(what string) error {
	return &ExitCodeError{Code: ExitPending, Err: fmt.Errorf("%s %w", what, ErrPending)}
}

// exitCode returns the exit code for err.
func exitCode(err error) int {
	if err == nil {
		return ExitPlaced
	}
	if ec, ok := errors.AsType[*ExitCodeError](err); ok {
		return ec.Code
	}
	return ExitError
}

// runRoot runs root with args and returns its exit code, printing an
// error to stderr after prefix.
func runRoot(root *cobra.Command, args []string, stderr io.Writer, prefix string) int {
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		fmt.Fprintln(stderr, prefix+":", err)
	}
	return exitCode(err)
}

// Output formats of -o, as kubectl names them.
const (
	outputTable = ""
	outputWide  = "wide"
	outputJSON  = "json"
	outputYAML  = "yaml"
	outputName  = "name"
)

// outputFormats are the values -o takes.
var outputFormats = []string{outputWide, outputJSON, outputYAML, outputName}

// legacyOutputTable is what -o's default was before it followed kubectl,
// which has no name for its table: still taken, as the table, so that
// scripts that spelled it out keep working.
const legacyOutputTable = "table"

// checkOutput returns an error when -o is not one of outputFormats (or
// empty, the table), before anything is read; it turns
// legacyOutputTable into outputTable.
func checkOutput(o *string) error {
	return checkOutputOf(o, outputFormats)
}

// reportOutputFormats are the values -o of explain load and explain
// bandwidth takes: their rows are nodes seen by one or several plugins,
// not objects with one answer each, so there is no -o name.
var reportOutputFormats = []string{outputWide, outputJSON, outputYAML}

// checkOutputOf is checkOutput for a command that takes the formats
// allowed, refusing the others with kubectl's message.
func checkOutputOf(o *string, allowed []string) error {
	if *o == legacyOutputTable {
		*o = outputTable
	}
	if *o == outputTable || slices.Contains(allowed, *o) {
		return nil
	}
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", *o, strings.Join(allowed, ","))
}

// newConfigFlags returns kubectl's flags for reaching a cluster
// (cli-runtime's ConfigFlags): --kubeconfig, --context, --cluster,
// --user, -n/--namespace, --as, --as-group, --as-uid, --token,
// --server/-s, --certificate-authority, --insecure-skip-tls-verify,
// --request-timeout and the rest, with kubectl's meaning. --cache-dir
// is left out: it is the discovery cache's, which nothing here uses.
func newConfigFlags() *genericclioptions.ConfigFlags {
	cf := genericclioptions.NewConfigFlags(false)
	cf.CacheDir = nil
	return cf
}

// restConfig returns the client configuration cf's flags and kubeconfig
// give, as kubectl builds it.
func restConfig(cf *genericclioptions.ConfigFlags) (*rest.Config, error) {
	cfg, err := cf.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "kubectl-yardmaster/" + version.Version
	// As kubectl prints them: "Warning: ..." on stderr, each once.
	cfg.WarningHandler = rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true})
	return cfg, nil
}

// namespace returns the namespace of the request, as kubectl chooses it:
// -n, else the current context's namespace, else "default".
func namespace(cf *genericclioptions.ConfigFlags) (string, error) {
	ns, _, err := cf.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("load kubeconfig: %w", err)
	}
	return ns, nil
}

// podTypes are the TYPE of TYPE/NAME that name pods, as kubectl's
// RESTMapper resolves them: the resource, its singular and its short
// name.
var podTypes = []string{"pods", "pod", "po"}

// podGroupTypes are the TYPE of TYPE/NAME that name pod groups: the
// resource, its singular and its short name, as for pods. Both
// scheduling.k8s.io (native) and scheduling.x-k8s.io (scheduler-plugins'
// CRD) serve a resource podgroups; TYPE.GROUP, as kubectl reads it
// (podgroups.scheduling.x-k8s.io), names one of them.
var podGroupTypes = []string{"podgroups", "podgroup", "pg"}

// explainTarget is what explain is asked about: a pod, or a pod group
// (of api, "" for whichever has a PodGroup of that name).
type explainTarget struct {
	name     string
	podGroup bool
	api      string
}

// parsePodArgs reads explain's arguments as kubectl reads a pod's: NAME,
// TYPE/NAME or TYPE NAME, TYPE one of podTypes (any case). The namespace
// comes from -n or the context, never from the argument.
func parsePodArgs(args []string) (string, error) {
	t, err := parseExplainArgs(args)
	if err != nil {
		return "", err
	}
	if t.podGroup {
		return "", fmt.Errorf("explain takes a pod here, not a pod group")
	}
	return t.name, nil
}

// parseExplainArgs reads explain's arguments as kubectl reads them: NAME
// (a pod), TYPE/NAME or TYPE NAME, TYPE one of podTypes or of
// podGroupTypes, the latter optionally .scheduling.k8s.io or
// .scheduling.x-k8s.io (any case).
func parseExplainArgs(args []string) (explainTarget, error) {
	var typ, name string
	switch len(args) {
	case 1:
		var ok bool
		if typ, name, ok = strings.Cut(args[0], "/"); !ok {
			typ, name = "pod", args[0]
		}
	case 2:
		typ, name = args[0], args[1]
		if strings.Contains(name, "/") {
			return explainTarget{}, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl yardmaster explain pod/NAME' instead of 'explain pod pod/NAME')")
		}
	default:
		return explainTarget{}, fmt.Errorf("explain takes one pod or pod group: NAME, pod/NAME, pod NAME or podgroup/NAME, got %d arguments", len(args))
	}
	t := explainTarget{name: name}
	typ = strings.ToLower(typ)
	resourceName, api, _ := strings.Cut(typ, ".")
	switch {
	case api == "" && slices.Contains(podTypes, typ):
	case slices.Contains(podGroupTypes, resourceName) && (api == "" || api == framework.NativePodGroups.String() || api == framework.CoschedulingPodGroups.String()):
		t.podGroup, t.api = true, api
	default:
		return explainTarget{}, fmt.Errorf("explain takes a pod, not %q: write pod/NAME, pods/NAME, po/NAME or NAME, with -n NAMESPACE for another namespace than the context's (NAMESPACE/NAME is not read); podgroup/NAME (podgroups/, pg/; podgroups.scheduling.k8s.io/ or podgroups.scheduling.x-k8s.io/ to choose the API) for a pod group", typ)
	}
	if name == "" || strings.Contains(name, "/") {
		what := "pod"
		if t.podGroup {
			what = "pod group"
		}
		return explainTarget{}, fmt.Errorf("%q is not a %s name", name, what)
	}
	return t, nil
}

// asKubectlPlugin reports whether the binary runs as kubectl's plugin:
// its name (argv[0]) is kubectl-yardmaster.
func asKubectlPlugin(argv0 string) bool {
	return programName(argv0) == KubectlPluginName
}

// KubeSchedulerName is the name under which the binary stands in for
// kube-scheduler: the image's /usr/local/bin/kube-scheduler, a symlink, so
// that a manifest written for kube-scheduler runs yardmaster with only the
// image changed. Under it the scheduler takes kube-scheduler's default
// profile and Lease names (config.Overrides.KubeSchedulerDefaults).
const KubeSchedulerName = "kube-scheduler"

// programName returns the name the binary was run by.
func programName(argv0 string) string {
	return strings.TrimSuffix(filepath.Base(argv0), ".exe")
}

// kubectlPluginCommand returns the commands `kubectl yardmaster` offers:
// explain (with explain bandwidth and explain load) and simulate, which
// only read, and version.
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

// NewKubectlCommand returns the root command of `kubectl yardmaster`
// (the binary run as KubectlPluginName) with the plugins of opts.
func NewKubectlCommand(opts ...Option) *cobra.Command {
	s := newSettings(opts)
	root := kubectlPluginCommand(s.registry)
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return s.err }
	return root
}

// ExecuteArgv is Execute for a whole argv: as kubectl-yardmaster (a
// symlink), the kubectl plugin's commands; otherwise yardmaster's, with
// kube-scheduler's default names when run as kube-scheduler
// (KubeSchedulerName). It is
// what a main package calls, with the Options of its plugins, and returns
// the exit code: ExitPlaced, ExitPending or ExitError.
func ExecuteArgv(argv []string, opts ...Option) int {
	if len(argv) > 0 && asKubectlPlugin(argv[0]) {
		return runRoot(NewKubectlCommand(opts...), argv[1:], os.Stderr, "kubectl yardmaster")
	}
	if len(argv) > 0 && programName(argv[0]) == KubeSchedulerName {
		opts = append(slices.Clip(opts), func(s *settings) { s.kubeSchedulerDefaults = true })
	}
	return Execute(argv[1:], opts...)
}
