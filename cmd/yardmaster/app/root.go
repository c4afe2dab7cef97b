// Package app is the yardmaster command line: it parses flags, builds
// clients and informers and wires the scheduler packages together. It does
// no scheduling work itself.
//
// It is also how an outside module builds yardmaster with plugins of its
// own: a main package of a few lines,
//
//	func main() {
//		os.Exit(app.ExecuteArgv(os.Args, app.WithPlugin(nodepool.Registration())))
//	}
//
// builds a binary that is yardmaster in every respect (kube-scheduler's
// command line, the configuration file, leader election, secure serving,
// metrics, explain, simulate) and knows the plugin by its name: a
// KubeSchedulerConfiguration enables, weighs and configures it as any
// built-in plugin. See docs/plugins.md.
package app

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/internal/version"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// Option changes what NewCommand builds.
type Option func(*settings)

// settings are what the Options set.
type settings struct {
	registry framework.Registry
	// err is the first Option that failed; every command returns it.
	err error
	// kubeSchedulerDefaults: the scheduler commands take kube-scheduler's
	// default profile and Lease names (ExecuteArgv sets it when the binary
	// runs as kube-scheduler).
	kubeSchedulerDefaults bool
}

// WithPlugin adds a plugin to the built-in ones: its name can then be
// used in a configuration file wherever its Registration's Points allow,
// with its args in pluginConfig, by every command (run, config validate,
// explain, simulate). A name already registered (a built-in plugin's, or
// an earlier WithPlugin's) is refused when the command runs.
func WithPlugin(r framework.Registration) Option {
	return func(s *settings) {
		if err := s.registry.Register(r); err != nil && s.err == nil {
			s.err = fmt.Errorf("app.WithPlugin: %w", err)
		}
	}
}

func newSettings(opts []Option) *settings {
	s := &settings{registry: registry.NewInTree()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// NewCommand returns yardmaster's root command with the plugins of opts:
// run with no subcommand, it runs the scheduler, as kube-scheduler does,
// so that a kube-scheduler manifest runs it with only the image changed
// (`run` is the same command). Errors are returned, not printed:
// ExecuteArgv prints them and gives the exit code.
func NewCommand(opts ...Option) *cobra.Command {
	s := newSettings(opts)
	root := newSchedulerCommand("yardmaster", "A Kubernetes scheduler for pods that set spec.schedulerName to it", s)
	root.SilenceUsage = true
	root.SilenceErrors = true
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return s.err }
	root.AddCommand(newSchedulerCommand("run", "Run the scheduler", s), newConfigCommand(s.registry),
		newExplainBandwidthCommand(s.registry, "explain-bandwidth"), newExplainLoadCommand(s.registry, "explain-load"), newExplainCommand(s.registry),
		newSimulateCommand(s.registry), newVersionCommand())
	return root
}

// Execute runs the command line args (without the program name) and
// returns the process exit code: ExitPlaced (0) when it succeeded,
// ExitPending (2) when explain or simulate answered that a pod would stay
// Pending, ExitError (1) on any error, which it prints to stderr.
func Execute(args []string, opts ...Option) int {
	return runRoot(NewCommand(opts...), args, os.Stderr, "yardmaster")
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "yardmaster", version.String())
		},
	}
}
