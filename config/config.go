package config

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/scheduler/extender"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// Defaults. Every one equals kube-scheduler v1's except
// DefaultSchedulerName and the lease name (see LeaderElection).
const (
	// DefaultSchedulerName is the profile name when a file has one profile
	// and does not name it. kube-scheduler's is "default-scheduler", which
	// would have yardmaster compete with kube-scheduler for every pod.
	DefaultSchedulerName     = "yardmaster"
	DefaultParallelism       = 16
	DefaultPodInitialBackoff = time.Second
	DefaultPodMaxBackoff     = 10 * time.Second
	DefaultQPS               = 50
	DefaultBurst             = 100
	DefaultContentType       = "application/vnd.kubernetes.protobuf"
	DefaultLeaseDuration     = 15 * time.Second
	DefaultRenewDeadline     = 10 * time.Second
	DefaultRetryPeriod       = 2 * time.Second
	DefaultResourceLock      = "leases"
	DefaultResourceNamespace = metav1.NamespaceSystem
)

// The content types yardmaster's API clients can speak.
var contentTypes = []string{"application/vnd.kubernetes.protobuf", "application/json"}

// leaderElectionJitter is client-go's leaderelection.JitterFactor: a
// leader elector refuses a renewDeadline not above retryPeriod × 1.2.
const leaderElectionJitter = 1.2

// maxBackoffSeconds is the longest backoff a time.Duration holds.
const maxBackoffSeconds = math.MaxInt64 / int64(time.Second)

// Config is the effective configuration of a yardmaster process: defaulted
// and validated.
type Config struct {
	// Profiles are the scheduling profiles, one per schedulerName, with
	// their plugins resolved to the points yardmaster runs (multiPoint
	// expanded, enabled/disabled applied), score weights, and each
	// plugin's typed, defaulted, validated arguments.
	Profiles []framework.Profile
	// Registry is the registry the profiles' plugin names were resolved
	// in: the scheduler builds them from the same one.
	Registry framework.Registry
	// Parallelism bounds the goroutines that filter and score nodes.
	Parallelism int
	// PercentageOfNodesToScore: 0 means adaptive, as in kube-scheduler.
	PercentageOfNodesToScore int32
	// PodInitialBackoff and PodMaxBackoff bound the backoff of a pod that
	// failed to schedule.
	PodInitialBackoff, PodMaxBackoff time.Duration
	ClientConnection                 ClientConnection
	LeaderElection                   LeaderElection
	// EnableProfiling serves net/http/pprof on the daemon's HTTP endpoint.
	EnableProfiling bool
	// EnableContentionProfiling also records block and mutex profiles
	// (runtime.SetBlockProfileRate(1), as kube-scheduler does).
	EnableContentionProfiling bool
	// DelayCacheUntilActive, with leader election, starts the informers
	// only once this replica leads: a standby holds no cache (less memory,
	// a slower takeover, not ready until it leads). Without leader election
	// it changes nothing. kube-scheduler's field, same meaning.
	DelayCacheUntilActive bool
	// Extenders are kube-scheduler's HTTP extenders, in file order.
	Extenders []extender.Config

	// Warnings are what the file has that kube-scheduler accepts and
	// ignores (a weight where no weight applies, args for a plugin nothing
	// enables, ...): yardmaster ignores them too, and says so. In file
	// order; FormatProblems prints them.
	Warnings []FieldError

	// leaseNameFromProfile records that LeaderElection.ResourceName was
	// defaulted from the first profile's name, so that renaming that
	// profile with --scheduler-name renames the lease too.
	leaseNameFromProfile bool
	// profileNameDefaulted records that the lone profile's schedulerName
	// is DefaultSchedulerName because the file named none.
	profileNameDefaulted bool
}

