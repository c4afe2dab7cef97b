package config

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates/noderesources"
	"github.com/yardmaster-io/yardmaster/scheduler/extender"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// fileExtender is kube-scheduler's Extender (config/v1), field for field.
type fileExtender struct {
	URLPrefix        string                   `json:"urlPrefix"`
	FilterVerb       string                   `json:"filterVerb,omitempty"`
	PreemptVerb      string                   `json:"preemptVerb,omitempty"`
	PrioritizeVerb   string                   `json:"prioritizeVerb,omitempty"`
	Weight           int64                    `json:"weight,omitempty"`
	BindVerb         string                   `json:"bindVerb,omitempty"`
	EnableHTTPS      bool                     `json:"enableHTTPS,omitempty"`
	TLSConfig        *fileExtenderTLS         `json:"tlsConfig,omitempty"`
	HTTPTimeout      metav1.Duration          `json:"httpTimeout,omitempty"`
	NodeCacheCapable bool                     `json:"nodeCacheCapable,omitempty"`
	ManagedResources []fileExtenderManagedRes `json:"managedResources,omitempty"`
	Ignorable        bool                     `json:"ignorable,omitempty"`
}

type fileExtenderManagedRes struct {
	Name               string `json:"name"`
	IgnoredByScheduler bool   `json:"ignoredByScheduler,omitempty"`
}

// fileExtenderTLS is kube-scheduler's ExtenderTLSConfig.
type fileExtenderTLS struct {
	Insecure   bool        `json:"insecure,omitempty"`
	ServerName string      `json:"serverName,omitempty"`
	CertFile   string      `json:"certFile,omitempty"`
	KeyFile    string      `json:"keyFile,omitempty"`
	CAFile     string      `json:"caFile,omitempty"`
	CertData   base64Bytes `json:"certData,omitempty"`
	KeyData    base64Bytes `json:"keyData,omitempty"`
	CAData     base64Bytes `json:"caData,omitempty"`
}

