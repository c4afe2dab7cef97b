// Tests that keep the README and the pages of docs/ true where that is
// mechanical: the README's first two commands, every relative link and
// its anchor, every `make` target, and every yardmaster command and flag
// they name.
package docs_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

// readme is the front page, relative to this package.
const readme = "../README.md"

// pages returns the Markdown files whose claims are checked: the front
// page, the project files beside it and every page of docs/.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{readme, "../CONTRIBUTING.md", "../SECURITY.md", "../CHANGELOG.md"}, docs...)
	if chart, err := filepath.Glob("../deploy/helm/*/README.md"); err == nil {
		files = append(files, chart...)
	}
	return files
}

// markdown is a page split into what the checks read.
type markdown struct {
	path string
	// text is the page with fenced code blocks blanked out (links and
	// headings are read from it).
	text string
	// code holds every line of a fenced block and every inline code span,
	// each with the line it is on.
	code []codeLine
	// headings are the page's headings as written.
	headings []string
}

type codeLine struct {
	line int
	text string
	// fenced is a line of a fenced block rather than an inline span.
	fenced bool
	// output is a line of a fenced block that shows a session (lines
	// with a `$ ` prompt) and is not one of its prompts: what a command
	// printed, not a command.
	output bool
}

var inlineCode = regexp.MustCompile("`([^`\n]+)`")

