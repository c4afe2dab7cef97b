// Package helm runs `helm lint` and `helm template` over yardmaster's Helm
// chart, deploy/helm/yardmaster, through Helm's Go module (helm.sh/helm/v4):
// `make helm-test` needs no helm binary.
//
// The model: the chart is the product and this package only drives Helm's
// own actions over it (action.Lint is `helm lint`, action.Install in
// client-only dry-run mode is `helm template`). Its tests hold the chart to
// the kustomize base: rendered with the default values, it must make the
// objects deploy.Render makes of deploy/base, field for field.
//
// It is a module of its own, as hack/image is: Helm pins k8s.io modules a
// minor version ahead of yardmaster's, and must not move them in
// yardmaster's go.mod. It uses yardmaster's deploy package (the kustomize
// render and the strict decoder) from this checkout through a replace.
package helm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/loader"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// Chart is the chart's directory, relative to this package's.
const Chart = "../../deploy/helm/yardmaster"

// Template renders the chart in dir as
//
//	helm template RELEASE DIR --namespace NAMESPACE --values VALUES
//
// does, values standing for the file given to --values, and returns the
// manifests (every document, "# Source:" comments included) and the
// rendered NOTES.txt. Values the schema refuses, and a template that
// fails, are errors.
func Template(ctx context.Context, dir, releaseName, namespace string, values map[string]any) (manifest, notes string, err error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return "", "", fmt.Errorf("load chart %q: %w", dir, err)
	}
	cfg := action.NewConfiguration()
	// Helm's log says nothing that the error does not.
	cfg.SetLogger(slog.DiscardHandler)
	install := action.NewInstall(cfg)
	// What `helm template` sets: render only, with Helm's default
	// capabilities, without asking a cluster.
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true
	install.ReleaseName = releaseName
	install.Namespace = namespace
	if values == nil {
		values = map[string]any{}
	}
	r, err := install.RunWithContext(ctx, ch, values)
	if err != nil {
		return "", "", fmt.Errorf("helm template %s %s: %w", releaseName, dir, err)
	}
	rel, ok := r.(*release.Release)
	if !ok {
		return "", "", fmt.Errorf("helm template %s %s: release of type %T", releaseName, dir, r)
	}
	if len(rel.Hooks) > 0 {
		// The chart has none; a hook would be left out of the comparison
		// with the kustomize base.
		return "", "", fmt.Errorf("helm template %s %s: %d hooks, want none", releaseName, dir, len(rel.Hooks))
	}
	return rel.Manifest, rel.Info.Notes, nil
}

// Lint checks the chart in dir as
//
//	helm lint --strict DIR --namespace NAMESPACE --values VALUES
//
// does: Chart.yaml, values.yaml against values.schema.json, the templates
// rendered with values, their YAML. Any message of warning severity or
// above is an error, each with its path.
func Lint(dir, namespace string, values map[string]any) error {
	l := action.NewLint()
	l.Strict = true
	l.Namespace = namespace
	if values == nil {
		values = map[string]any{}
	}
	res := l.Run([]string{dir}, values)
	if res.TotalChartsLinted == 0 {
		// The chart did not load: res.Errors says why.
		return fmt.Errorf("helm lint %s: %w", dir, errors.Join(res.Errors...))
	}
	var errs []error
	for _, m := range res.Messages {
		// As helm lint --strict: informational messages ("icon is
		// recommended") pass.
		if m.Severity > support.InfoSev {
			errs = append(errs, fmt.Errorf("%s: %w", m.Path, m.Err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("helm lint --strict %s: %w", dir, errors.Join(errs...))
	}
	return nil
}
