package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pluginLibraries are the packages under predicates/ and priorities/ that
// hold no plugin but code plugin folders share: a plugin folder may import
// them besides framework.
var pluginLibraries = []string{"priorities/prommetric"}

// testKits are the packages of this module a plugin folder's tests may
// import besides framework and pluginLibraries.
var testKits = []string{"framework/frameworktest", "framework/frameworktest/cycletest"}

// pluginFolder is one folder of predicates/, priorities/ or binder/defaultbinder that holds
// plugins, as its source says.
type pluginFolder struct {
	pkg string // relative to the module
	dir string
	// code and tests are the parsed non-test and test files.
	code, tests []*ast.File
}

// pluginFolders parses every package under predicates/ and priorities/, and binder/defaultbinder,
// but the shared libraries.
func pluginFolders(t *testing.T) []pluginFolder {
	t.Helper()
	var out []pluginFolder
	for _, p := range goList(t, "./predicates/...", "./priorities/...", "./binder/defaultbinder") {
		pkg := strings.TrimPrefix(p.ImportPath, module+"/")
		if slices.Contains(pluginLibraries, pkg) {
			continue
		}
		f := pluginFolder{pkg: pkg, dir: p.Dir}
		entries, err := os.ReadDir(p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
				continue
			}
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, e.Name()), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(e.Name(), "_test.go") {
				f.tests = append(f.tests, file)
			} else {
				f.code = append(f.code, file)
			}
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		t.Fatal("no plugin folder found")
	}
	return out
}

// ourImports returns the packages of this module files import, relative
// to the module.
func ourImports(files []*ast.File) []string {
	var out []string
	for _, f := range files {
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if dep, ok := strings.CutPrefix(path, module+"/"); ok && !slices.Contains(out, dep) {
				out = append(out, dep)
			}
		}
	}
	return out
}

// A plugin folder is built only on the public API: its code imports, of
// this module, framework and the shared plugin libraries; its tests add
// the test kit. Neither imports the scheduler, the queue, the binder,
// internal packages or another plugin folder.
func TestPluginFoldersImportOnlyFramework(t *testing.T) {
	for _, f := range pluginFolders(t) {
		allowed := append([]string{"framework", f.pkg}, pluginLibraries...)
		for _, dep := range ourImports(f.code) {
			if !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s: a plugin folder may import only framework and %v", f.pkg, dep, pluginLibraries)
			}
		}
		allowed = append(allowed, testKits...)
		for _, dep := range ourImports(f.tests) {
			if !slices.Contains(allowed, dep) {
				t.Errorf("%s's tests import %s: they may import only framework, %v and the test kit %v", f.pkg, dep, pluginLibraries, testKits)
			}
		}
	}
}

// methodsDeclared returns the names of methods named name declared in
// files, with their receivers' type names.
func methodsDeclared(files []*ast.File, name string) []string {
	var out []string
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != name {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				out = append(out, id.Name)
			}
		}
	}
	return out
}

// hintFuncs returns the names of the functions and methods that the
// EventsToRegister methods of files give as QueueingHintFn or
// PodInfoHintFn.
func hintFuncs(files []*ast.File) []string {
	var out []string
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "EventsToRegister" || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				kv, ok := n.(*ast.KeyValueExpr)
				if !ok {
					return true
				}
				key, ok := kv.Key.(*ast.Ident)
				if !ok || (key.Name != "QueueingHintFn" && key.Name != "PodInfoHintFn") {
					return true
				}
				switch v := kv.Value.(type) {
				case *ast.Ident:
					out = append(out, v.Name)
				case *ast.SelectorExpr:
					out = append(out, v.Sel.Name)
				}
				return true
			})
		}
	}
	return out
}

// mentions reports whether any of files uses one of the identifiers.
func mentions(files []*ast.File, idents ...string) bool {
	found := false
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && slices.Contains(idents, id.Name) {
				found = true
			}
			return !found
		})
	}
	return found
}

// Every plugin that signs pods has tests of its signing (the test kit's
// CheckSigning or CheckKeptAnswers, or its own calls of SignPod), and
// every plugin that registers events has tests of its hints (the test
// kit's CheckHints, its own calls of EventsToRegister, or of one of the
// hint functions it registers).
func TestPluginFoldersTestSigningAndHints(t *testing.T) {
	signers, hinters := 0, 0
	for _, f := range pluginFolders(t) {
		if s := methodsDeclared(f.code, "SignPod"); len(s) > 0 {
			signers++
			if !mentions(f.tests, "CheckSigning", "CheckKeptAnswers", "SignPod") {
				t.Errorf("%s: %v sign pods, and no test of the folder checks their signatures (frameworktest.CheckSigning or CheckKeptAnswers)", f.pkg, s)
			}
		}
		if h := methodsDeclared(f.code, "EventsToRegister"); len(h) > 0 {
			hinters++
			if !mentions(f.tests, append([]string{"EventsToRegister", "CheckHints"}, hintFuncs(f.code)...)...) {
				t.Errorf("%s: %v register events, and no test of the folder checks their hints (frameworktest.CheckHints, or calls of EventsToRegister or a hint they register)", f.pkg, h)
			}
		}
	}
	if signers == 0 || hinters == 0 {
		t.Errorf("found %d signing and %d hinting plugin folders: the parsing is broken", signers, hinters)
	}
}
