// Package app is the yardmaster command line: it parses flags, builds
// clients and informers and wires the scheduler packages together. It does
// no scheduling work itself.
package app

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/yardmaster-io/yardmaster/internal/version"
)

// Execute runs the command line and returns the process exit code.
func Execute(args []string) int {
	// yardmaster alone runs the scheduler, as kube-scheduler does, so that
	// a kube-scheduler manifest runs it with only the image changed; `run`
	// is the same command.
	root := newSchedulerCommand("yardmaster", "A Kubernetes scheduler for pods that set spec.schedulerName to it")
	root.SilenceUsage = true
	root.SilenceErrors = true
	root.AddCommand(newSchedulerCommand("run", "Run the scheduler"), newConfigCommand(), newExplainBandwidthCommand(), newExplainLoadCommand(), newExplainCommand(), newSimulateCommand(), newVersionCommand())
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "yardmaster:", err)
		return 1
	}
	return 0
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
