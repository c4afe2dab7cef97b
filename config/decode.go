package config

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file turns YAML into the file types strictly. It walks a yaml.Node
// tree against the Go types with their json tags — the same names and
// types kube-scheduler's JSON decoding uses — instead of converting YAML to
// JSON, because the node tree keeps lines and columns and JSON does not.
//
// Semantics follow encoding/json with kube-scheduler's strictness: field
// names are case-sensitive; an unknown or repeated field is an error; null
// leaves a field at its zero value; a number must fit its type; a string
// is not a number and a number is not a string. A pointer, slice or map is
// always built afresh, so a value written in the file replaces a default
// entirely rather than merging into it.
//
// Scalars are read as kube-scheduler reads them. It parses YAML as YAML 1.1
// and converts it to JSON before decoding, so in a YAML file (not in a JSON
// one) an unquoted yes/no/on/off/y/n is a boolean — taken by a boolean
// field, refused by a string field — a float with a whole value (8.0, 1e2)
// is that integer, and what YAML 1.2 reads as a date (2024-01-01) is a
// string.

// maxNodes bounds the nodes one decode visits. Aliases let a small file
// expand to billions of nodes; a real configuration has a few hundred.
const maxNodes = 1 << 17

// maxDepth bounds nesting when a node is converted for a json.Unmarshaler;
// an alias can refer to its own ancestor.
const maxDepth = 64

// decoder is one strict decode of one file.
type decoder struct {
	p        *problems
	budget   int
	exceeded bool
	// json is set for a file kube-scheduler reads as JSON, where no YAML 1.1
	// rule applies: 8.0 is not an integer there.
	json bool
}

func newDecoder(p *problems) *decoder { return &decoder{p: p, budget: maxNodes} }

// parseYAML parses data as a single YAML document and returns its root.
func parseYAML(data []byte, p *problems) (root *yaml.Node) {
	if len(bytes.TrimSpace(data)) == 0 {
		p.addNode(nil, "", "the file is empty: want a KubeSchedulerConfiguration (apiVersion: %s, kind: %s)", apiV1, kindConfig)
		return nil
	}
	if !checkJSON(data, p) {
		return nil
	}
	defer func() {
		// The YAML parser is not ours; whatever it does with hostile input,
		// a bad file must be an error, not a crash.
		if r := recover(); r != nil {
			p.addNode(nil, "", "not valid YAML: %v", r)
			root = nil
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		p.list = append(p.list, yamlSyntaxError(err))
		return nil
	}
	// kube-scheduler reads the first document and ignores the rest, even
	// one that is not valid YAML; so does yardmaster, with a warning.
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		fe := yamlSyntaxError(err)
		p.warnings = append(p.warnings, FieldError{Line: fe.Line, Column: fe.Column,
			Message: "ignored: the file's YAML documents after the first (kube-scheduler reads only the first too); the next is not valid YAML: " + strings.TrimPrefix(fe.Message, "not valid YAML: ")})
	case !isEmptyDocument(&next):
		at := &next
		if len(next.Content) > 0 {
			at = next.Content[0]
		}
		p.warnNode(at, "", "ignored: the file's YAML documents after the first (kube-scheduler reads only the first too)")
	}
	if !expandMerges(&doc, p) {
		return nil
	}
	root = &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.AliasNode {
		root = root.Alias
	}
	if root == nil || root.Kind != yaml.MappingNode {
		p.addNode(root, "", "the file holds %s, not a KubeSchedulerConfiguration object", describe(root))
		return nil
	}
	return root
}

// checkJSON refuses a file that kube-scheduler would read as JSON and
// could not: like its decoder, a file whose first non-blank character is
// "{" is JSON, and must be one valid JSON value with nothing after it (a
// YAML flow mapping such as {apiVersion: v1} is not). Other files are YAML.
func checkJSON(data []byte, p *problems) bool {
	if !readsAsJSON(data) {
		return true
	}
	var v any
	err := json.Unmarshal(data, &v)
	if err == nil {
		return true
	}
	fe := FieldError{Message: "starts with {, so it is read as JSON (as kube-scheduler reads it), and is not valid JSON: " + err.Error()}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		fe.Line, fe.Column = lineColumn(data, se.Offset)
	}
	p.list = append(p.list, fe)
	return false
}

