package app

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/framework"
)

// newConfigCommand returns `yardmaster config`: print the default
// configuration, or check a file and print what it resolves to.
func newConfigCommand(reg framework.Registry) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print or check KubeSchedulerConfiguration files",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "print-defaults",
		Short: "Print the effective configuration when no file is given",
		Long: "Print, as a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration, every setting\n" +
			"and every profile's plugins, weights and arguments that yardmaster uses without a file.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := config.DefaultWith(reg).Marshal()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}, &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a configuration file and print its effective configuration",
		Long: "Check FILE as `yardmaster run --config FILE` would, and print the configuration it\n" +
			"resolves to: defaults filled in, each profile's plugins listed per extension point with\n" +
			"their weights and arguments. A bad file prints every problem with its line and field path\n" +
			"and exits with status 1.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := config.LoadWith(args[0], reg, config.Overrides{})
			if err != nil {
				return err
			}
			out, err := c.Marshal()
			if err != nil {
				return err
			}
			if _, err := cmd.OutOrStdout().Write(out); err != nil {
				return err
			}
			for _, w := range config.FormatProblems(args[0], c.Warnings, "warning: ") {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: valid\n", args[0])
			return nil
		},
	})
	return cmd
}

// configOverrides collects the configuration flags set on cmd's command
// line. A flag that cmd does not define is skipped, so `run` can grow its
// flags (the --leader-elect-* family, say) without changing this.
func configOverrides(cmd *cobra.Command) (config.Overrides, error) {
	fs := cmd.Flags()
	var o config.Overrides
	var errs []error
	changed := func(name string) bool {
		f := fs.Lookup(name)
		return f != nil && f.Changed
	}
	str := func(name string, dst **string) {
		if changed(name) {
			v, err := fs.GetString(name)
			errs = append(errs, err)
			*dst = &v
		}
	}
	dur := func(name string, dst **time.Duration) {
		if changed(name) {
			v, err := fs.GetDuration(name)
			errs = append(errs, err)
			*dst = &v
		}
	}
	str("kubeconfig", &o.Kubeconfig)
	str("scheduler-name", &o.SchedulerName)
	str("kube-api-content-type", &o.ContentType)
	if changed("kube-api-qps") {
		v, err := fs.GetFloat32("kube-api-qps")
		errs = append(errs, err)
		o.QPS = &v
	}
	if changed("kube-api-burst") {
		v, err := fs.GetInt("kube-api-burst")
		errs = append(errs, err)
		o.Burst = &v
	}
	if changed("parallelism") {
		v, err := fs.GetInt("parallelism")
		errs = append(errs, err)
		o.Parallelism = &v
	}
	if changed("percentage-of-nodes-to-score") {
		v, err := fs.GetInt32("percentage-of-nodes-to-score")
		errs = append(errs, err)
		o.PercentageOfNodesToScore = &v
	}
	dur("pod-initial-backoff", &o.PodInitialBackoff)
	dur("pod-max-backoff", &o.PodMaxBackoff)
	if changed("leader-elect") {
		v, err := fs.GetBool("leader-elect")
		errs = append(errs, err)
		o.LeaderElect = &v
	}
	dur("leader-elect-lease-duration", &o.LeaseDuration)
	dur("leader-elect-renew-deadline", &o.RenewDeadline)
	dur("leader-elect-retry-period", &o.RetryPeriod)
	str("leader-elect-resource-lock", &o.ResourceLock)
	str("leader-elect-resource-name", &o.ResourceName)
	str("leader-elect-resource-namespace", &o.ResourceNamespace)
	for _, err := range errs {
		if err != nil {
			return config.Overrides{}, fmt.Errorf("read flags: %w", err)
		}
	}
	return o, nil
}
