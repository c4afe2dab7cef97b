package config

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Overrides are settings given on the command line. They take precedence
// over the file, which takes precedence over the defaults. A nil field was
// not given and leaves the configuration as it is.
type Overrides struct {
	Kubeconfig         *string
	AcceptContentTypes *string
	ContentType        *string
	QPS                *float32
	Burst              *int

	// SchedulerName renames the profile; it is an error when the
	// configuration has more than one. A lease name that was defaulted from
	// the profile name follows it.
	SchedulerName            *string
	Parallelism              *int
	PercentageOfNodesToScore *int32
	PodInitialBackoff        *time.Duration
	PodMaxBackoff            *time.Duration

	LeaderElect       *bool
	LeaseDuration     *time.Duration
	RenewDeadline     *time.Duration
	RetryPeriod       *time.Duration
	ResourceLock      *string
	ResourceName      *string
	ResourceNamespace *string

	// KubeSchedulerDefaults gives the two defaults in which yardmaster
	// differs from kube-scheduler kube-scheduler's values instead: a lone
	// profile the file does not name is "default-scheduler", and the
	// Lease the file does not name is "kube-scheduler". The binary run
	// under kube-scheduler's name sets it, so that a manifest written for
	// kube-scheduler (kubeadm's static pod) replaces it with only the
	// image changed: the same pods, and the same Lease, which a
	// kube-scheduler still running on another control-plane node holds
	// while the nodes are upgraded one by one.
	KubeSchedulerDefaults bool
}

// KubeSchedulerLease is kube-scheduler's default Lease name (see
// Overrides.KubeSchedulerDefaults); its default profile name is
// v1.DefaultSchedulerName.
const KubeSchedulerLease = "kube-scheduler"

// Apply sets o on c and validates the result. On error c is unchanged.
func (c *Config) Apply(o Overrides) error {
	n := *c
	n.Profiles = slices.Clone(c.Profiles)
	if err := n.override(o); err != nil {
		return err
	}
	p := newProblems()
	n.validate(p)
	if err := p.err(); err != nil {
		return fmt.Errorf("with the command-line flags applied:\n%w", err)
	}
	*c = n
	return nil
}

// override sets o on c without validating it.
func (c *Config) override(o Overrides) error {
	set(&c.ClientConnection.Kubeconfig, o.Kubeconfig)
	set(&c.ClientConnection.AcceptContentTypes, o.AcceptContentTypes)
	set(&c.ClientConnection.ContentType, o.ContentType)
	set(&c.ClientConnection.QPS, o.QPS)
	set(&c.ClientConnection.Burst, o.Burst)
	set(&c.Parallelism, o.Parallelism)
	set(&c.PercentageOfNodesToScore, o.PercentageOfNodesToScore)
	set(&c.PodInitialBackoff, o.PodInitialBackoff)
	set(&c.PodMaxBackoff, o.PodMaxBackoff)
	le := &c.LeaderElection
	if o.KubeSchedulerDefaults {
		if c.profileNameDefaulted {
			c.Profiles[0].SchedulerName = v1.DefaultSchedulerName
		}
		if c.leaseNameFromProfile {
			le.ResourceName = KubeSchedulerLease
			c.leaseNameFromProfile = false
		}
	}
	set(&le.LeaderElect, o.LeaderElect)
	set(&le.LeaseDuration, o.LeaseDuration)
	set(&le.RenewDeadline, o.RenewDeadline)
	set(&le.RetryPeriod, o.RetryPeriod)
	set(&le.ResourceLock, o.ResourceLock)
	set(&le.ResourceNamespace, o.ResourceNamespace)
	if o.SchedulerName != nil {
		if len(c.Profiles) != 1 {
			return fmt.Errorf("--scheduler-name renames the one profile, but the configuration has %d profiles: name them in the file", len(c.Profiles))
		}
		c.Profiles[0].SchedulerName = *o.SchedulerName
		if c.leaseNameFromProfile {
			le.ResourceName = *o.SchedulerName
		}
	}
	if o.ResourceName != nil {
		le.ResourceName = *o.ResourceName
		c.leaseNameFromProfile = false
	}
	return nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// flagPaths maps the field path of each setting o gives to its flag, so
// that a problem with a value from the command line says so.
func (o Overrides) flagPaths() map[string]string {
	m := map[string]string{}
	add := func(given bool, path, flag string) {
		if given {
			m[path] = flag
		}
	}
	add(o.Kubeconfig != nil, "clientConnection.kubeconfig", "--kubeconfig")
	add(o.ContentType != nil, "clientConnection.contentType", "--kube-api-content-type")
	add(o.QPS != nil, "clientConnection.qps", "--kube-api-qps")
	add(o.Burst != nil, "clientConnection.burst", "--kube-api-burst")
	add(o.SchedulerName != nil, "profiles[0].schedulerName", "--scheduler-name")
	add(o.Parallelism != nil, "parallelism", "--parallelism")
	add(o.PercentageOfNodesToScore != nil, "percentageOfNodesToScore", "--percentage-of-nodes-to-score")
	add(o.PodInitialBackoff != nil, "podInitialBackoffSeconds", "--pod-initial-backoff")
	add(o.PodMaxBackoff != nil, "podMaxBackoffSeconds", "--pod-max-backoff")
	add(o.LeaderElect != nil, "leaderElection.leaderElect", "--leader-elect")
	add(o.LeaseDuration != nil, "leaderElection.leaseDuration", "--leader-elect-lease-duration")
	add(o.RenewDeadline != nil, "leaderElection.renewDeadline", "--leader-elect-renew-deadline")
	add(o.RetryPeriod != nil, "leaderElection.retryPeriod", "--leader-elect-retry-period")
	add(o.ResourceLock != nil, "leaderElection.resourceLock", "--leader-elect-resource-lock")
	add(o.ResourceName != nil, "leaderElection.resourceName", "--leader-elect-resource-name")
	add(o.ResourceNamespace != nil, "leaderElection.resourceNamespace", "--leader-elect-resource-namespace")
	return m
}