// ClientConnection configures the clients to the API server.
type ClientConnection struct {
	// Kubeconfig is a kubeconfig path; empty means $KUBECONFIG, then the
	// in-cluster configuration.
	Kubeconfig string
	// AcceptContentTypes is the Accept header; empty leaves client-go's.
	AcceptContentTypes string
	// ContentType is the encoding of requests.
	ContentType string
	// QPS and Burst are the client-side rate limit; a negative QPS turns it
	// off (client-go's meaning).
	QPS   float32
	Burst int
}

// RESTConfig returns a copy of base with the connection settings applied.
func (cc ClientConnection) RESTConfig(base *rest.Config) *rest.Config {
	rc := rest.CopyConfig(base)
	rc.QPS = cc.QPS
	rc.Burst = cc.Burst
	rc.ContentType = cc.ContentType
	if cc.AcceptContentTypes != "" {
		rc.AcceptContentTypes = cc.AcceptContentTypes
	}
	return rc
}

// LeaderElection configures leader election: with LeaderElect, only the
// process holding the Lease ResourceNamespace/ResourceName schedules.
type LeaderElection struct {
	LeaderElect   bool
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// ResourceLock is always "leases".
	ResourceLock string
	// ResourceName defaults to the first profile's schedulerName, so that
	// two differently named yardmasters (or yardmaster and kube-scheduler)
	// never share a lease.
	ResourceName      string
	ResourceNamespace string
}

// Default returns the configuration of a file that sets nothing: one
// profile named DefaultSchedulerName with the default plugins, and every
// setting at kube-scheduler's default. Its plugins are the built-in ones.
func Default() *Config {
	return DefaultWith(registry.NewInTree())
}

// DefaultWith is Default with the plugins of reg.
func DefaultWith(reg framework.Registry) *Config {
	c, err := build(&fileConfig{APIVersion: apiV1, Kind: kindConfig}, newDecoder(newProblems()), reg, Overrides{})
	if err != nil {
		panic(fmt.Sprintf("config: the defaults do not validate: %v", err)) // a programming error
	}
	return c
}

// Load reads, decodes, defaults and validates the configuration file at
// path, against the built-in plugins. A bad file gives an *Error naming
// the file, the field path and the line of every problem; a missing or
// unreadable file, the read error.
func Load(path string) (*Config, error) {
	return LoadWith(path, registry.NewInTree(), Overrides{})
}

// LoadWithOverrides is Load with command-line settings applied over the
// file before it is validated, as kube-scheduler applies its
// --leader-elect-* flags: a file whose leaderElection would be refused
// loads with --leader-elect=false.
func LoadWithOverrides(path string, o Overrides) (*Config, error) {
	return LoadWith(path, registry.NewInTree(), o)
}

// LoadWith is LoadWithOverrides against the plugins of reg: a plugin name
// of the file is looked up there, and its pluginConfig args decoded into
// its Registration's NewArgs and checked by its ValidateArgs.
func LoadWith(path string, reg framework.Registry, o Overrides) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	c, err := decode(data, reg, o)
	if e, ok := err.(*Error); ok {
		e.File = path
	}
	return c, err
}

// Decode is Load from bytes.
func Decode(data []byte) (*Config, error) {
	return decode(data, registry.NewInTree(), Overrides{})
}

// DecodeWith is Decode against the plugins of reg.
func DecodeWith(data []byte, reg framework.Registry) (*Config, error) {
	return decode(data, reg, Overrides{})
}

// decode is Decode with the registry to look plugins up in and the
// overrides to apply before validating.
func decode(data []byte, reg framework.Registry, o Overrides) (*Config, error) {
	p := newProblems()
	root := parseYAML(data, p)
	if root == nil {
		return nil, p.err()
	}
	if !checkTypeMeta(root, p) {
		return nil, p.err()
	}
	d := newDecoder(p)
	d.json = readsAsJSON(data)
	var f fileConfig
	d.decode(root, reflect.ValueOf(&f).Elem(), "")
	if err := p.err(); err != nil {
		return nil, err
	}
	return build(&f, d, reg, o)
}

