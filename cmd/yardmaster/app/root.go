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
	root := &cobra.Command{
		Use:           "yardmaster",
		Short:         "A Kubernetes scheduler for pods that set spec.schedulerName to it",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCommand(), newConfigCommand(), newExplainBandwidthCommand(), newVersionCommand())
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
