// Package extender calls kube-scheduler's HTTP extenders: webhooks that a
// KubeSchedulerConfiguration lists under extenders, asked to filter the
// nodes the plugins left, to add their scores, and to bind, with
// kube-scheduler's wire format (k8s.io/kube-scheduler/extender/v1) and
// semantics.
package extender

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	restclient "k8s.io/client-go/rest"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// DefaultTimeout is the time limit of a call when HTTPTimeout is 0, as in
// kube-scheduler.
const DefaultTimeout = 5 * time.Second

// maxResponse bounds what is read of an answer: a filter answer with every
// Node of a large cluster is tens of megabytes; more is not an answer.
const maxResponse = 256 << 20

// Config is one entry of the configuration's extenders, kube-scheduler's
// Extender.
type Config struct {
	// URLPrefix is where the verbs are posted: URLPrefix/verb.
	URLPrefix                                         string
	FilterVerb, PreemptVerb, PrioritizeVerb, BindVerb string
	// Weight multiplies the extender's scores (0–10, scaled to 0–100).
	Weight int64
	// EnableHTTPS without a CA in TLS skips verifying the server.
	EnableHTTPS bool
	TLS         *TLSConfig
	// HTTPTimeout bounds each call; 0 is DefaultTimeout.
	HTTPTimeout time.Duration
	// NodeCacheCapable extenders are sent node names, not Node objects.
	NodeCacheCapable bool
	// ManagedResources, when any, make the extender see only the pods
	// that request or limit one of them.
	ManagedResources []ManagedResource
	// Ignorable extenders that fail are skipped instead of failing the
	// pod's attempt.
	Ignorable bool
}

// ManagedResource is an extended resource an extender manages.
type ManagedResource struct {
	Name string
	// IgnoredByScheduler leaves the resource out of NodeResourcesFit's
	// checks.
	IgnoredByScheduler bool
}

// TLSConfig is kube-scheduler's ExtenderTLSConfig.
type TLSConfig struct {
	Insecure                  bool
	ServerName                string
	CertFile, KeyFile, CAFile string
	CertData, KeyData, CAData []byte
}

// Extender is one configured extender.
type Extender struct {
	cfg     Config
	client  *http.Client
	managed map[v1.ResourceName]struct{}
}

// New returns the extender cfg describes; it fails on TLS settings that
// cannot be loaded.
func New(cfg Config) (*Extender, error) {
	var rc restclient.Config
	if t := cfg.TLS; t != nil {
		rc.TLSClientConfig = restclient.TLSClientConfig{
			Insecure: t.Insecure, ServerName: t.ServerName,
			CertFile: t.CertFile, KeyFile: t.KeyFile, CAFile: t.CAFile,
			CertData: t.CertData, KeyData: t.KeyData, CAData: t.CAData,
		}
	}
	if cfg.EnableHTTPS && len(rc.CAFile) == 0 && len(rc.CAData) == 0 {
		rc.Insecure = true // kube-scheduler's rule
	}
	tlsConfig, err := restclient.TLSConfigFor(&rc)
	if err != nil {
		return nil, fmt.Errorf("extender %s: %w", cfg.URLPrefix, err)
	}
	timeout := cfg.HTTPTimeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	e := &Extender{
		cfg: cfg,
		client: &http.Client{
			Transport: utilnet.SetTransportDefaults(&http.Transport{TLSClientConfig: tlsConfig}),
			Timeout:   timeout,
		},
	}
	if len(cfg.ManagedResources) > 0 {
		e.managed = make(map[v1.ResourceName]struct{}, len(cfg.ManagedResources))
		for _, r := range cfg.ManagedResources {
			e.managed[v1.ResourceName(r.Name)] = struct{}{}
		}
	}
	return e, nil
}

// Name is the extender's URL prefix, as kube-scheduler names it.
func (e *Extender) Name() string { return e.cfg.URLPrefix }

// Weight is the multiplier of the extender's scores.
func (e *Extender) Weight() int64 { return e.cfg.Weight }

// IsIgnorable reports whether a failure of the extender is skipped.
func (e *Extender) IsIgnorable() bool { return e.cfg.Ignorable }

