// Command chart-readme writes the values table of the chart's README.md
// from its values.yaml (`make helm-docs`). Run it from hack/helm; the
// package's tests fail when the README's table is not what it writes.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/yardmaster-io/yardmaster/hack/helm"
)

func main() {
	if err := run(helm.Chart); err != nil {
		fmt.Fprintln(os.Stderr, "chart-readme:", err)
		os.Exit(1)
	}
}

func run(chart string) error {
	values, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		return err
	}
	table, err := helm.ValuesTable(values)
	if err != nil {
		return err
	}
	path := filepath.Join(chart, "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := helm.UpdateReadme(readme, table)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}
