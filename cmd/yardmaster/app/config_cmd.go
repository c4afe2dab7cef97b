package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework"
)

// newConfigCommand returns `yardmaster config`: print the default
// configuration, check a file and print what it resolves to, or migrate an
// older file to v1.
func newConfigCommand(reg framework.Registry) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print, check or migrate KubeSchedulerConfiguration files",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newPrintDefaultsCommand(reg), newValidateCommand(reg), newMigrateCommand(reg))
	return cmd
}

// outputFlag adds -o/--output to cmd and returns where its value goes.
func outputFlag(cmd *cobra.Command, usage string) *string {
	var format string
	cmd.Flags().StringVarP(&format, "output", "o", "", usage)
	return &format
}

// checkConfigOutput returns an error when -o of print-defaults or
// validate is neither yaml nor json (empty: the command's default).
func checkConfigOutput(format string) error {
	switch format {
	case "", outputYAML, outputJSON:
		return nil
	}
	return fmt.Errorf("--output %q: want %q or %q", format, outputYAML, outputJSON)
}

// encodeConfig returns c as a v1 file in format (YAML unless json).
func encodeConfig(c *config.Config, format string) ([]byte, error) {
	if format == outputJSON {
		return c.MarshalJSON()
	}
	return c.Marshal()
}

func newPrintDefaultsCommand(reg framework.Registry) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "print-defaults",
		Short: "Print the effective configuration when no file is given",
		Long: "Print, as a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration, every setting\n" +
			"and every profile's plugins, weights and arguments that yardmaster uses without a file.\n" +
			"-o json prints the same as one JSON document.",
		Args: cobra.NoArgs,
	}
	format := outputFlag(cmd, "output format: yaml (the default) or json")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkConfigOutput(*format); err != nil {
			return err
		}
		out, err := encodeConfig(config.DefaultWith(reg), *format)
		if err != nil {
			return err
		}
		_, err = cmd.OutOrStdout().Write(out)
		return err
	}
	return cmd
}

// validationKind is the kind of the document `config validate -o json`
// prints, of the group and version of explain's (explain.APIVersion).
const validationKind = "ConfigValidation"

// ConfigValidation is what `config validate -o json` prints (kind
// ConfigValidation of yardmaster.io/v1alpha1, in docs/schemas/): whether the
// file is valid, every problem and warning with where it is, and the
// effective configuration when the file is valid.
type ConfigValidation struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	File       string          `json:"file"`
	Valid      bool            `json:"valid"`
	Problems   []ConfigProblem `json:"problems"`
	// Effective is the configuration the file resolves to, as a v1 file
	// (what -o yaml prints, in JSON); absent when the file is not valid.
	Effective json.RawMessage `json:"effective,omitempty"`
}

// ConfigProblem is one problem or warning of a ConfigValidation; Line and
// Column are 0 when the file has no position for it, Severity is "error"
// or "warning".
type ConfigProblem struct {
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Field    string `json:"field"`
	Message  string `json:"message"`
	Severity string `json:"severity"`
}

func problemsOf(list []config.FieldError, severity string) []ConfigProblem {
	out := make([]ConfigProblem, 0, len(list))
	for _, fe := range list {
		out = append(out, ConfigProblem{Line: fe.Line, Column: fe.Column, Field: fe.Path, Message: fe.Message, Severity: severity})
	}
	return out
}

// errInvalid is what validate -o json returns for a bad file: the problems
// are in the JSON document, the error only sets the exit status.
var errInvalid = errors.New("the configuration is not valid")

func newValidateCommand(reg framework.Registry) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a configuration file and print its effective configuration",
		Long: "Check FILE as `yardmaster run --config FILE` would, and print the configuration it\n" +
			"resolves to: defaults filled in, each profile's plugins listed per extension point with\n" +
			"their weights and arguments. A bad file prints every problem with its line and field path\n" +
			"and exits with status 1. An older file (v1beta1, v1beta2, v1beta3) is refused with the\n" +
			"edits that make it v1, each at its line; `yardmaster config migrate FILE` makes them.\n\n" +
			"Output:\n" +
			"  (default)  the effective configuration on stdout; warnings, problems and \"FILE: valid\" on stderr\n" +
			"  -o yaml    the effective configuration only on stdout; warnings and problems on stderr\n" +
			"  -o json    one document on stdout, for scripts, valid or not (exit status 1 when not):\n" +
			"             {\"apiVersion\": \"" + explain.APIVersion + "\", \"kind\": \"" + validationKind + "\", \"file\": FILE,\n" +
			"              \"valid\": true|false, \"problems\": [{\"line\", \"column\", \"field\", \"message\",\n" +
			"              \"severity\": \"error\"|\"warning\"}], \"effective\": {the effective configuration}}",
		Args: cobra.ExactArgs(1),
	}
	format := outputFlag(cmd, "output format: yaml or json (default: the effective configuration in YAML, with a summary on stderr)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkConfigOutput(*format); err != nil {
			return err
		}
		file := args[0]
		c, err := config.LoadWith(file, reg, config.Overrides{})
		if *format == outputJSON {
			return printValidation(cmd, file, c, err)
		}
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
		for _, w := range config.FormatProblems(file, c.Warnings, "warning: ") {
			fmt.Fprintln(cmd.ErrOrStderr(), w)
		}
		if *format == "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: valid\n", file)
		}
		return nil
	}
	return cmd
}

