package app

import (
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/yardmaster-io/yardmaster/internal/version"
)

// refusedKubeSchedulerFlags are kube-scheduler v1.37's flags that
// yardmaster does not take, each with why: a manifest written for
// kube-scheduler that sets one fails at once with that sentence, not with a
// bare "unknown flag", and not by running with a meaning it did not ask
// for. Every other kube-scheduler flag means what it means there
// (TestKubeSchedulerFlags compares with kube-scheduler's --help).
var refusedKubeSchedulerFlags = map[string]string{
	"feature-gates":                          "yardmaster has no feature gates: it turns features on from what the API server serves (docs/compatibility.md); remove the flag",
	"master":                                 "pass the API server's address in the kubeconfig (--kubeconfig) instead",
	"vmodule":                                "yardmaster logs with zap, which has no per-file verbosity; use --v or --log-level",
	"log-flush-frequency":                    "yardmaster's logger writes each line at once, with nothing to flush; remove the flag",
	"log-json-info-buffer-size":              "yardmaster's JSON logger does not buffer; remove the flag",
	"log-json-split-stream":                  "yardmaster writes every log line to stderr; remove the flag",
	"log-text-info-buffer-size":              "yardmaster's text logger does not buffer; remove the flag",
	"log-text-split-stream":                  "yardmaster writes every log line to stderr; remove the flag",
	"allow-metric-labels":                    "yardmaster's metrics have fixed label values (docs/reliability.md); remove the flag",
	"allow-metric-labels-manifest":           "yardmaster's metrics have fixed label values (docs/reliability.md); remove the flag",
	"disabled-metrics":                       "yardmaster cannot turn single metrics off; drop them in Prometheus's scrape configuration instead",
	"show-hidden-metrics-for-version":        "yardmaster has no hidden (deprecated) metrics to show; remove the flag",
	"emulated-version":                       "yardmaster has no version emulation: it serves the API servers of Kubernetes 1.35 to 1.37 as they are; remove the flag",
	"min-compatibility-version":              "yardmaster has no version emulation: it serves the API servers of Kubernetes 1.35 to 1.37 as they are; remove the flag",
	"pod-max-in-unschedulable-pods-duration": "kube-scheduler deprecated it; yardmaster keeps an unschedulable pod at most 5 minutes, as kube-scheduler's default, and wakes it on the events that can help it",
}

// addRefusedKubeSchedulerFlags adds the flags of refusedKubeSchedulerFlags
// to fs, hidden: set, each fails the command with its reason.
func addRefusedKubeSchedulerFlags(fs *pflag.FlagSet) {
	names := make([]string, 0, len(refusedKubeSchedulerFlags))
	for name := range refusedKubeSchedulerFlags {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fs.String(name, "", "kube-scheduler's; refused by yardmaster: "+refusedKubeSchedulerFlags[name])
		// A bare boolean form (--log-json-split-stream) parses too.
		fs.Lookup(name).NoOptDefVal = "true"
		_ = fs.MarkHidden(name)
	}
}

// refusedFlagError returns the error of the first refused flag set on
// the command line, or nil.
func refusedFlagError(fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		if why, ok := refusedKubeSchedulerFlags[f.Name]; ok && err == nil {
			err = fmt.Errorf("--%s is kube-scheduler's and yardmaster does not take it: %s", f.Name, why)
		}
	})
	return err
}

// kubeSchedulerExits handles kube-scheduler's flags that do their work and
// exit instead of running: --version prints the version, and
// --write-config-to writes the effective configuration (the file's, with
// the command line's overrides and every default) to its path, as
// kube-scheduler does. It reports whether the command is done.
func kubeSchedulerExits(cmd *cobra.Command, o Options, printVersion bool, writeConfigTo string) (bool, error) {
	if printVersion {
		fmt.Fprintln(cmd.OutOrStdout(), "yardmaster "+version.String())
		return true, nil
	}
	if writeConfigTo == "" {
		return false, nil
	}
	cfg, err := o.LoadConfig()
	if err != nil {
		return true, err
	}
	out, err := cfg.Marshal()
	if err != nil {
		return true, err
	}
	if err := os.WriteFile(writeConfigTo, out, 0o644); err != nil {
		return true, fmt.Errorf("--write-config-to: %w", err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote the configuration to %s\n", writeConfigTo)
	return true, nil
}
