// Tests that keep docs/architecture.md true: its plugin table against the
// registry and the default profile, its list of plugins that sign pods
// against the plugins themselves, and its import rules against the
// module's packages as `go list` reports them.
package docs_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/priorities/loadaware"
	"github.com/yardmaster-io/yardmaster/priorities/networktraffic"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// module is this module's path.
const module = "github.com/yardmaster-io/yardmaster"

// architectureDoc is the document under test, relative to this package.
const architectureDoc = "architecture.md"

// none is how the plugin table writes an empty cell.
const none = "—"

// section returns the text of the document's "## title" section, up to
// the next "## " heading.
func section(t *testing.T, doc, title string) string {
	t.Helper()
	head := "\n## " + title + "\n"
	i := strings.Index(doc, head)
	if i < 0 {
		t.Fatalf("%s has no section %q", architectureDoc, "## "+title)
	}
	rest := doc[i+len(head):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// table returns the cells of the rows of the first Markdown table in text
// whose header row is header, without the header and separator rows.
func table(t *testing.T, text string, header ...string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if in {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case !in && slices.Equal(cells, header):
			in = true
		case in && strings.HasPrefix(cells[0], "---"):
		case in:
			rows = append(rows, cells)
		}
	}
	if !in {
		t.Fatalf("%s has no table with the header %q", architectureDoc, header)
	}
	return rows
}

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(architectureDoc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// builtPlugin is a registered plugin and the parts its factory builds.
type builtPlugin struct {
	framework.Registration
	parts []framework.Plugin
}

// buildPlugins builds every registered plugin with its default arguments
// on a handle over an empty snapshot, in the order of the default profile
// and then by name.
func buildPlugins(t *testing.T) []builtPlugin {
	t.Helper()
	reg := registry.NewInTree()
	var names []string
	for _, wp := range registry.DefaultPlugins() {
		if _, ok := reg[wp.Name]; ok {
			names = append(names, wp.Name)
		}
	}
	var others []string
	for name := range reg {
		if !slices.Contains(names, name) {
			others = append(others, name)
		}
	}
	slices.Sort(others)
	names = append(names, others...)

	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nil, nil))
	dra, _, stopDRA, err := registry.NewDRAManager(h.Factory, registry.DRAOptions{}, nil, nil, nil)
	if err != nil {
		t.Fatalf("DRA manager: %v", err)
	}
	t.Cleanup(stopDRA)
	h.DRA = dra
	var out []builtPlugin
	for _, name := range names {
		r := reg[name]
		b := builtPlugin{Registration: r}
		if r.New != nil {
			var args any
			if r.NewArgs != nil {
				args = r.NewArgs()
			}
			// The metric plugins need an address; nothing is asked of it here.
			switch a := args.(type) {
			case *networktraffic.Args:
				a.PrometheusAddress = "http://127.0.0.1:9"
			case *loadaware.TargetLoadPackingArgs:
				a.PrometheusAddress = "http://127.0.0.1:9"
			case *loadaware.LoadVariationRiskBalancingArgs:
				a.PrometheusAddress = "http://127.0.0.1:9"
			case *loadaware.PrometheusScoreArgs:
				a.PrometheusAddress, a.Query = "http://127.0.0.1:9", "up"
			case *loadaware.LoadHotSpotArgs:
				a.PrometheusAddress = "http://127.0.0.1:9"
			}
			b.parts, err = r.New(args, h)
			if err != nil {
				t.Fatalf("build %s: %v", name, err)
			}
		}
		out = append(out, b)
	}
	return out
}

