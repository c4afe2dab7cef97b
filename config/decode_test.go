package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
)

// The strict decoder on shapes today's file types do not have but plugin
// arguments will (maps, embedded structs, unsigned and self-decoding types).
func TestDecoderShapes(t *testing.T) {
	type Inline struct {
		Zone string `json:"zone"`
	}
	type target struct {
		Inline
		Labels   map[string]string  `json:"labels"`
		Levels   map[string][]uint8 `json:"levels"`
		Ratio    float32            `json:"ratio"`
		Limit    *resource.Quantity `json:"limit"`
		Optional *int32             `json:"optional"`
		List     []string           `json:"list"`
		Hidden   string             `json:"-"`
		Untagged bool
	}
	tests := []struct {
		name string
		yaml string
		want target
		path string // of the expected problem; "" for none
		msg  string
	}{{
		name: "everything",
		yaml: "zone: a\nlabels: {app: web, tier: \"1\"}\nlevels: {x: [1, 255]}\nratio: 0.5\nlimit: 500m\nUntagged: true\n",
		want: target{Inline: Inline{Zone: "a"}, Labels: map[string]string{"app": "web", "tier": "1"},
			Levels: map[string][]uint8{"x": {1, 255}}, Ratio: 0.5, Limit: new(resource.MustParse("500m")), Untagged: true},
	}, {
		name: "null clears, as encoding/json",
		yaml: "optional: null\nlist: null\nlabels: ~\n",
	}, {
		name: "map key twice", yaml: "labels: {app: a, app: b}\n", path: "labels.app", msg: "key given twice",
	}, {
		name: "map of the wrong shape", yaml: "labels: [a]\n", path: "labels", msg: "expected an object",
	}, {
		name: "uint out of range", yaml: "levels: {x: [256]}\n", path: "levels.x[0]", msg: "out of range",
	}, {
		name: "negative uint", yaml: "levels: {x: [-1]}\n", path: "levels.x[0]", msg: "non-negative integer",
	}, {
		name: "float32 out of range", yaml: "ratio: 1e300\n", path: "ratio", msg: "out of range",
	}, {
		name: "self-decoding type refuses", yaml: "limit: lots\n", path: "limit", msg: "invalid value",
	}, {
		name: "json:\"-\" is not a field", yaml: "Hidden: x\n", path: "Hidden", msg: "unknown field",
	}, {
		name: "non-scalar key", yaml: "? [a]\n: b\n", path: "", msg: "mapping keys must be strings",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProblems()
			root := parseYAML([]byte(tc.yaml), p)
			if root == nil {
				t.Fatalf("parse: %v", p.err())
			}
			var got target
			newDecoder(p).decode(root, reflect.ValueOf(&got).Elem(), "")
			if tc.path == "" && tc.msg == "" {
				if err := p.err(); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				return
			}
			for _, fe := range p.list {
				if fe.Path == tc.path && strings.Contains(fe.Message, tc.msg) {
					return
				}
			}
			t.Errorf("no problem at %q containing %q in %v", tc.path, tc.msg, p.err())
		})
	}
}

func TestClientConnectionRESTConfig(t *testing.T) {
	base := &rest.Config{Host: "https://api", QPS: 1, Burst: 2, ContentConfig: rest.ContentConfig{AcceptContentTypes: "a/b"}}
	cc := ClientConnection{ContentType: "application/json", QPS: 100, Burst: 200}
	got := cc.RESTConfig(base)
	if got.Host != "https://api" || got.QPS != 100 || got.Burst != 200 || got.ContentType != "application/json" || got.AcceptContentTypes != "a/b" {
		t.Errorf("RESTConfig = %+v", got)
	}
	if base.QPS != 1 {
		t.Errorf("base changed: %+v", base)
	}
	cc.AcceptContentTypes = "application/json"
	if got := cc.RESTConfig(base); got.AcceptContentTypes != "application/json" {
		t.Errorf("AcceptContentTypes = %q", got.AcceptContentTypes)
	}
}