// IsFilter, IsPrioritizer, IsBinder and SupportsPreemption report which
// verbs the extender has.
func (e *Extender) IsFilter() bool           { return e.cfg.FilterVerb != "" }
func (e *Extender) IsPrioritizer() bool      { return e.cfg.PrioritizeVerb != "" }
func (e *Extender) IsBinder() bool           { return e.cfg.BindVerb != "" }
func (e *Extender) SupportsPreemption() bool { return e.cfg.PreemptVerb != "" }

// NodeCacheCapable reports whether the extender is sent node names only.
func (e *Extender) NodeCacheCapable() bool { return e.cfg.NodeCacheCapable }

// IsInterested reports whether the extender sees pod: always without
// managed resources, else when a container or init container requests or
// limits one of them (kube-scheduler's rule: sidecars are init containers,
// pod-level resources and overhead do not count).
func (e *Extender) IsInterested(pod *v1.Pod) bool {
	if e.managed == nil {
		return true
	}
	return e.manages(pod.Spec.Containers) || e.manages(pod.Spec.InitContainers)
}

func (e *Extender) manages(cs []v1.Container) bool {
	for i := range cs {
		for name := range cs[i].Resources.Requests {
			if _, ok := e.managed[name]; ok {
				return true
			}
		}
		for name := range cs[i].Resources.Limits {
			if _, ok := e.managed[name]; ok {
				return true
			}
		}
	}
	return false
}

// args is what filter and prioritize send: the pod and the nodes, by name
// to a node-cache-capable extender, else as Node objects.
func (e *Extender) args(pod *v1.Pod, nodes []*v1.Node) *extenderv1.ExtenderArgs {
	a := &extenderv1.ExtenderArgs{Pod: pod}
	if e.cfg.NodeCacheCapable {
		names := make([]string, len(nodes))
		for i, n := range nodes {
			names[i] = n.Name
		}
		a.NodeNames = &names
		return a
	}
	list := &v1.NodeList{Items: make([]v1.Node, len(nodes))}
	for i, n := range nodes {
		list.Items[i] = *n
	}
	a.Nodes = list
	return a
}

// FilterResult is an extender's verdict on the nodes it was sent.
type FilterResult struct {
	// Passed names the nodes that passed, in the extender's order.
	Passed []string
	// Failed and FailedAndUnresolvable give a reason per node refused; a
	// node in both is unresolvable.
	Failed, FailedAndUnresolvable map[string]string
}

// Filter asks the extender which of nodes fit pod. An extender without a
// filter verb passes them all. The passed nodes must be among those sent.
func (e *Extender) Filter(ctx context.Context, pod *v1.Pod, nodes []*v1.Node) (FilterResult, error) {
	if !e.IsFilter() {
		passed := make([]string, len(nodes))
		for i, n := range nodes {
			passed[i] = n.Name
		}
		return FilterResult{Passed: passed}, nil
	}
	var result extenderv1.ExtenderFilterResult
	if err := e.send(ctx, e.cfg.FilterVerb, e.args(pod, nodes), &result); err != nil {
		return FilterResult{}, err
	}
	if result.Error != "" {
		return FilterResult{}, errors.New(result.Error)
	}
	sent := make(map[string]struct{}, len(nodes))
	for _, n := range nodes {
		sent[n.Name] = struct{}{}
	}
	var passed []string
	switch {
	case e.cfg.NodeCacheCapable && result.NodeNames != nil:
		passed = *result.NodeNames
	case result.Nodes != nil:
		passed = make([]string, len(result.Nodes.Items))
		for i := range result.Nodes.Items {
			passed[i] = result.Nodes.Items[i].Name
		}
	}
	for _, name := range passed {
		if _, ok := sent[name]; !ok {
			return FilterResult{}, fmt.Errorf("extender %q claims a filtered node %q which is not found in the input node list", e.cfg.URLPrefix, name)
		}
	}
	return FilterResult{Passed: passed, Failed: result.FailedNodes, FailedAndUnresolvable: result.FailedAndUnresolvableNodes}, nil
}

// Prioritize returns the extender's scores for nodes, by node name, each
// already multiplied by the weight and scaled to the plugins' 0–100 range
// (kube-scheduler's score × weight × MaxNodeScore / MaxExtenderPriority).
func (e *Extender) Prioritize(ctx context.Context, pod *v1.Pod, nodes []*v1.Node) (map[string]int64, error) {
	if !e.IsPrioritizer() {
		return nil, nil
	}
	var result extenderv1.HostPriorityList
	if err := e.send(ctx, e.cfg.PrioritizeVerb, e.args(pod, nodes), &result); err != nil {
		return nil, err
	}
	scores := make(map[string]int64, len(result))
	for _, hp := range result {
		// A host listed twice counts twice, as kube-scheduler adds them.
		scores[hp.Host] += hp.Score * e.cfg.Weight * (maxNodeScore / extenderv1.MaxExtenderPriority)
	}
	return scores, nil
}

