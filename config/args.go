package config

import (
	"errors"
	"reflect"
	"slices"

	"go.yaml.in/yaml/v3"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// decodePluginConfig checks a profile's pluginConfig and returns the
// arguments of each plugin it configures, typed, defaulted and validated.
//
// A plugin's args start as its Registration's NewArgs (the defaults); a
// field written in the file replaces that field's default entirely, as
// kube-scheduler's decode-then-default does. Args of DefaultPreemption are
// checked and dropped: the plugin does nothing in yardmaster.
//
// What kube-scheduler accepts and ignores is accepted with a warning: an
// entry for a plugin it does not know (it keeps the args undecoded, and
// uses them only if the plugin is enabled, which then fails), and args for
// a plugin that takes none. built lists the plugins kube-scheduler would
// build for the profile (resolvePlugins): NodeResourcesFit's args are
// checked only when it is one of them, as kube-scheduler checks them only
// when it builds the plugin (its validation of every profile's args looks
// them up under the wrong name).
func decodePluginConfig(d *decoder, cat *catalog, pcs []filePluginConfig, path string, built []string) map[string]any {
	p := d.p
	args := map[string]any{}
	seen := map[string]int{}
	for j, pc := range pcs {
		pp := indexPath(childPath(path, "pluginConfig"), j)
		np := childPath(pp, "name")
		if k, dup := seen[pc.Name]; dup {
			p.add(pp, "plugin %q is configured twice (also at pluginConfig[%d])", pc.Name, k)
			continue
		}
		seen[pc.Name] = j
		if slices.Contains(invalidInV1, pc.Name) {
			p.add(np, "%s", cat.unknown(pc.Name))
			continue
		}
		r, ok := cat.lookup(pc.Name)
		if !ok {
			if pc.Name == "" {
				p.warn(np, "ignored: an entry without a plugin name configures nothing (kube-scheduler ignores it too)")
			} else {
				p.warn(np, "ignored: %s (kube-scheduler ignores the args of a plugin nothing enables)", cat.unknown(pc.Name))
			}
			continue
		}
		ap := childPath(pp, "args")
		node, _ := pc.Args.(*yaml.Node)
		node, ok = stripTypeMeta(node, pc.Name, ap, p)
		if !ok {
			continue
		}
		if r.NewArgs == nil {
			if node != nil && !(node.Kind == yaml.MappingNode && len(node.Content) == 0) {
				p.warn(ap, "ignored: plugin %q takes no arguments (kube-scheduler ignores them too)", pc.Name)
			}
			continue
		}
		a := r.NewArgs()
		v := reflect.ValueOf(a)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			p.add(ap, "internal error: plugin %q's NewArgs returns %T, not a pointer to a struct", pc.Name, a)
			continue
		}
		if node != nil {
			before := len(p.list)
			d.decode(node, v.Elem(), ap)
			if len(p.list) > before {
				continue
			}
		}
		defaultArgs(a)
		if pc.Name == registry.NodeResourcesFitName && !slices.Contains(built, pc.Name) {
			if r.ValidateArgs != nil && r.ValidateArgs(a) != nil {
				p.warn(ap, "not checked, and not used: plugin %q is not enabled in this profile (kube-scheduler checks these args only when it is)", pc.Name)
			}
		} else if r.ValidateArgs != nil {
			if err := r.ValidateArgs(a); err != nil {
				addArgsError(p, ap, err)
				continue
			}
		}
		args[pc.Name] = a
	}
	return args
}

// stripTypeMeta checks the apiVersion and kind that kube-scheduler lets
// args carry (and prints in its effective configuration) and returns the
// args without them.
func stripTypeMeta(n *yaml.Node, plugin, path string, p *problems) (*yaml.Node, bool) {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return n, true // decode says what is wrong with it
	}
	ok := true
	out := *n
	out.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var want []string
		switch k.Value {
		case "apiVersion":
			want = []string{apiV1} // kube-scheduler v1.37 has no other version of the args
		case "kind":
			want = []string{plugin + "Args"}
		default:
			out.Content = append(out.Content, k, v)
			continue
		}
		fp := childPath(path, k.Value)
		p.mark(fp, k)
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || !slices.Contains(want, v.Value) {
			p.addNode(v, fp, "must be %q, got %s", want[0], describe(v))
			ok = false
		}
	}
	return &out, ok
}

// addArgsError records a ValidateArgs error, at the args field it names
// when it is a field.Error (as kube-scheduler-style validation returns).
func addArgsError(p *problems, path string, err error) {
	for _, fe := range argsErrors(err) {
		if fe.Field != "" {
			p.add(childPath(path, fe.Field), "%s", fe.ErrorBody())
		} else {
			p.add(path, "%s", fe.Detail)
		}
	}
}

// addDefaultArgsError records a ValidateArgs error for args the file did
// not give: the plugin is enabled, its pluginConfig is missing, and its
// defaults are not enough (NetworkTraffic has no default Prometheus
// address). kube-scheduler would fail the same way when it builds the
// plugin; saying so here makes `config validate` and startup name the field.
func addDefaultArgsError(p *problems, profilePath, plugin string, err error) {
	at := childPath(profilePath, "pluginConfig")
	for _, fe := range argsErrors(err) {
		what, body := "its args", fe.Detail
		if fe.Field != "" {
			what, body = "args."+fe.Field, fe.ErrorBody()
		}
		p.add(at, "plugin %q is enabled but has no pluginConfig entry, and the default of %s is not valid: %s; add {name: %s, args: {...}} here",
			plugin, what, body, plugin)
	}
}

// argsErrors splits a ValidateArgs error into field errors. An error that
// is not a field.Error becomes one with no Field and the error as Detail.
func argsErrors(err error) []*field.Error {
	var list []error
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		list = agg.Errors()
	} else {
		list = []error{err}
	}
	out := make([]*field.Error, 0, len(list))
	for _, e := range list {
		var fe *field.Error
		if errors.As(e, &fe) && fe.Field != "" && fe.Field != "<nil>" {
			out = append(out, fe)
			continue
		}
		out = append(out, &field.Error{Detail: e.Error()})
	}
	return out
}

// defaultArgs applies kube-scheduler's post-decode defaulting to args, so
// that the effective configuration shows every value in use. The plugins
// default the same way when built; this is for what `config validate`
// prints and what Profile.Args holds.
func defaultArgs(a any) {
	if d, ok := a.(framework.ArgsDefaulter); ok {
		d.SetDefaults()
	}
}
