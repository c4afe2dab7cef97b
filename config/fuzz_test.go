package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzLoad feeds the decoder arbitrary files, seeded with the examples and
// a few malformed ones. Whatever the input, Decode (all of Load but the
// read) returns a configuration or an error and never panics; and a
// configuration it accepts survives Marshal and Decode unchanged.
func FuzzLoad(f *testing.F) {
	examples, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(examples) == 0 {
		f.Fatalf("no examples in testdata: %v", err)
	}
	for _, ex := range examples {
		data, err := os.ReadFile(ex)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, seed := range []string{
		header,
		header + "profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n      disabled: [{name: \"*\"}]\n      enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: NodeResourcesFit, weight: 3}]\n",
		header + "leaderElection: {leaseDuration: 5s, renewDeadline: 10s}\nparallelism: 0\n",
		"apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    score:\n      enabled: [{name: NodeResourcesLeastAllocated}]\n",
		`{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [{"schedulerName": "j", "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}]}}}}]}]}`,
		// Enabled without pluginConfig, defaults not valid: once accepted,
		// then refused when its printed defaults were read back.
		header + "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NetworkTraffic\n",
		header + "a: &a [*a]\n",
		"- [\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data)
		if err != nil {
			if c != nil {
				t.Fatalf("Decode returned both a configuration and %v", err)
			}
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		out, err := c.Marshal()
		if err != nil {
			t.Fatalf("Marshal of an accepted configuration: %v", err)
		}
		again, err := Decode(out)
		if err != nil {
			t.Fatalf("Decode(Marshal()): %v\n--- input:\n%s\n--- output:\n%s", err, data, out)
		}
		// Warnings are about what the file had and Marshal leaves out.
		if diff := cmp.Diff(c, again, ignoreInternal, cmpopts.IgnoreFields(Config{}, "Warnings")); diff != "" {
			t.Fatalf("round trip changed the configuration (-before +after):\n%s\n--- input:\n%s", diff, data)
		}
	})
}