// readsAsJSON reports whether kube-scheduler reads data as JSON: whether
// its first non-blank character is "{".
func readsAsJSON(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// lineColumn returns the line and column (from 1) of the byte before
// offset, where encoding/json reports a syntax error.
func lineColumn(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:max(offset-1, 0)]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlSyntaxError turns a parser error into a problem with its line.
func yamlSyntaxError(err error) FieldError {
	msg := err.Error()
	fe := FieldError{Message: "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		fe.Line, _ = strconv.Atoi(m[1])
		fe.Column = 1
		fe.Message = "not valid YAML: " + msg[len(m[0]):]
	}
	return fe
}

// expandMerges replaces each YAML merge key (<<) of the document by the
// pairs of the mappings it merges, as kube-scheduler's YAML 1.1 parser
// does, so that the rest of the decoder sees plain mappings. A key that
// both a merge and the mapping (or two merges) set is then a key given
// twice, which kube-scheduler's strict parser refuses too ("already set in
// map"). It reports false, having said why, when the document cannot be
// expanded.
func expandMerges(doc *yaml.Node, p *problems) bool {
	m := &merger{p: p, state: map[*yaml.Node]expansion{}, budget: maxNodes, ok: true}
	m.expand(doc, "")
	return m.ok
}

type merger struct {
	p *problems
	// state says which nodes are expanded: each once, however many
	// aliases refer to it.
	state map[*yaml.Node]expansion
	// budget bounds the pairs merges copy: merges of merges grow a small
	// file as aliases do.
	budget int
	ok     bool
}

type expansion int

const (
	notExpanded expansion = iota
	expanding             // an ancestor of the node being expanded
	expanded
)

func (m *merger) expand(n *yaml.Node, path string) {
	if n == nil || !m.ok || m.state[n] != notExpanded {
		return
	}
	m.state[n] = expanding
	defer func() { m.state[n] = expanded }()
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			m.expand(c, path)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			m.expand(c, indexPath(path, i))
		}
	case yaml.AliasNode:
		m.expand(n.Alias, path)
	case yaml.MappingNode:
		var out []*yaml.Node
		merged := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!merge" {
				m.expand(v, childPath(path, k.Value))
				out = append(out, k, v)
				continue
			}
			merged = true
			for _, src := range m.sources(k, v, childPath(path, k.Value)) {
				m.budget -= len(src.Content)
				if m.budget < 0 {
					m.p.addNode(k, "", "the document is too large (more than %d values once merge keys are expanded)", maxNodes)
					m.ok = false
					return
				}
				out = append(out, src.Content...)
			}
		}
		if merged && m.ok {
			n.Content = out
		}
	}
}

// sources returns the expanded mappings a merge key's value names: a
// mapping or a list of mappings, each possibly an alias.
func (m *merger) sources(k, v *yaml.Node, path string) []*yaml.Node {
	list := []*yaml.Node{v}
	if r := resolveAlias(v); r != nil && r.Kind == yaml.SequenceNode {
		list = r.Content
	}
	var out []*yaml.Node
	for _, e := range list {
		r := resolveAlias(e)
		if r != nil && r.Kind == yaml.MappingNode && m.state[r] != expanding {
			m.expand(r, path)
			out = append(out, r)
			continue
		}
		m.p.addNode(k, path, "a YAML merge key merges a mapping or a list of mappings not containing it, got %s", describe(r))
		m.ok = false
	}
	return out
}

// resolveAlias follows aliases, at most maxDepth of them.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for range maxDepth {
		if n == nil || n.Kind != yaml.AliasNode {
			return n
		}
		n = n.Alias
	}
	return nil
}

func isEmptyDocument(n *yaml.Node) bool {
	if n.Kind == yaml.DocumentNode {
		return len(n.Content) == 0 || isNull(n.Content[0])
	}
	return n.Kind == 0 || isNull(n)
}