// packagesOf returns the packages (relative to the module) of the parts
// that implement the interface I, or none.
func packagesOf[I any](parts []framework.Plugin) string {
	var pkgs []string
	for _, p := range parts {
		if _, ok := p.(I); !ok {
			continue
		}
		if pkg := packageOf(p); !slices.Contains(pkgs, pkg) {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(pkgs) == 0 {
		return none
	}
	return "`" + strings.Join(pkgs, "`, `") + "`"
}

// packageOf returns the package of p's type, relative to the module.
func packageOf(p framework.Plugin) string {
	typ := reflect.TypeOf(p)
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	return strings.TrimPrefix(typ.PkgPath(), module+"/")
}

// The table of built-in plugins is the registry: every plugin, each
// extension point it declares, where its filter and its scorer live, and
// its place and weight in the default profile; and the counts above it
// are right.
func TestPluginTable(t *testing.T) {
	doc := readDoc(t)
	text := section(t, doc, "Plugins")
	header := []string{"plugin", "extension points", "filter in", "scorer in", "default profile"}
	got := table(t, text, header...)

	def := registry.DefaultProfile("docs")
	inDefault := map[string]bool{}
	for _, wp := range registry.DefaultPlugins() {
		inDefault[wp.Name] = true
	}
	var want [][]string
	filters, scorers := 0, 0
	for _, p := range buildPlugins(t) {
		profile := "no"
		if inDefault[p.Name] {
			profile = "yes"
		}
		for _, wp := range def.Score {
			if wp.Name == p.Name {
				profile = "weight " + strconv.FormatInt(wp.Weight, 10)
			}
		}
		filterIn := packagesOf[framework.FilterPlugin](p.parts)
		scorerIn := packagesOf[framework.ScorePlugin](p.parts)
		if filterIn != none {
			filters++
		}
		if scorerIn != none {
			scorers++
		}
		points := strings.Join(p.Points, ", ")
		if points == "" {
			points = none // configuration only, as Explain
		}
		var steps []string
		for at := range p.Steps {
			steps = append(steps, at)
		}
		slices.Sort(steps)
		for _, at := range steps {
			points += " (+ " + at + " step)"
		}
		want = append(want, []string{p.Name, points, filterIn, scorerIn, profile})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s's plugin table differs from the registry (-code +doc):\n%s", architectureDoc, diff)
	}

	m := regexp.MustCompile(`(\d+) filters and (\d+) scorers`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the Plugins section does not say how many filters and scorers there are (\"N filters and M scorers\")")
	}
	if m[1] != strconv.Itoa(filters) || m[2] != strconv.Itoa(scorers) {
		t.Errorf("the Plugins section says %s filters and %s scorers; the registry has %d and %d", m[1], m[2], filters, scorers)
	}
}

// The plugins the document says sign pods, as filters and as scorers, are
// those whose filter or scorer implements framework.PodSigner.
func TestSigningPluginsList(t *testing.T) {
	doc := strings.Join(strings.Fields(section(t, readDoc(t), "Answers kept per pod signature")), " ")
	m := regexp.MustCompile(`((?:[A-Z][A-Za-z]+(?:, | and ))+[A-Z][A-Za-z]+) sign as filters; ((?:[A-Z][A-Za-z]+(?:, | and ))+[A-Z][A-Za-z]+) as scorers\.`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatal(`the section "Answers kept per pod signature" no longer says "<plugins> sign as filters; <plugins> as scorers."`)
	}
	var filters, scorers []string
	for _, p := range buildPlugins(t) {
		for _, part := range p.parts {
			if _, ok := part.(framework.PodSigner); !ok {
				continue
			}
			if _, ok := part.(framework.FilterPlugin); ok {
				filters = append(filters, p.Name)
			}
			if _, ok := part.(framework.ScorePlugin); ok {
				scorers = append(scorers, p.Name)
			}
		}
	}
	for _, c := range []struct {
		what      string
		want, got []string
	}{
		{"filters", filters, names(m[1])},
		{"scorers", scorers, names(m[2])},
	} {
		slices.Sort(c.want)
		slices.Sort(c.got)
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("plugins that sign as %s (-code +doc):\n%s", c.what, diff)
		}
	}
}

// names splits "A, B and C".
func names(list string) []string {
	var out []string
	for _, part := range regexp.MustCompile(`,\s*|\s+and\s+`).Split(list, -1) {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// importRule is one row of the import rules: the packages it covers and
// what they may import of the module.
type importRule struct {
	packages []string
	anything bool
	allowed  []string
}

// backticked returns the `quoted` words of a cell.
func backticked(cell string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

func parseImportRules(t *testing.T) []importRule {
	t.Helper()
	rows := table(t, section(t, readDoc(t), "Import rules"), "package", "may import, of this module")
	var rules []importRule
	for _, row := range rows {
		r := importRule{packages: backticked(row[0])}
		switch row[1] {
		case "anything":
			r.anything = true
		case "nothing":
		default:
			r.allowed = backticked(row[1])
			if len(r.allowed) == 0 {
				t.Fatalf("import rule %q: say `pkg`, ..., nothing or anything", row)
			}
		}
		if len(r.packages) == 0 {
			t.Fatalf("import rule %q names no package", row)
		}
		rules = append(rules, r)
	}
	return rules
}

// matches reports whether the package pkg (relative to the module) is
// pattern, or under it when pattern ends in "/...", and how specific the
// match is: an exact name beats any subtree, a longer subtree a shorter.
func matches(pattern, pkg string) (int, bool) {
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		if pkg == tree || strings.HasPrefix(pkg, tree+"/") {
			return len(tree), true
		}
		return 0, false
	}
	return 1 << 20, pkg == pattern
}

// ruleFor returns the most specific rule covering pkg.
func ruleFor(rules []importRule, pkg string) (importRule, bool) {
	best, found, bestScore := importRule{}, false, -1
	for _, r := range rules {
		for _, p := range r.packages {
			if score, ok := matches(p, pkg); ok && score > bestScore {
				best, found, bestScore = r, true, score
			}
		}
	}
	return best, found
}

// listedPackage is what `go list -json` says of a package.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// goList runs `go list -json` in the module's root and decodes its stream.
func goList(t *testing.T, args ...string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Dir,GoFiles,Imports"}, args...)...)
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// importingFiles names the files of p that import path.
func importingFiles(p listedPackage, path string) []string {
	var files []string
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, imp := range f.Imports {
			if s, _ := strconv.Unquote(imp.Path.Value); s == path {
				files = append(files, name)
			}
		}
	}
	return files
}

// Every package of the module imports, of the module, only what the
// document's import rules allow it, and every package has a rule.
func TestImportRules(t *testing.T) {
	rules := parseImportRules(t)
	for _, p := range goList(t, "./...") {
		pkg := strings.TrimPrefix(p.ImportPath, module+"/")
		rule, ok := ruleFor(rules, pkg)
		if !ok {
			t.Errorf("package %s has no row in %s's import rules", pkg, architectureDoc)
			continue
		}
		if rule.anything {
			continue
		}
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, module+"/")
			if !ours {
				continue
			}
			allowed := false
			for _, a := range rule.allowed {
				if _, ok := matches(a, dep); ok {
					allowed = true
					break
				}
			}
			if !allowed {
				t.Errorf("%s imports %s (%s), which the import rules do not allow it; it may import %s",
					pkg, dep, strings.Join(importingFiles(p, imp), ", "), allowedText(rule))
			}
		}
	}
}

func allowedText(r importRule) string {
	if len(r.allowed) == 0 {
		return "nothing of this module"
	}
	return strings.Join(r.allowed, ", ")
}

// The daemon, with everything it imports, never imports k8s.io/kubernetes
// nor a package meant for tests, the demo or benchmarks: an internal one,
// or the test kit framework/frameworktest.
func TestDaemonDependencies(t *testing.T) {
	deps := goList(t, "-deps", "./cmd/yardmaster")
	byPath := map[string]listedPackage{}
	for _, p := range deps {
		byPath[p.ImportPath] = p
	}
	for _, p := range deps {
		rel, ours := strings.CutPrefix(p.ImportPath, module+"/")
		switch {
		case p.ImportPath == "k8s.io/kubernetes" || strings.HasPrefix(p.ImportPath, "k8s.io/kubernetes/"):
		case ours && strings.HasPrefix(rel, "internal/") && rel != "internal/server" && rel != "internal/version":
		case ours && (rel == "framework/frameworktest" || strings.HasPrefix(rel, "framework/frameworktest/")):
		default:
			continue
		}
		var importers []string
		for _, q := range deps {
			if slices.Contains(q.Imports, p.ImportPath) {
				importers = append(importers, q.ImportPath)
			}
		}
		t.Errorf("the daemon depends on %s, imported by %s", p.ImportPath, strings.Join(importers, ", "))
	}
	if _, ok := byPath[module+"/cmd/yardmaster"]; !ok {
		t.Fatalf("go list -deps ./cmd/yardmaster did not list the daemon itself")
	}
}