// checkTypeMeta checks apiVersion and kind before anything else: a file of
// another kind or version would otherwise give a list of unknown fields.
func checkTypeMeta(root *yaml.Node, p *problems) bool {
	var apiVersion, kind *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "apiVersion":
			apiVersion = root.Content[i+1]
		case "kind":
			kind = root.Content[i+1]
		}
	}
	ok := true
	switch {
	case kind == nil:
		p.addNode(root, "kind", "required: kind: %s", kindConfig)
		ok = false
	case kind.Kind != yaml.ScalarNode || kind.Value != kindConfig:
		p.addNode(kind, "kind", "must be %s, got %s", kindConfig, describe(kind))
		ok = false
	}
	switch {
	case apiVersion == nil:
		p.addNode(root, "apiVersion", "required: apiVersion: %s", apiV1)
		ok = false
	case apiVersion.Kind != yaml.ScalarNode:
		p.addNode(apiVersion, "apiVersion", "must be %s, got %s", apiV1, describe(apiVersion))
		ok = false
	case apiVersion.Value == apiV1:
	case legacyVersions[apiVersion.Value]:
		explainLegacy(root, apiVersion, p)
		ok = false
	default:
		p.addNode(apiVersion, "apiVersion", "unsupported %s: yardmaster reads %s", describe(apiVersion), apiV1)
		ok = false
	}
	return ok
}

// build defaults a decoded file, applies o and validates the result.
func build(f *fileConfig, d *decoder, reg framework.Registry, o Overrides) (*Config, error) {
	p := d.p
	c := &Config{
		Registry:                  reg,
		Parallelism:               DefaultParallelism,
		PodInitialBackoff:         DefaultPodInitialBackoff,
		PodMaxBackoff:             DefaultPodMaxBackoff,
		EnableProfiling:           true,
		EnableContentionProfiling: true,
	}
	if f.Parallelism != nil {
		c.Parallelism = int(*f.Parallelism)
	}
	if f.PercentageOfNodesToScore != nil {
		c.PercentageOfNodesToScore = *f.PercentageOfNodesToScore
	}
	c.PodInitialBackoff = backoff(f.PodInitialBackoffSeconds, DefaultPodInitialBackoff, "podInitialBackoffSeconds", p)
	c.PodMaxBackoff = backoff(f.PodMaxBackoffSeconds, DefaultPodMaxBackoff, "podMaxBackoffSeconds", p)
	if f.EnableProfiling != nil {
		c.EnableProfiling = *f.EnableProfiling
	}
	// As kube-scheduler: contention profiling follows profiling unless set.
	c.EnableContentionProfiling = c.EnableProfiling
	if f.EnableContentionProfiling != nil {
		c.EnableContentionProfiling = *f.EnableContentionProfiling
	}
	if f.DelayCacheUntilActive != nil {
		c.DelayCacheUntilActive = *f.DelayCacheUntilActive
	}

	cc := f.ClientConnection
	if cc == nil {
		cc = &fileClientConnection{}
	}
	c.ClientConnection = ClientConnection{
		Kubeconfig:         cc.Kubeconfig,
		AcceptContentTypes: cc.AcceptContentTypes,
		ContentType:        cmpOr(cc.ContentType, DefaultContentType),
		QPS:                cc.QPS,
		Burst:              int(cc.Burst),
	}
	if c.ClientConnection.QPS == 0 {
		c.ClientConnection.QPS = DefaultQPS
	}
	if c.ClientConnection.Burst == 0 {
		c.ClientConnection.Burst = DefaultBurst
	}

	le := f.LeaderElection
	if le == nil {
		le = &fileLeaderElection{}
	}
	c.LeaderElection = LeaderElection{
		LeaderElect:       true,
		LeaseDuration:     duration(le.LeaseDuration, DefaultLeaseDuration),
		RenewDeadline:     duration(le.RenewDeadline, DefaultRenewDeadline),
		RetryPeriod:       duration(le.RetryPeriod, DefaultRetryPeriod),
		ResourceLock:      cmpOr(le.ResourceLock, DefaultResourceLock),
		ResourceName:      le.ResourceName,
		ResourceNamespace: cmpOr(le.ResourceNamespace, DefaultResourceNamespace),
	}
	if le.LeaderElect != nil {
		c.LeaderElection.LeaderElect = *le.LeaderElect
	}

	c.Extenders = buildExtenders(f.Extenders, p)

	c.Profiles = buildProfiles(f.Profiles, d, newCatalog(reg))
	c.profileNameDefaulted = len(f.Profiles) == 0 || len(f.Profiles) == 1 && f.Profiles[0].SchedulerName == nil
	ignoreExtendersResources(c.Profiles, c.Extenders)
	if c.LeaderElection.ResourceName == "" && len(c.Profiles) > 0 {
		c.LeaderElection.ResourceName = c.Profiles[0].SchedulerName
		c.leaseNameFromProfile = true
	}
	if err := c.override(o); err != nil {
		return nil, err
	}
	c.validate(p)
	p.noteFlags(o.flagPaths())
	if err := p.err(); err != nil {
		return nil, err
	}
	if len(p.warnings) > 0 {
		c.Warnings = inFileOrder(p.warnings)
	}
	return c, nil
}