// decode fills v from n; path is the field path of v.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	n = d.resolve(n, path)
	if n == nil {
		return
	}
	d.budget--
	if d.budget < 0 {
		if !d.exceeded {
			d.exceeded = true
			d.p.addNode(n, path, "the document is too large (more than %d values once aliases are expanded)", maxNodes)
		}
		return
	}
	if isNull(n) {
		// As encoding/json: null leaves scalars alone and clears the rest.
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
			v.SetZero()
		}
		return
	}
	if v.Kind() != reflect.Pointer && v.CanAddr() {
		if u, ok := v.Addr().Interface().(json.Unmarshaler); ok {
			d.decodeUnmarshaler(n, u, path)
			return
		}
		if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok {
			if !d.isString(n, path) {
				return
			}
			if err := u.UnmarshalText([]byte(n.Value)); err != nil {
				d.p.addNode(n, path, "%v", err)
			}
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		nv := reflect.New(v.Type().Elem())
		d.budget++ // the pointer and its target are one value
		d.decode(n, nv.Elem(), path)
		v.Set(nv)
	case reflect.Interface:
		// Raw content (plugin args, extenders): kept as the node.
		v.Set(reflect.ValueOf(n))
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.p.addNode(n, path, "expected a list, got %s", describe(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, e := range n.Content {
			ep := indexPath(path, i)
			d.p.mark(ep, e)
			d.decode(e, s.Index(i), ep)
		}
		v.Set(s)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.String:
		if d.isString(n, path) {
			v.SetString(n.Value)
		}
	case reflect.Bool:
		b, ok := scalarBool(n)
		if !ok {
			d.p.addNode(n, path, "expected true or false, got %s", describe(n))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		whole, isFloat := d.wholeFloat(n)
		tooLarge := isFloat && (whole < -(1<<63) || whole >= 1<<63)
		switch {
		case isFloat:
			i = int64(whole)
		case n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&i) != nil:
			d.p.addNode(n, path, "expected an integer, got %s", describe(n))
			return
		}
		if tooLarge || v.OverflowInt(i) {
			bits := v.Type().Bits()
			d.p.addNode(n, path, "%s is out of range: must be between %d and %d", n.Value, int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var u uint64
		whole, isFloat := d.wholeFloat(n)
		tooLarge := isFloat && whole >= 1<<64
		switch {
		case isFloat && whole >= 0:
			u = uint64(whole)
		case isFloat, n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&u) != nil:
			d.p.addNode(n, path, "expected a non-negative integer, got %s", describe(n))
			return
		}
		if tooLarge || v.OverflowUint(u) {
			d.p.addNode(n, path, "%s is out of range: must be at most %d", n.Value, uint64(1)<<v.Type().Bits()-1)
			return
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&f) != nil {
			d.p.addNode(n, path, "expected a number, got %s", describe(n))
			return
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || v.OverflowFloat(f) {
			d.p.addNode(n, path, "%s is out of range: must be a finite number", n.Value)
			return
		}
		v.SetFloat(f)
	default:
		// A file type this decoder does not handle: a programming error,
		// reported rather than panicking on a user's file.
		d.p.addNode(n, path, "internal error: cannot decode into %s", v.Type())
	}
}

// isString reports whether n is a string as kube-scheduler reads it, and
// records why not when it is not. Besides YAML 1.2's strings, a plain
// scalar that YAML 1.2 reads as a timestamp is one: YAML 1.1's
// conversion to JSON keeps it as written. An unquoted YAML 1.1 boolean is
// not.
func (d *decoder) isString(n *yaml.Node, path string) bool {
	switch {
	case n.Kind != yaml.ScalarNode:
	case n.ShortTag() == "!!timestamp" && !d.json:
		return true
	case n.ShortTag() != "!!str":
	case n.Style == 0 && !d.json && isYAML11Bool(n.Value):
		d.p.addNode(n, path, "expected a string, got the YAML 1.1 boolean %s (quote it: %q), as kube-scheduler reads it", n.Value, n.Value)
		return false
	default:
		return true
	}
	d.p.addNode(n, path, "expected a string, got %s", describe(n))
	return false
}

// wholeFloat returns the value of a float written in a YAML file when it
// is a whole number: kube-scheduler's YAML-to-JSON conversion writes 8.0
// and 1e2 as 8 and 100, which an integer field takes. A JSON file's 8.0
// stays 8.0, which it refuses.
func (d *decoder) wholeFloat(n *yaml.Node) (float64, bool) {
	if d.json || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
		return 0, false
	}
	var f float64
	if n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return 0, false
	}
	return f, true
}

// resolve follows aliases; it returns nil (having reported why) when there
// is nothing to decode.
func (d *decoder) resolve(n *yaml.Node, path string) *yaml.Node {
	for range maxDepth {
		if n == nil {
			return nil
		}
		switch n.Kind {
		case yaml.AliasNode:
			n = n.Alias
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		default:
			return n
		}
	}
	d.p.addNode(n, path, "aliases nested too deeply")
	return nil
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.p.addNode(n, path, "expected an object, got %s", describe(n))
		return
	}
	fields := jsonFields(v.Type())
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		name, ok := d.key(k, path)
		if !ok {
			continue
		}
		fp := childPath(path, name)
		if first, dup := seen[name]; dup {
			d.p.addNode(k, fp, "field given twice (first on line %d)", first.Line)
			continue
		}
		seen[name] = k
		f, ok := fields[name]
		if !ok {
			d.p.addNode(k, fp, "unknown field%s", suggestField(name, fields))
			continue
		}
		d.p.mark(fp, k)
		d.decode(val, fieldByIndex(v, f), fp)
	}
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.p.addNode(n, path, "expected an object, got %s", describe(n))
		return
	}
	if v.Type().Key().Kind() != reflect.String {
		d.p.addNode(n, path, "internal error: cannot decode into %s", v.Type())
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		name, ok := d.key(k, path)
		if !ok {
			continue
		}
		fp := childPath(path, name)
		if first, dup := seen[name]; dup {
			d.p.addNode(k, fp, "key given twice (first on line %d)", first.Line)
			continue
		}
		seen[name] = k
		d.p.mark(fp, k)
		e := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, e, fp)
		m.SetMapIndex(reflect.ValueOf(name).Convert(v.Type().Key()), e)
	}
	v.Set(m)
}