// printValidation prints the ConfigValidation document of file, loaded as
// c or refused with loadErr. A file that cannot be read at all is an error,
// not a document.
func printValidation(cmd *cobra.Command, file string, c *config.Config, loadErr error) error {
	doc := ConfigValidation{APIVersion: explain.APIVersion, Kind: validationKind, File: file, Problems: []ConfigProblem{}}
	var cerr *config.Error
	switch {
	case errors.As(loadErr, &cerr):
		doc.Problems = problemsOf(cerr.Problems, "error")
	case loadErr != nil:
		return loadErr
	default:
		doc.Valid = true
		doc.Problems = problemsOf(c.Warnings, "warning")
		effective, err := c.MarshalJSON()
		if err != nil {
			return err
		}
		doc.Effective = effective
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode validation: %w", err)
	}
	if _, err := cmd.OutOrStdout().Write(append(out, '\n')); err != nil {
		return err
	}
	if !doc.Valid {
		return fmt.Errorf("%s: %w (%d problems)", file, errInvalid, len(doc.Problems))
	}
	return nil
}

func newMigrateCommand(reg framework.Registry) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate FILE",
		Short: "Write an older configuration file (v1beta1, v1beta2, v1beta3) as the v1 file that means the same",
		Long: "Read FILE, a KubeSchedulerConfiguration of kubescheduler.config.k8s.io/v1beta1, v1beta2 or\n" +
			"v1beta3, and write the kubescheduler.config.k8s.io/v1 file that schedules as it did with\n" +
			"the last kube-scheduler that read it (v1.22, v1.27, v1.28): removed plugins translated\n" +
			"(NodeResourcesLeastAllocated, NodeResourcesMostAllocated and RequestedToCapacityRatio\n" +
			"become NodeResourcesFit's scoringStrategy with the same resources and weight; NodeLabel's\n" +
			"filter becomes NodeAffinity's addedAffinity), removed fields deleted with a comment saying\n" +
			"what serves instead, and the old default score weights that differ from v1's written out\n" +
			"(and VolumeBinding, which did not score then, disabled at score), so the ranking is\n" +
			"unchanged. The file's comments are kept; what changed carries a comment. What the\n" +
			"migration deleted or changed in meaning is listed on stderr, each at its line in FILE.\n\n" +
			"A file that has no v1 equivalent (ServiceAffinity enabled, NodeLabel scoring by label\n" +
			"preferences, two resource-scoring plugins in one profile, v1alpha1 or v1alpha2) is\n" +
			"refused with every reason at its line, and nothing is written. The result is checked as\n" +
			"`config validate` checks a file. A file that already is v1 is written unchanged.\n" +
			"See docs/configuration.md, \"Migrating an old file\".",
		Args: cobra.ExactArgs(1),
	}
	var outFile string
	cmd.Flags().StringVar(&outFile, "output-file", "", "write the v1 file to this path instead of stdout")
	// -o is the format, as for validate, print-defaults and kubectl:
	// YAML keeps the file's comments, JSON cannot.
	format := outputFlag(cmd, "the v1 file's format: yaml (the default; comments kept) or json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkConfigOutput(*format); err != nil {
			return fmt.Errorf("%w (the file to write to is --output-file)", err)
		}
		file := args[0]
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("read configuration: %w", err)
		}
		m, err := config.Migrate(data, reg)
		var cerr *config.Error
		if errors.As(err, &cerr) {
			cerr.File = file
		}
		if err != nil {
			return err
		}
		for _, n := range config.FormatProblems(file, m.Notes, "note: ") {
			fmt.Fprintln(cmd.ErrOrStderr(), n)
		}
		if m.Current {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: already %s, written unchanged\n", file, m.From)
		}
		out := m.Output
		if *format == outputJSON {
			if out, err = sigsyaml.YAMLToJSON(out); err != nil {
				return fmt.Errorf("migrated configuration as JSON: %w", err)
			}
			out = append(out, '\n')
		}
		if outFile == "" {
			_, err = cmd.OutOrStdout().Write(out)
			return err
		}
		if err := os.WriteFile(outFile, out, 0o644); err != nil {
			return fmt.Errorf("write migrated configuration: %w", err)
		}
		return nil
	}
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
