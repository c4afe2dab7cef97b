package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FieldError is one problem of a configuration: where it is and what is
// wrong.
type FieldError struct {
	// Path is the field path, as in
	// profiles[1].plugins.score.enabled[0].weight; empty when the problem is
	// with the file as a whole.
	Path string
	// Line and Column locate the field in the file, counting from 1; 0 when
	// unknown (a field that was left out, or a value given by a flag).
	Line, Column int
	// Message says what is wrong and, where it can, what to write instead.
	Message string
}

// Error returns "line L:C: path: message".
func (e FieldError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d:%d: ", e.Line, e.Column)
	}
	e.writeBody(&b)
	return b.String()
}

func (e FieldError) writeBody(b *strings.Builder) {
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
}

// Error is what Decode and Load return for a configuration they refuse:
// every problem found, in file order.
type Error struct {
	// File is the path given to Load; empty for Decode.
	File     string
	Problems []FieldError
}

// Error returns one problem per line, each prefixed with FILE:LINE:COL as
// compilers do, so that editors can jump to it.
func (e *Error) Error() string {
	return strings.Join(FormatProblems(e.File, e.Problems, ""), "\n")
}

// FormatProblems returns one line per problem, each prefixed with
// FILE:LINE:COL (what of it is known) and then with prefix.
func FormatProblems(file string, list []FieldError, prefix string) []string {
	lines := make([]string, len(list))
	for i, p := range list {
		var b strings.Builder
		switch {
		case file != "" && p.Line > 0:
			fmt.Fprintf(&b, "%s:%d:%d: ", file, p.Line, p.Column)
		case file != "":
			fmt.Fprintf(&b, "%s: ", file)
		case p.Line > 0:
			fmt.Fprintf(&b, "line %d:%d: ", p.Line, p.Column)
		}
		b.WriteString(prefix)
		p.writeBody(&b)
		lines[i] = b.String()
	}
	return lines
}

// position is where a node starts in the file.
type position struct{ line, column int }

// problems collects the problems of one file. It knows where each decoded
// field is, so that a problem found after decoding (in defaulting or
// validation) still points into the file.
type problems struct {
	list []FieldError
	// warnings are what kube-scheduler accepts and then ignores (a weight
	// on a filter, args for a plugin nothing enables): yardmaster accepts
	// them too, with the same meaning, and says so.
	warnings []FieldError
	// at maps a field path to where its key (or element) is in the file.
	at map[string]position
}

func newProblems() *problems { return &problems{at: map[string]position{}} }

// mark records where the field at path is.
func (p *problems) mark(path string, n *yaml.Node) {
	if _, ok := p.at[path]; !ok && n != nil {
		p.at[path] = position{n.Line, n.Column}
	}
}

// addNode records a problem at node n.
func (p *problems) addNode(n *yaml.Node, path, format string, args ...any) {
	fe := FieldError{Path: path, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		fe.Line, fe.Column = n.Line, n.Column
	}
	p.list = append(p.list, fe)
}

// add records a problem at path, locating it at the field or, for a field
// the file left out, at its closest ancestor that the file has.
func (p *problems) add(path, format string, args ...any) {
	p.list = append(p.list, p.locate(path, fmt.Sprintf(format, args...)))
}

// warn records a warning at path, located as add locates a problem.
func (p *problems) warn(path, format string, args ...any) {
	p.warnings = append(p.warnings, p.locate(path, fmt.Sprintf(format, args...)))
}

// warnNode records a warning at node n.
func (p *problems) warnNode(n *yaml.Node, path, format string, args ...any) {
	fe := FieldError{Path: path, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		fe.Line, fe.Column = n.Line, n.Column
	}
	p.warnings = append(p.warnings, fe)
}

func (p *problems) locate(path, msg string) FieldError {
	fe := FieldError{Path: path, Message: msg}
	for q := path; ; q = parentPath(q) {
		if pos, ok := p.at[q]; ok {
			fe.Line, fe.Column = pos.line, pos.column
			break
		}
		if q == "" {
			break
		}
	}
	return fe
}

// noteFlags marks each problem with a field that a command-line flag set
// (flags maps field paths to flag names) as coming from that flag: its
// position in the file, if any, is not where the value came from.
func (p *problems) noteFlags(flags map[string]string) {
	for i, fe := range p.list {
		if flag, ok := flags[fe.Path]; ok {
			p.list[i].Message += " (value from " + flag + ")"
			p.list[i].Line, p.list[i].Column = 0, 0
		}
	}
}

// err returns the problems as an *Error in file order (problems without a
// position last), or nil when there are none.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &Error{Problems: inFileOrder(p.list)}
}

// inFileOrder returns list sorted by position, those without one last.
func inFileOrder(list []FieldError) []FieldError {
	list = slices.Clone(list)
	slices.SortStableFunc(list, func(a, b FieldError) int {
		if (a.Line == 0) != (b.Line == 0) {
			if a.Line == 0 {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return list
}

// childPath returns path.name.
func childPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// indexPath returns path[i].
func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// parentPath strips the last element of path: a.b[2].c → a.b[2] → a.b → a.
func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}