// key returns a mapping key as a string. JSON keys are strings; a YAML key
// that is a scalar of another type (a number, say) is taken by its text, as
// converting the YAML to JSON would.
func (d *decoder) key(k *yaml.Node, path string) (string, bool) {
	if k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		d.p.addNode(k, path, "mapping keys must be strings, got %s", describe(k))
		return "", false
	}
	return k.Value, true
}

// decodeUnmarshaler hands n, as JSON, to a type that decodes itself
// (metav1.Duration, resource.Quantity, ...).
func (d *decoder) decodeUnmarshaler(n *yaml.Node, u json.Unmarshaler, path string) {
	val, err := d.plain(n, 0)
	if err != nil {
		d.p.addNode(n, path, "%v", err)
		return
	}
	data, err := json.Marshal(val)
	if err != nil {
		d.p.addNode(n, path, "%v", err)
		return
	}
	if err := u.UnmarshalJSON(data); err != nil {
		d.p.addNode(n, path, "invalid value %s: %v", describe(n), err)
	}
}

// plain converts n to the value encoding/json would have decoded from the
// equivalent JSON.
func (d *decoder) plain(n *yaml.Node, depth int) (any, error) {
	d.budget--
	if d.budget < 0 {
		return nil, fmt.Errorf("the value is too large (more than %d values once aliases are expanded)", maxNodes)
	}
	if depth > maxDepth {
		return nil, errors.New("the value is nested too deeply")
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, errors.New("unknown alias")
		}
		return d.plain(n.Alias, depth+1)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.plain(n.Content[0], depth+1)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, e := range n.Content {
			v, err := d.plain(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("mapping keys must be strings, got %s", describe(k))
			}
			v, err := d.plain(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool", "!!int", "!!float":
			var v any
			if err := n.Decode(&v); err != nil {
				return nil, err
			}
			if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
				return nil, fmt.Errorf("%s is not a finite number", n.Value)
			}
			return v, nil
		default:
			// A YAML 1.1 boolean is one to kube-scheduler.
			if b, ok := yaml11Bool(n.Value); ok && n.Style == 0 && !d.json {
				return b, nil
			}
			return n.Value, nil
		}
	}
	return nil, fmt.Errorf("unexpected YAML node")
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// scalarBool reads a boolean: YAML 1.2's true/false and, for files written
// for kube-scheduler's YAML 1.1 parser, unquoted yes/no/on/off/y/n.
func scalarBool(n *yaml.Node) (value, ok bool) {
	if n.Kind != yaml.ScalarNode {
		return false, false
	}
	if n.ShortTag() == "!!bool" {
		var b bool
		if n.Decode(&b) == nil {
			return b, true
		}
		return false, false
	}
	if n.Style != 0 {
		return false, false // quoted: a string
	}
	return yaml11Bool(n.Value)
}

// yaml11Bool reads YAML 1.1's booleans that YAML 1.2 reads as strings.
func yaml11Bool(s string) (value, ok bool) {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
		return true, true
	case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

func isYAML11Bool(s string) bool {
	_, ok := yaml11Bool(s)
	return ok
}

// describe names what a node holds, for messages.
func describe(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		switch n.ShortTag() {
		case "!!str":
			return fmt.Sprintf("the string %q", v)
		case "!!int":
			return "the integer " + v
		case "!!float":
			return "the number " + v
		case "!!bool":
			return "the boolean " + v
		case "!!null":
			return "null"
		default:
			return fmt.Sprintf("%s %q", n.ShortTag(), v)
		}
	}
	return "an empty document"
}

// jsonFields maps the json names of t's fields (embedded structs without a
// name flattened, as encoding/json does) to their index paths.
func jsonFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			index := append(slices.Clone(prefix), i)
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type, index)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, ok := out[name]; !ok {
				out[name] = index
			}
		}
	}
	walk(t, nil)
	return out
}

// fieldByIndex returns the field at index, which never crosses a pointer
// (jsonFields flattens only embedded struct values).
func fieldByIndex(v reflect.Value, index []int) reflect.Value {
	for _, i := range index {
		v = v.Field(i)
	}
	return v
}

// suggestField returns ` (did you mean "x"?)` for a field name that differs
// from a known one only in case or by a small typo.
func suggestField(name string, fields map[string][]int) string {
	best, bestDist := "", 3
	for f := range fields {
		if strings.EqualFold(f, name) {
			return fmt.Sprintf(" (did you mean %q?)", f)
		}
		if d := editDistance(strings.ToLower(f), strings.ToLower(name)); d < bestDist || (d == bestDist && f < best) {
			best, bestDist = f, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt / 2
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
