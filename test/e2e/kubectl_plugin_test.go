package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/docs/schemas"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// pluginResult is one run of the plugin.
type pluginResult struct {
	stdout, stderr string
	code           int
}

// kubectlPlugin returns a function that runs `kubectl yardmaster args...`
// as kubectl runs it: a process named kubectl-yardmaster, here a symlink
// to this test binary, whose TestMain then is app.ExecuteArgv(os.Args) (the
// real argv[0] dispatch, the real flag set, the real exit code).
func kubectlPlugin(t *testing.T) func(args ...string) pluginResult {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(t.TempDir(), app.KubectlPluginName)
	if err := os.Symlink(self, plugin); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) pluginResult {
		t.Helper()
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(t.Context(), plugin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if exit, ok := errors.AsType[*exec.ExitError](err); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("kubectl yardmaster %s: %v", strings.Join(args, " "), err)
		}
		return pluginResult{stdout.String(), stderr.String(), code}
	}
}

// `kubectl yardmaster` against the real API server, with a kubeconfig of
// two contexts (two namespaces) and a user without rights: the namespace
// is the current context's unless -n, --context switches it, --as
// impersonates (a user without rights is refused: exit 1), --server is the
// API server's, --request-timeout parses, pods are NAME or TYPE/NAME, -o
// json is a yardmaster.io/v1alpha1 Explanation valid against the schema,
// and the exit code is 0 for a pod that fits, 2 for one that would stay
// Pending, for explain and for simulate.
func TestKubectlPluginConventions(t *testing.T) {
	e := newEnv(t)
	mine := map[string]string{testLabel: e.ns}
	other, err := controlplane.CreateNamespace(e.ctx, e.client, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Its own deadline: the test's context may have run out.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		zero := int64(0)
		if err := e.client.CoreV1().Pods(other).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
			t.Errorf("cleanup: pods of %s: %v", other, err)
		}
		if err := e.client.CoreV1().Namespaces().Delete(ctx, other, metav1.DeleteOptions{}); err != nil {
			t.Errorf("cleanup: namespace %s: %v", other, err)
		}
	})
	node := e.addNode(e.node("small").Capacity("2", "4Gi", 110))
	// No scheduler runs: the pods stay Pending, and explain says whether
	// each would fit.
	e.createPod(e.pod("fits").Req("1", "1Gi").NodeSelector(mine))
	e.createPod(e.pod("big").Req("8", "1Gi").NodeSelector(mine))
	onlyB := e.pod("only-b").Req("1", "1Gi").NodeSelector(mine).Obj()
	onlyB.Namespace = other
	if _, err := e.client.CoreV1().Pods(other).Create(e.ctx, onlyB, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	configFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(configFile, fmt.Appendf(nil, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: %s\n", e.scheduler), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := twoContextKubeconfig(t, dir, e.ns, other)
	plugin := kubectlPlugin(t)
	run := func(args ...string) pluginResult {
		return plugin(append(args, "--kubeconfig", kubeconfig, "--config", configFile)...)
	}

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "the current context's namespace", args: []string{"explain", "fits"}, wantCode: app.ExitPlaced, wantStdout: "Pod:      " + e.ns + "/fits"},
		{name: "Pending", args: []string{"explain", "big"}, wantCode: app.ExitPending, wantStdout: "Fits nowhere"},
		{name: "pod/NAME", args: []string{"explain", "pod/big"}, wantCode: app.ExitPending, wantStdout: "Pod:      " + e.ns + "/big"},
		{name: "pods/NAME", args: []string{"explain", "pods/fits"}, wantCode: app.ExitPlaced},
		{name: "po NAME", args: []string{"explain", "po", "fits"}, wantCode: app.ExitPlaced},
		{name: "unknown TYPE", args: []string{"explain", "deploy/fits"}, wantCode: app.ExitError, wantStderr: `explain takes a pod, not "deploy"`},
		{name: "not in the current context's namespace", args: []string{"explain", "only-b"}, wantCode: app.ExitError,
			wantStderr: fmt.Sprintf("pod \"only-b\" not found in namespace %q", e.ns)},
		{name: "--context switches the namespace", args: []string{"explain", "only-b", "--context", "b"}, wantCode: app.ExitPlaced,
			wantStdout: "Pod:      " + other + "/only-b"},
		{name: "-n", args: []string{"explain", "only-b", "-n", other}, wantCode: app.ExitPlaced},
		{name: "-n over --context", args: []string{"explain", "fits", "--context", "b", "-n", e.ns}, wantCode: app.ExitPlaced},
		{name: "--as impersonates a user without rights", args: []string{"explain", "fits", "--as", noRBACUser}, wantCode: app.ExitError,
			wantStderr: fmt.Sprintf(`User "%s" cannot get resource "pods"`, noRBACUser)},
		{name: "--as-group too", args: []string{"explain", "fits", "--as", noRBACUser, "--as-group", "system:masters"}, wantCode: app.ExitPlaced},
		{name: "--context of a user without rights", args: []string{"explain", "fits", "--context", "norbac"}, wantCode: app.ExitError,
			wantStderr: "forbidden"},
		{name: "--user", args: []string{"explain", "fits", "--user", noRBACUser}, wantCode: app.ExitError, wantStderr: "forbidden"},
		{name: "--request-timeout", args: []string{"explain", "fits", "--request-timeout", "1m"}, wantCode: app.ExitPlaced},
		{name: "--request-timeout that does not parse", args: []string{"explain", "fits", "--request-timeout", "soon"}, wantCode: app.ExitError,
			wantStderr: "Invalid timeout value"},
		{name: "--server is the API server's", args: []string{"explain", "fits", "--server", "https://127.0.0.1:1", "--request-timeout", "5s"},
			wantCode: app.ExitError, wantStderr: "127.0.0.1:1"},
		{name: "-o name", args: []string{"explain", "fits", "-o", "name"}, wantCode: app.ExitPlaced, wantStdout: "node/" + node.Name + "\n"},
		{name: "-o name, Pending", args: []string{"explain", "big", "-o", "name"}, wantCode: app.ExitPending},
		{name: "-o wide", args: []string{"explain", "big", "-o", "wide"}, wantCode: app.ExitPending, wantStdout: node.Name},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := run(tc.args...)
			if got.code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", got.code, tc.wantCode, got.stdout, got.stderr)
			}
			if !strings.Contains(got.stdout, tc.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantStdout, got.stdout)
			}
			if tc.wantStdout == "" && strings.Contains(tc.name, "-o name") && got.stdout != "" {
				t.Errorf("stdout %q, want nothing", got.stdout)
			}
			if !strings.Contains(got.stderr, tc.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantStderr, got.stderr)
			}
		})
	}

	t.Run("-o json", func(t *testing.T) {
		schema := compileOutputSchema(t)
		for pod, wantCode := range map[string]int{"fits": app.ExitPlaced, "big": app.ExitPending} {
			got := run("explain", "pod/"+pod, "-o", "json")
			if got.code != wantCode {
				t.Fatalf("%s: exit code %d, want %d: %s", pod, got.code, wantCode, got.stderr)
			}
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Pod        string `json:"pod"`
			}
			if err := json.Unmarshal([]byte(got.stdout), &head); err != nil {
				t.Fatal(err)
			}
			if head.APIVersion != "yardmaster.io/v1alpha1" || head.Kind != "Explanation" || head.Pod != e.ns+"/"+pod {
				t.Errorf("%s: %+v", pod, head)
			}
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(got.stdout))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(doc); err != nil {
				t.Errorf("%s: does not validate: %v\n%s", pod, err, got.stdout)
			}
		}
	})

	// explain load reads the nodes with the same flags; Prometheus is
	// not there, which the plugin survives (every node alike), so the
	// table still names the node.
	t.Run("explain load", func(t *testing.T) {
		loadConfig := filepath.Join(t.TempDir(), "load.yaml")
		if err := os.WriteFile(loadConfig, fmt.Appendf(nil, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: %s
  plugins: {score: {enabled: [{name: TargetLoadPacking}]}}
  pluginConfig:
  - name: TargetLoadPacking
    args: {prometheusAddress: "http://127.0.0.1:1", timeout: 1s}
`, e.scheduler), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			args       []string
			wantCode   int
			wantStdout string
			wantStderr string
		}{
			{[]string{"node/" + node.Name, "--context", "b"}, app.ExitPlaced, "  " + node.Name + " ", ""},
			{[]string{node.Name, "--as", noRBACUser}, app.ExitError, "", "forbidden"},
			{[]string{"pod/" + node.Name}, app.ExitError, "", `explain load takes nodes, not "pod"`},
		} {
			got := plugin(append([]string{"explain", "load", "--kubeconfig", kubeconfig, "--config", loadConfig}, tc.args...)...)
			if got.code != tc.wantCode || !strings.Contains(got.stdout, tc.wantStdout) || !strings.Contains(got.stderr, tc.wantStderr) {
				t.Errorf("explain load %v: exit code %d, want %d; want stdout with %q, stderr with %q\nstdout:\n%s\nstderr:\n%s",
					tc.args, got.code, tc.wantCode, tc.wantStdout, tc.wantStderr, got.stdout, got.stderr)
			}
		}
		// -o json: the LoadExplanation, valid against the schema, with
		// the node and the failed query (Prometheus is not there), and no
		// value for the node (null: JSON has no NaN).
		got := plugin("explain", "load", "--kubeconfig", kubeconfig, "--config", loadConfig, "node/"+node.Name, "-o", "json")
		if got.code != app.ExitPlaced {
			t.Fatalf("explain load -o json: exit code %d: %s", got.code, got.stderr)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(got.stdout))
		if err != nil {
			t.Fatal(err)
		}
		if err := compileOutputSchema(t).Validate(doc); err != nil {
			t.Errorf("explain load -o json does not validate: %v\n%s", err, got.stdout)
		}
		var le app.LoadExplanation
		if err := json.Unmarshal([]byte(got.stdout), &le); err != nil {
			t.Fatal(err)
		}
		if le.Kind != app.KindLoadExplanation || le.Profile != e.scheduler || len(le.Plugins) != 1 ||
			len(le.Plugins[0].Metrics) != 1 || le.Plugins[0].Metrics[0].Error == "" ||
			len(le.Plugins[0].Nodes) != 1 || le.Plugins[0].Nodes[0].Node != node.Name || le.Plugins[0].Nodes[0].Values[0] != nil {
			t.Errorf("explain load -o json: %s", got.stdout)
		}
	})

	t.Run("simulate", func(t *testing.T) {
		manifest := func(name, cpu string) string {
			path := filepath.Join(t.TempDir(), name+".yaml")
			pod := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  schedulerName: %s\n  nodeSelector: {%q: %q}\n  containers: [{name: c, image: x, resources: {requests: {cpu: %q}}}]\n",
				name, e.scheduler, testLabel, e.ns, cpu)
			if err := os.WriteFile(path, []byte(pod), 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}
		small, huge := manifest("small", "500m"), manifest("huge", "16")
		for _, tc := range []struct {
			args       []string
			wantCode   int
			wantStdout string
		}{
			{[]string{"--add", small}, app.ExitPlaced, e.ns + "/small  " + node.Name},
			{[]string{"--add", small, "--context", "b"}, app.ExitPlaced, other + "/small  " + node.Name},
			{[]string{"--add", small, "--add", huge}, app.ExitPending, e.ns + "/huge   Pending"},
			{[]string{"--add", huge, "-o", "name"}, app.ExitPending, "pod/huge\n"},
			{[]string{"--add", small, "--as", noRBACUser}, app.ExitError, ""},
		} {
			got := run(append([]string{"simulate"}, tc.args...)...)
			if got.code != tc.wantCode || !strings.Contains(got.stdout, tc.wantStdout) {
				t.Errorf("simulate %v: exit code %d, want %d; stdout lacks %q?\nstdout:\n%s\nstderr:\n%s",
					tc.args, got.code, tc.wantCode, tc.wantStdout, got.stdout, got.stderr)
			}
		}
	})
}

// twoContextKubeconfig writes a kubeconfig of the control plane with the
// contexts a (admin, namespace nsA; the current one), b (admin, namespace
// nsB) and norbac (noRBACUser, namespace nsA), and returns its path.
func twoContextKubeconfig(t *testing.T, dir, nsA, nsB string) string {
	t.Helper()
	path := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(path, cp.AdminToken); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	admin := cfg.Contexts[cfg.CurrentContext]
	cfg.AuthInfos[noRBACUser] = &clientcmdapi.AuthInfo{Token: noRBACToken}
	cfg.Contexts = map[string]*clientcmdapi.Context{
		"a":      {Cluster: admin.Cluster, AuthInfo: admin.AuthInfo, Namespace: nsA},
		"b":      {Cluster: admin.Cluster, AuthInfo: admin.AuthInfo, Namespace: nsB},
		"norbac": {Cluster: admin.Cluster, AuthInfo: noRBACUser, Namespace: nsA},
	}
	cfg.CurrentContext = "a"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// compileOutputSchema compiles docs/schemas' output schema.
func compileOutputSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	s, err := schemas.CompileOutputV1alpha1()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