// base64Bytes is a []byte field: base64 in the file, as encoding/json
// reads and writes []byte.
type base64Bytes []byte

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *base64Bytes) UnmarshalText(text []byte) error {
	out, err := base64.StdEncoding.DecodeString(string(text))
	if err != nil {
		return fmt.Errorf("not base64: %w", err)
	}
	*b = out
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (b base64Bytes) MarshalText() ([]byte, error) {
	return base64.StdEncoding.AppendEncode(nil, b), nil
}

// buildExtenders validates the file's extenders as kube-scheduler does and
// returns them.
func buildExtenders(fes []fileExtender, p *problems) []extender.Config {
	if len(fes) == 0 {
		return nil
	}
	out := make([]extender.Config, 0, len(fes))
	binders := 0
	managed := map[string]bool{}
	for i, fe := range fes {
		path := fmt.Sprintf("extenders[%d]", i)
		if fe.PrioritizeVerb != "" && fe.Weight <= 0 {
			p.add(path+".weight", "must have a positive weight applied to it, got %d", fe.Weight)
		}
		if fe.BindVerb != "" {
			binders++
		}
		if fe.URLPrefix == "" {
			// kube-scheduler takes it and fails every call.
			p.add(path+".urlPrefix", "required: the extender's URL")
		}
		if fe.HTTPTimeout.Duration < 0 {
			// kube-scheduler takes it and then times out every call.
			p.add(path+".httpTimeout", "must not be negative, got %v", fe.HTTPTimeout.Duration)
		}
		c := extender.Config{
			URLPrefix:        fe.URLPrefix,
			FilterVerb:       fe.FilterVerb,
			PreemptVerb:      fe.PreemptVerb,
			PrioritizeVerb:   fe.PrioritizeVerb,
			BindVerb:         fe.BindVerb,
			Weight:           fe.Weight,
			EnableHTTPS:      fe.EnableHTTPS,
			HTTPTimeout:      cmp.Or(fe.HTTPTimeout.Duration, extender.DefaultTimeout),
			NodeCacheCapable: fe.NodeCacheCapable,
			Ignorable:        fe.Ignorable,
		}
		if t := fe.TLSConfig; t != nil {
			c.TLS = &extender.TLSConfig{
				Insecure: t.Insecure, ServerName: t.ServerName,
				CertFile: t.CertFile, KeyFile: t.KeyFile, CAFile: t.CAFile,
				CertData: t.CertData, KeyData: t.KeyData, CAData: t.CAData,
			}
		}
		if c.TLS != nil || c.EnableHTTPS {
			// Certificates that do not load refuse the file, as
			// kube-scheduler refuses to start.
			if _, err := extender.New(c); err != nil {
				p.add(path+".tlsConfig", "%v", err)
			}
		}
		for j, r := range fe.ManagedResources {
			rpath := fmt.Sprintf("%s.managedResources[%d].name", path, j)
			if msgs := validation.IsQualifiedName(r.Name); len(msgs) > 0 {
				for _, m := range msgs {
					p.add(rpath, "%q: %s", r.Name, m)
				}
			} else if !framework.IsExtendedResourceName(v1.ResourceName(r.Name)) {
				p.add(rpath, "%q is an invalid extended resource name", r.Name)
			}
			if managed[r.Name] {
				p.add(rpath, "%q: duplicate extender managed resource name", r.Name)
			}
			managed[r.Name] = true
			c.ManagedResources = append(c.ManagedResources, extender.ManagedResource{Name: r.Name, IgnoredByScheduler: r.IgnoredByScheduler})
		}
		out = append(out, c)
	}
	if binders > 1 {
		p.add("extenders", "found %d extenders implementing bind: only one extender can implement bind", binders)
	}
	return out
}

// extendersFile writes cs back in the file's form.
func extendersFile(cs []extender.Config) []fileExtender {
	if len(cs) == 0 {
		return nil
	}
	out := make([]fileExtender, len(cs))
	for i, c := range cs {
		fe := fileExtender{
			URLPrefix:        c.URLPrefix,
			FilterVerb:       c.FilterVerb,
			PreemptVerb:      c.PreemptVerb,
			PrioritizeVerb:   c.PrioritizeVerb,
			Weight:           c.Weight,
			BindVerb:         c.BindVerb,
			EnableHTTPS:      c.EnableHTTPS,
			HTTPTimeout:      metav1.Duration{Duration: c.HTTPTimeout},
			NodeCacheCapable: c.NodeCacheCapable,
			Ignorable:        c.Ignorable,
		}
		if t := c.TLS; t != nil {
			fe.TLSConfig = &fileExtenderTLS{
				Insecure: t.Insecure, ServerName: t.ServerName,
				CertFile: t.CertFile, KeyFile: t.KeyFile, CAFile: t.CAFile,
				CertData: t.CertData, KeyData: t.KeyData, CAData: t.CAData,
			}
		}
		for _, r := range c.ManagedResources {
			fe.ManagedResources = append(fe.ManagedResources, fileExtenderManagedRes{Name: r.Name, IgnoredByScheduler: r.IgnoredByScheduler})
		}
		out[i] = fe
	}
	return out
}

// ignoreExtendersResources gives every profile's NodeResourcesFit the
// managed resources the extenders mark ignoredByScheduler as its
// ignoredResources, as kube-scheduler does (its written configuration
// shows them): the profile's own list is replaced, not extended.
func ignoreExtendersResources(profiles []framework.Profile, exts []extender.Config) {
	var ignored []string
	for _, e := range exts {
		for _, r := range e.ManagedResources {
			if r.IgnoredByScheduler {
				ignored = append(ignored, r.Name)
			}
		}
	}
	if len(ignored) == 0 {
		return
	}
	for i := range profiles {
		p := &profiles[i]
		args, _ := p.Args[registry.NodeResourcesFitName].(*noderesources.FitArgs)
		if args == nil {
			args = noderesources.DefaultFitArgs()
		} else {
			c := *args
			args = &c
		}
		args.IgnoredResources = slices.Clone(ignored)
		p.Args = maps.Clone(p.Args)
		if p.Args == nil {
			p.Args = map[string]any{}
		}
		p.Args[registry.NodeResourcesFitName] = args
	}
}
