// Package deploy holds the manifests that install yardmaster into a cluster
// and renders them as `kubectl apply -k` does.
//
// The model: the YAML files of this directory are the product (a kustomize
// base, kustomization.yaml; overlays/ on top of it; grafana/, the Grafana
// dashboard as a ConfigMap; examples/ of workloads, outside the base) and
// are embedded here unchanged. Render runs kustomize's
// own Go API (krusty) over them and Decode turns the result into client-go
// objects, strictly, so that a misspelt field fails a test instead of being
// dropped by the API server. Nothing here talks to a cluster: the tests of
// this package check what the base builds, and test/e2e applies its RBAC to
// a real kube-apiserver and runs yardmaster under it.
package deploy

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Paths in FS.
const (
	// Install is what `kubectl apply -k deploy/` applies: Base as it is.
	Install = "."
	// Base is the kustomize base overlays build on.
	Base = "base"
	// ServiceMonitorOverlay is the base plus a Prometheus Operator
	// ServiceMonitor.
	ServiceMonitorOverlay = "overlays/servicemonitor"
	// Dashboard is the Grafana dashboard alone, as a ConfigMap for
	// Grafana's dashboard sidecar.
	Dashboard = "grafana"
	// DashboardOverlay is the base plus Dashboard.
	DashboardOverlay = "overlays/grafana-dashboard"
	// DashboardFile is the dashboard's JSON in Dashboard, and its key in
	// the ConfigMap.
	DashboardFile = "yardmaster-dashboard.json"
	// Examples is the directory of example workloads (not a kustomization:
	// `kubectl apply -f deploy/examples/`).
	Examples = "examples"
	// ConfigKey is the key of the scheduler configuration in the base's
	// ConfigMap, and the name of its file in Base.
	ConfigKey = "config.yaml"
)

// FS holds the manifests as they are in the repository.
//
//go:embed kustomization.yaml base overlays examples grafana
var FS embed.FS

// root is where FS is copied in kustomize's in-memory file system.
const root = "/deploy"

// Render builds the kustomization at dir of FS (Install, Base or an overlay) as
// `kubectl kustomize` does, and decodes the result with Decode.
func Render(dir string) ([]runtime.Object, error) {
	mem := filesys.MakeFsInMemory()
	err := fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := FS.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(path.Join(root, p), data)
	})
	if err != nil {
		return nil, fmt.Errorf("copy manifests: %w", err)
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, path.Join(root, dir))
	if err != nil {
		return nil, fmt.Errorf("kustomize %q: %w", dir, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize %q: %w", dir, err)
	}
	return Decode(out)
}

// strict decodes the kinds client-go knows and refuses unknown and
// duplicate fields.
var strict = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// Decode decodes a stream of YAML documents: a kind client-go's scheme
// knows becomes its typed object, decoded strictly (an unknown or repeated
// field is an error); any other kind (a ServiceMonitor) becomes an
// *unstructured.Unstructured. Empty documents are skipped.
func Decode(data []byte) ([]runtime.Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		obj, err := decodeOne(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if obj != nil {
			objs = append(objs, obj)
		}
	}
}

func decodeOne(doc []byte) (runtime.Object, error) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return nil, nil // comments only
	}
	obj, gvk, err := strict.Decode(doc, nil, nil)
	switch {
	case err == nil:
		return obj, nil
	case !runtime.IsNotRegisteredError(err):
		if gvk != nil {
			return nil, fmt.Errorf("%s %s: %w", gvk.GroupVersion(), gvk.Kind, err)
		}
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, err
	}
	return u, nil
}