// buildProfiles defaults, resolves and checks the profiles.
func buildProfiles(fps []fileProfile, d *decoder, cat *catalog) []framework.Profile {
	p := d.p
	if len(fps) == 0 {
		fps = []fileProfile{{}}
	}
	var out []framework.Profile
	names := map[string]int{}
	for i, fp := range fps {
		path := indexPath("profiles", i)
		name := ""
		switch {
		case fp.SchedulerName != nil:
			name = *fp.SchedulerName
		case len(fps) == 1:
			// As kube-scheduler: only a lone profile gets a default name.
			name = DefaultSchedulerName
		}
		np := childPath(path, "schedulerName")
		if j, dup := names[name]; dup && name != "" {
			p.add(np, "duplicate schedulerName %q (also profiles[%d])", name, j)
		} else {
			names[name] = i
		}
		prof, built, ok := resolvePlugins(cat, fp.Plugins, path, p)
		prof.SchedulerName = name
		prof.PercentageOfNodesToScore = fp.PercentageOfNodesToScore
		prof.Args = decodePluginConfig(d, cat, fp.PluginConfig, path, built)
		if ok {
			for _, n := range prof.Plugins() {
				r, _ := cat.lookup(n)
				if _, done := prof.Args[n]; !done && r.NewArgs != nil {
					a := r.NewArgs()
					defaultArgs(a)
					if r.ValidateArgs != nil {
						if err := r.ValidateArgs(a); err != nil {
							addDefaultArgsError(p, path, n, err)
							continue
						}
					}
					prof.Args[n] = a
				}
			}
		}
		out = append(out, prof)
	}
	checkCommonQueueSort(fps, d)
	return out
}