func readMarkdown(t *testing.T, path string) *markdown {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := &markdown{path: path}
	var text strings.Builder
	inFence := false
	// block is where the open fenced block's lines start in m.code.
	block := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			if inFence {
				markOutput(m.code[block:])
			}
			inFence = !inFence
			block = len(m.code)
			text.WriteString("\n")
			continue
		}
		if inFence {
			m.code = append(m.code, codeLine{line: n, text: line, fenced: true})
			text.WriteString("\n")
			continue
		}
		text.WriteString(line + "\n")
		if strings.HasPrefix(line, "#") {
			m.headings = append(m.headings, strings.TrimSpace(strings.TrimLeft(line, "#")))
		}
		for _, sm := range inlineCode.FindAllStringSubmatch(line, -1) {
			m.code = append(m.code, codeLine{line: n, text: sm[1]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	m.text = text.String()
	return m
}

// markOutput marks the lines of a fenced block that are output: in a
// block with `$ ` prompts, every other line.
func markOutput(block []codeLine) {
	session := false
	for _, c := range block {
		session = session || strings.HasPrefix(c.text, "$ ")
	}
	for i := range block {
		block[i].output = session && !strings.HasPrefix(block[i].text, "$ ")
	}
}

// The README opens with the two commands a new user runs.
func TestReadmeFirstCommands(t *testing.T) {
	m := readMarkdown(t, readme)
	var first []string
	for _, c := range m.code {
		if !c.fenced {
			continue
		}
		cmd, _, _ := strings.Cut(c.text, "#")
		if cmd = strings.TrimSpace(cmd); cmd != "" {
			first = append(first, cmd)
		}
		if len(first) == 2 {
			break
		}
	}
	if want := []string{"make demo", "make test"}; strings.Join(first, "; ") != strings.Join(want, "; ") {
		t.Errorf("README's first commands are %q, want %q", first, want)
	}
}

var (
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// anchorDrop is what GitHub drops from a heading to make its anchor.
	anchorDrop = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// anchor returns the fragment GitHub gives a heading.
func anchor(heading string) string {
	a := strings.ToLower(anchorDrop.ReplaceAllString(heading, ""))
	return strings.ReplaceAll(a, " ", "-")
}

// Every relative link leads to a file that exists, and a link to a
// heading of a Markdown page to a heading that exists.
func TestDocLinks(t *testing.T) {
	parsed := map[string]*markdown{}
	read := func(path string) *markdown {
		if m, ok := parsed[path]; ok {
			return m
		}
		parsed[path] = readMarkdown(t, path)
		return parsed[path]
	}
	for _, page := range pages(t) {
		m := read(page)
		for _, sm := range mdLink.FindAllStringSubmatch(m.text, -1) {
			target := sm[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			found := false
			for _, h := range read(path).headings {
				found = found || anchor(h) == frag
			}
			if !found {
				t.Errorf("%s links to %s: %s has no heading with that anchor", page, target, path)
			}
		}
	}
}

var (
	// binary matches how the pages run yardmaster: by name, or from a
	// bin/ directory.
	binary     = regexp.MustCompile(`^(?:[\w./~-]*bin/)?yardmaster$`)
	makeTarget = regexp.MustCompile(`^make\s+([a-z][\w-]*)`)
	// commandStart finds where a command begins in a line of code: at its
	// start, or after a shell separator or a prompt.
	commandStart = regexp.MustCompile(`(?:^|\$ |&& |; |\| )\s*(?:[A-Z_]+=\S+\s+)*`)
)

// commands returns the commands of one line of code: each as the
// words from its start to a comment, a separator or the line's end.
func commands(line string) [][]string {
	var out [][]string
	for _, loc := range commandStart.FindAllStringIndex(line, -1) {
		rest := line[loc[1]:]
		if i := strings.IndexAny(rest, "#;|&"); i >= 0 {
			rest = rest[:i]
		}
		if words := strings.Fields(rest); len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

// makeTargets returns the Makefile's targets.
func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, sm := range regexp.MustCompile(`(?m)^([a-z][\w-]*)\s*:`).FindAllStringSubmatch(string(data), -1) {
		targets[sm[1]] = true
	}
	return targets
}

// Every `make TARGET` the pages give is a target of the Makefile.
func TestDocMakeTargets(t *testing.T) {
	targets := makeTargets(t)
	for _, page := range pages(t) {
		for _, c := range readMarkdown(t, page).code {
			if c.output {
				continue
			}
			for _, words := range commands(c.text) {
				if sm := makeTarget.FindStringSubmatch(strings.Join(words, " ")); sm != nil && !targets[sm[1]] {
					t.Errorf("%s:%d: `make %s`: the Makefile has no target %q", page, c.line, sm[1], sm[1])
				}
			}
		}
	}
}

// Every yardmaster command the pages give exists, with every flag it
// names; every flag named alone in inline code is a flag of some
// yardmaster command.
func TestDocCommandsAndFlags(t *testing.T) {
	root, plugin := app.NewCommand(), app.NewKubectlCommand()
	all := allFlags(root)
	for _, page := range pages(t) {
		for _, c := range readMarkdown(t, page).code {
			if c.output {
				continue
			}
			for _, words := range commands(c.text) {
				var args []string
				tree := root
				switch {
				case binary.MatchString(words[0]):
					args = words[1:]
				case words[0] == "kubectl" && len(words) > 1 && words[1] == "yardmaster":
					args, tree = words[2:], plugin
				case words[0] == app.KubectlPluginName:
					args, tree = words[1:], plugin
				default:
					continue
				}
				if err := checkCommand(tree, args); err != nil {
					t.Errorf("%s:%d: `%s`: %v", page, c.line, strings.Join(words, " "), err)
				}
			}
			// A flag on its own in the README's prose (`--secure-port`,
			// `--secure-port=0`, `--leader-elect-*`); the pages of docs/
			// also name the flags of kube-apiserver and other tools.
			if c.fenced || page != readme {
				continue
			}
			if f, ok := loneFlag(c.text); ok && !anyFlag(all, f) {
				t.Errorf("%s:%d: `%s`: no yardmaster command has the flag --%s", page, c.line, c.text, f)
			}
		}
	}
}

// loneFlag returns the name of the long flag an inline span consists of.
func loneFlag(span string) (string, bool) {
	if !strings.HasPrefix(span, "--") || strings.ContainsAny(span, " ") {
		return "", false
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(span, "--"), "=")
	return name, name != ""
}

// anyFlag reports whether a flag of all matches name, which may hold
// `*` wildcards.
func anyFlag(all map[string]bool, name string) bool {
	if all[name] {
		return true
	}
	for f := range all {
		if ok, _ := filepath.Match(name, f); ok {
			return true
		}
	}
	return false
}

// checkCommand walks args down root's subcommands and checks every flag
// on the command it reaches.
func checkCommand(root *cobra.Command, args []string) error {
	var path []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			break
		}
		path = append(path, a)
	}
	cmd, rest, err := root.Find(path)
	if err != nil {
		return err
	}
	cmd.InitDefaultHelpFlag()
	if len(rest) > 0 && (cmd == root || !cmd.Runnable()) {
		return fmt.Errorf("%q is not a command of %q", rest[0], cmd.CommandPath())
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *pflag.Flag
		if strings.HasPrefix(a, "--") {
			f = lookup(cmd, name)
		} else if len(name) == 1 {
			f = shorthand(cmd, name)
		}
		if f == nil {
			return fmt.Errorf("%q has no flag %s", cmd.CommandPath(), a)
		}
	}
	return nil
}

func lookup(cmd *cobra.Command, name string) *pflag.Flag {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f
	}
	return cmd.InheritedFlags().Lookup(name)
}

func shorthand(cmd *cobra.Command, s string) *pflag.Flag {
	if f := cmd.Flags().ShorthandLookup(s); f != nil {
		return f
	}
	return cmd.InheritedFlags().ShorthandLookup(s)
}

// allFlags returns the long flags of every command under root, hidden
// ones included (the kube-scheduler flags yardmaster refuses by name are
// hidden flags).
func allFlags(root *cobra.Command) map[string]bool {
	all := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { all[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { all[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return all
}
