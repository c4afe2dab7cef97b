package config

import (
	"fmt"
	"slices"
	"time"
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
}

// Apply sets o on c and validates the result. On error c is unchanged.
func (c *Config) Apply(o Overrides) error {
	n := *c
	n.Profiles = slices.Clone(c.Profiles)
	set(&n.ClientConnection.Kubeconfig, o.Kubeconfig)
	set(&n.ClientConnection.AcceptContentTypes, o.AcceptContentTypes)
	set(&n.ClientConnection.ContentType, o.ContentType)
	set(&n.ClientConnection.QPS, o.QPS)
	set(&n.ClientConnection.Burst, o.Burst)
	set(&n.Parallelism, o.Parallelism)
	set(&n.PercentageOfNodesToScore, o.PercentageOfNodesToScore)
	set(&n.PodInitialBackoff, o.PodInitialBackoff)
	set(&n.PodMaxBackoff, o.PodMaxBackoff)
	le := &n.LeaderElection
	set(&le.LeaderElect, o.LeaderElect)
	set(&le.LeaseDuration, o.LeaseDuration)
	set(&le.RenewDeadline, o.RenewDeadline)
	set(&le.RetryPeriod, o.RetryPeriod)
	set(&le.ResourceLock, o.ResourceLock)
	set(&le.ResourceNamespace, o.ResourceNamespace)
	if o.SchedulerName != nil {
		if len(n.Profiles) != 1 {
			return fmt.Errorf("--scheduler-name renames the one profile, but the configuration has %d profiles: name them in the file", len(n.Profiles))
		}
		n.Profiles[0].SchedulerName = *o.SchedulerName
		if n.leaseNameFromProfile {
			le.ResourceName = *o.SchedulerName
		}
	}
	if o.ResourceName != nil {
		le.ResourceName = *o.ResourceName
		n.leaseNameFromProfile = false
	}
	p := newProblems()
	n.validate(p)
	if err := p.err(); err != nil {
		return fmt.Errorf("with the command-line flags applied:\n%w", err)
	}
	*c = n
	return nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