// checkCommonQueueSort refuses profiles whose queueSort sets or queue-sort
// plugin args differ, as kube-scheduler does: all profiles share one
// queue. Like kube-scheduler it compares the sets as written (a weight and
// the order count), not what they resolve to.
func checkCommonQueueSort(fps []fileProfile, d *decoder) {
	if len(fps) < 2 {
		return
	}
	set := func(fp fileProfile) (enabled []filePlugin, disabled []string) {
		if fp.Plugins == nil {
			return nil, nil
		}
		qs := fp.Plugins.QueueSort
		for _, pl := range qs.Enabled {
			if pl.Weight != nil && *pl.Weight == 0 {
				pl.Weight = nil // kube-scheduler's int32 cannot tell 0 from unset
			}
			enabled = append(enabled, pl)
		}
		for _, pl := range qs.Disabled {
			disabled = append(disabled, pl.Name) // a disabled weight is dropped
		}
		return enabled, disabled
	}
	argsOf := func(fp fileProfile, name string) (any, bool) {
		for _, pc := range fp.PluginConfig {
			if pc.Name == name {
				n, _ := pc.Args.(*yaml.Node)
				if n == nil {
					return nil, true
				}
				v, err := d.plain(n, 0)
				return v, err == nil
			}
		}
		return nil, false
	}
	enabled0, disabled0 := set(fps[0])
	sortName := ""
	if len(enabled0) > 0 {
		sortName = enabled0[0].Name
	}
	args0, _ := argsOf(fps[0], sortName)
	// When it builds the profiles, kube-scheduler also compares the args of
	// the queue-sort plugin each resolves to (PrioritySort, in yardmaster),
	// whether or not queueSort is written: an entry in one profile only
	// differs from none.
	resolved0, _ := argsOf(fps[0], registry.PrioritySortName)
	argsMessage := "the args of queue-sort plugin %q must be the same for all profiles (as profiles[0]'s): they share one scheduling queue"
	for i := 1; i < len(fps); i++ {
		path := indexPath("profiles", i)
		enabled, disabled := set(fps[i])
		if !slices.EqualFunc(enabled0, enabled, func(a, b filePlugin) bool {
			return a.Name == b.Name && reflect.DeepEqual(a.Weight, b.Weight)
		}) || !slices.Equal(disabled0, disabled) {
			d.p.add(childPath(childPath(path, "plugins"), framework.PointQueueSort),
				"must be the same for all profiles (as profiles[0]'s): they share one scheduling queue")
		}
		if sortName != "" {
			if args, ok := argsOf(fps[i], sortName); ok && !reflect.DeepEqual(args0, args) {
				d.p.add(childPath(path, "pluginConfig"), argsMessage, sortName)
				continue
			}
		}
		if resolved, ok := argsOf(fps[i], registry.PrioritySortName); !reflect.DeepEqual(resolved0, resolved) {
			at := path
			if ok {
				at = childPath(path, "pluginConfig")
			}
			d.p.add(at, argsMessage, registry.PrioritySortName)
		}
	}
}

// validate checks the defaulted settings, as kube-scheduler does and for
// what client-go will refuse later, recording problems by field path.
func (c *Config) validate(p *problems) {
	if c.Parallelism <= 0 {
		p.add("parallelism", "must be > 0 (got %d)", c.Parallelism)
	}
	checkPercentage(p, "percentageOfNodesToScore", c.PercentageOfNodesToScore)
	if c.PodInitialBackoff <= 0 {
		p.add("podInitialBackoffSeconds", "must be > 0 (got %d)", int64(c.PodInitialBackoff/time.Second))
	}
	if c.PodMaxBackoff < c.PodInitialBackoff {
		p.add("podMaxBackoffSeconds", "must be ≥ podInitialBackoffSeconds (%v), got %v", c.PodInitialBackoff, c.PodMaxBackoff)
	}

	cc := c.ClientConnection
	if cc.Burst < 0 {
		p.add("clientConnection.burst", "must be ≥ 0 (got %d)", cc.Burst)
	}
	if math.IsNaN(float64(cc.QPS)) || math.IsInf(float64(cc.QPS), 0) {
		p.add("clientConnection.qps", "must be a finite number")
	}
	if !slices.Contains(contentTypes, cc.ContentType) {
		p.add("clientConnection.contentType", "unsupported %q: yardmaster speaks %q or %q", cc.ContentType, contentTypes[0], contentTypes[1])
	}

	// Checked only when leader election is on, as kube-scheduler checks
	// them: with leaderElect false none of them is used.
	le := c.LeaderElection
	if le.LeaderElect {
		validateLeaderElection(p, le, c.leaseNameFromProfile)
	}

	for i, prof := range c.Profiles {
		path := indexPath("profiles", i)
		np := childPath(path, "schedulerName")
		if prof.SchedulerName == "" {
			p.add(np, "required: the spec.schedulerName of the pods this profile schedules")
		} else if msgs := validation.IsDNS1123Subdomain(prof.SchedulerName); len(msgs) > 0 {
			// The API server requires a pod's spec.schedulerName to be a
			// DNS subdomain: a profile named otherwise can never match a
			// pod. kube-scheduler accepts it all the same.
			p.warn(np, "%q can never match a pod's spec.schedulerName, so this profile schedules nothing: %s", prof.SchedulerName, strings.Join(msgs, "; "))
		}
		if prof.PercentageOfNodesToScore != nil {
			checkPercentage(p, childPath(path, "percentageOfNodesToScore"), *prof.PercentageOfNodesToScore)
		}
	}
}

