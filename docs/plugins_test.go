// docs/plugins.md walks through examples/out-of-tree, a module of its own
// that builds yardmaster with the NodePool plugin. That module's tests run
// in make test, and test/e2e's TestOutOfTree builds its binary and
// schedules pods with it; here TestWalkThroughIsTheExample keeps the
// document's code blocks identical to excerpts of the module's files, so
// neither can drift, and TestPluginInterfacesListed keeps its table of
// plugin interfaces to package framework's.
package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// exampleDir is the module the document walks through.
const exampleDir = "../examples/out-of-tree"

// fence is a fenced code block of a Markdown file, at the start of a
// line: its language and its text.
var fence = regexp.MustCompile("(?ms)^```([a-z-]*)\n(.*?)^```$")

// source is how the document names the file a block is an excerpt of:
// the text before the block ends with the path, "… in `nodepool/args.go`:".
var source = regexp.MustCompile("`([^`]+)`:$")

// excerptLanguages are the blocks that must be excerpts: code and
// configuration. Shell commands and output need not.
var excerptLanguages = []string{"go", "go-mod", "yaml"}

// Every Go, go.mod and YAML block of plugins.md is an excerpt of the file
// of examples/out-of-tree that the text before it names, so the document
// shows code that builds, passes the module's tests and runs in the e2e
// test.
func TestWalkThroughIsTheExample(t *testing.T) {
	doc, err := os.ReadFile("plugins.md")
	if err != nil {
		t.Fatal(err)
	}
	excerpts := map[string]int{}
	for _, m := range fence.FindAllSubmatchIndex(doc, -1) {
		lang, body := string(doc[m[2]:m[3]]), string(doc[m[4]:m[5]])
		before := strings.TrimRight(string(doc[:m[0]]), " \n")
		line := 1 + strings.Count(before, "\n") + 2
		src := source.FindStringSubmatch(before)
		if src == nil {
			if slices.Contains(excerptLanguages, lang) {
				t.Errorf("plugins.md:%d: a %s block whose text before it names no file of %s (end it with \"`path`:\")", line, lang, exampleDir)
			}
			continue
		}
		rel := strings.TrimPrefix(src[1], "examples/out-of-tree/")
		text, err := os.ReadFile(filepath.Join(exampleDir, filepath.FromSlash(rel)))
		if err != nil {
			t.Errorf("plugins.md:%d: %v", line, err)
			continue
		}
		if !strings.Contains(string(text), body) {
			t.Errorf("plugins.md:%d shows code that is not in %s/%s:\n%s", line, exampleDir, rel, body)
			continue
		}
		excerpts[rel]++
	}
	// The walk-through shows each file of the module's plugin and its
	// build and configuration.
	for _, f := range []string{"go.mod", "main.go", "nodepool/nodepool.go", "nodepool/args.go", "nodepool/register.go",
		"nodepool/hints.go", "nodepool/nodepool_test.go", "nodepool/schedule_test.go", "scheduler-config.yaml"} {
		if excerpts[f] == 0 {
			t.Errorf("plugins.md shows nothing of %s/%s", exampleDir, f)
		}
	}
}

// The document's table of plugin interfaces lists every interface of
// package framework that a plugin implements to run at a point: those
// named *Plugin.
func TestPluginInterfacesListed(t *testing.T) {
	doc, err := os.ReadFile("plugins.md")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob("../framework/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if _, isInterface := ts.Type.(*ast.InterfaceType); isInterface && ts.Name.IsExported() &&
					strings.HasSuffix(ts.Name.Name, "Plugin") && ts.Name.Name != "Plugin" {
					names = append(names, ts.Name.Name)
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("found no plugin interface in ../framework")
	}
	for _, n := range names {
		if !strings.Contains(string(doc), "| `"+n+"` |") {
			t.Errorf("plugins.md's table of interfaces does not list framework.%s", n)
		}
	}
}