// maxNodeScore is the plugins' maximum score (framework.MaxNodeScore).
const maxNodeScore = 100

// Bind asks the extender to bind pod to node.
func (e *Extender) Bind(ctx context.Context, pod *v1.Pod, node string) error {
	if !e.IsBinder() {
		return errors.New("unexpected empty bindVerb in extender")
	}
	var result extenderv1.ExtenderBindingResult
	args := &extenderv1.ExtenderBindingArgs{PodName: pod.Name, PodNamespace: pod.Namespace, PodUID: pod.UID, Node: node}
	if err := e.send(ctx, e.cfg.BindVerb, args, &result); err != nil {
		return err
	}
	if result.Error != "" {
		return errors.New(result.Error)
	}
	return nil
}

// ProcessPreemption sends the extender the candidate nodes of pod's
// preemption with their victims and returns what it keeps: the nodes it
// still allows, each with the victims it chose, found by UID among
// podsOn(node) (a victim that is not there is an error, as in
// kube-scheduler). A node-cache-capable extender is sent the victims'
// UIDs only.
func (e *Extender) ProcessPreemption(ctx context.Context, pod *v1.Pod, victims map[string]*extenderv1.Victims, podsOn func(node string) ([]*v1.Pod, bool)) (map[string]*extenderv1.Victims, error) {
	if !e.SupportsPreemption() {
		return nil, fmt.Errorf("preempt verb is not defined for extender %v but run into ProcessPreemption", e.cfg.URLPrefix)
	}
	args := &extenderv1.ExtenderPreemptionArgs{Pod: pod}
	if e.cfg.NodeCacheCapable {
		args.NodeNameToMetaVictims = make(map[string]*extenderv1.MetaVictims, len(victims))
		for node, v := range victims {
			mv := &extenderv1.MetaVictims{Pods: make([]*extenderv1.MetaPod, len(v.Pods)), NumPDBViolations: v.NumPDBViolations}
			for i, p := range v.Pods {
				mv.Pods[i] = &extenderv1.MetaPod{UID: string(p.UID)}
			}
			args.NodeNameToMetaVictims[node] = mv
		}
	} else {
		args.NodeNameToVictims = victims
	}
	var result extenderv1.ExtenderPreemptionResult
	if err := e.send(ctx, e.cfg.PreemptVerb, args, &result); err != nil {
		return nil, err
	}
	out := make(map[string]*extenderv1.Victims, len(result.NodeNameToMetaVictims))
	for node, mv := range result.NodeNameToMetaVictims {
		pods, ok := podsOn(node)
		if !ok {
			return nil, fmt.Errorf("extender %v: node %q not found", e.cfg.URLPrefix, node)
		}
		v := &extenderv1.Victims{Pods: []*v1.Pod{}}
		if mv != nil {
			v.NumPDBViolations = mv.NumPDBViolations
			for _, mp := range mv.Pods {
				i := slices.IndexFunc(pods, func(p *v1.Pod) bool { return mp != nil && string(p.UID) == mp.UID })
				if i < 0 {
					return nil, fmt.Errorf("extender: %v claims to preempt pod (UID: %v) on node: %v, but the pod is not found on that node", e.cfg.URLPrefix, mp, node)
				}
				v.Pods = append(v.Pods, pods[i])
			}
		}
		out[node] = v
	}
	return out, nil
}

// send posts args as JSON to URLPrefix/verb and decodes the answer into
// result; an answer other than 200 is an error.
func (e *Extender) send(ctx context.Context, verb string, args, result any) error {
	body, err := json.Marshal(args)
	if err != nil {
		return err
	}
	url := strings.TrimRight(e.cfg.URLPrefix, "/") + "/" + verb
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("failed %v with extender at URL %v, code %v", verb, url, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponse)).Decode(result); err != nil {
		return fmt.Errorf("extender at URL %v, %v: %w", url, verb, err)
	}
	return nil
}