// validateLeaderElection checks the leader election settings as
// kube-scheduler does when leaderElect is on, plus what client-go's leader
// elector and the API server would refuse once the process runs.
func validateLeaderElection(p *problems, le LeaderElection, nameFromProfile bool) {
	const lp = "leaderElection."
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"leaseDuration", le.LeaseDuration}, {"renewDeadline", le.RenewDeadline}, {"retryPeriod", le.RetryPeriod}} {
		if d.v <= 0 {
			p.add(lp+d.name, "must be > 0 (got %v)", d.v)
		}
	}
	// Named at leaseDuration, as kube-scheduler (component-base) names it.
	if le.RenewDeadline > 0 && le.LeaseDuration > 0 && le.LeaseDuration <= le.RenewDeadline {
		p.add(lp+"leaseDuration", "must be greater than renewDeadline (%v), got %v", le.RenewDeadline, le.LeaseDuration)
	}
	if le.RetryPeriod > 0 && le.RenewDeadline > 0 && float64(le.RenewDeadline) <= leaderElectionJitter*float64(le.RetryPeriod) {
		p.add(lp+"renewDeadline", "must be greater than retryPeriod × %.1f (%v), got %v (client-go's leader election requires it)",
			leaderElectionJitter, time.Duration(leaderElectionJitter*float64(le.RetryPeriod)), le.RenewDeadline)
	}
	if le.ResourceLock != DefaultResourceLock {
		p.add(lp+"resourceLock", "must be %q (got %q): yardmaster locks with a Lease only", DefaultResourceLock, le.ResourceLock)
	}
	// kube-scheduler does not check these two, but starts and then has
	// every Lease request refused by the API server; refused here first.
	for _, msg := range validation.IsDNS1123Subdomain(le.ResourceName) {
		if nameFromProfile && le.ResourceName == "" {
			break // the empty schedulerName is reported at the profile
		}
		if nameFromProfile {
			// yardmaster's own default (kube-scheduler's is "kube-scheduler").
			p.add(lp+"resourceName", "yardmaster's lease name defaults to the first profile's schedulerName, and %q is not a valid Lease name: %s; set leaderElection.resourceName", le.ResourceName, msg)
			continue
		}
		p.add(lp+"resourceName", "%q is not a valid Lease name: %s", le.ResourceName, msg)
	}
	for _, msg := range validation.IsDNS1123Label(le.ResourceNamespace) {
		p.add(lp+"resourceNamespace", "%q is not a valid namespace: %s", le.ResourceNamespace, msg)
	}
}

func checkPercentage(p *problems, path string, v int32) {
	if v < 0 || v > 100 {
		p.add(path, "must be within 0..100 (got %d; 0 means adaptive)", v)
	}
}

// backoff converts a backoff in seconds, checking it fits a time.Duration;
// whether it is positive is validate's business.
func backoff(seconds *int64, def time.Duration, path string, p *problems) time.Duration {
	if seconds == nil {
		return def
	}
	if *seconds > maxBackoffSeconds || *seconds < -maxBackoffSeconds {
		p.add(path, "must be within 1..%d seconds (got %d)", maxBackoffSeconds, *seconds)
		return def
	}
	return time.Duration(*seconds) * time.Second
}

// duration returns d, or def when the file left it out or wrote 0:
// kube-scheduler's leader election fields are plain metav1.Durations,
// which its defaulting treats as unset when zero.
func duration(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil || d.Duration == 0 {
		return def
	}
	return d.Duration
}
