package controlplane

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

// Simulated nodes: KWOK (sigs.k8s.io/kwok, the kwok controller) plays the
// kubelet of every node that carries KWOKNodeAnnotation. It reports the
// node Ready and renews its Lease in kube-node-lease, moves pods bound to
// it to Running and Ready, completes the ones that would run to completion
// and removes deleted ones, as the Stage files in kwok/ (kept in this
// repository and passed with kwok --config) describe. Nodes without the
// annotation, such as CreateReadyNode's, are not KWOK's: their pods stay
// Pending as before.

// KWOKNodeAnnotation marks a node KWOK manages, with the value
// KWOKNodeAnnotationValue (kwok --manage-nodes-with-annotation-selector).
// The name is KWOK's own convention.
const (
	KWOKNodeAnnotation      = "kwok.x-k8s.io/node"
	KWOKNodeAnnotationValue = "fake"
)

// KWOKRunDurationAnnotation on a pod with restartPolicy Never or OnFailure
// says how long it runs once Running on a KWOK node before it succeeds, as
// a Go duration ("30s"). Without it a Job's pod succeeds at once and any
// other pod runs until it is deleted. kwok/pod-complete.yaml reads it.
const KWOKRunDurationAnnotation = "kwok.yardmaster.io/run-duration"

// DefaultNodeLeaseDuration is the node lease duration KWOK sets when
// Options.NodeLeaseDuration is zero: a kubelet's default. Leases are renewed
// every quarter of it.
const DefaultNodeLeaseDuration = 40 * time.Second

// kwokPodCIDR is where KWOK takes pod IPs from (kwok --cidr). Its default,
// 10.0.0.0/24, is ServiceClusterIPRange and holds 254 addresses; this one
// overlaps nothing here and holds a benchmark's pods. The addresses are
// only written into pod status: nothing is sent to them.
const kwokPodCIDR = "10.244.0.0/16"

// kwokPollInterval paces the wait for KWOK's /healthz, which answers once
// its controllers have started, a second or two after it starts.
const kwokPollInterval = 100 * time.Millisecond

//go:embed kwok/*.yaml
var kwokStages embed.FS

// writeKWOKStages writes the Stage files into dir and returns their paths.
func writeKWOKStages(dir string) ([]string, error) {
	names, err := fs.Glob(kwokStages, "kwok/*.yaml")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating KWOK stage dir: %w", err)
	}
	paths := make([]string, 0, len(names))
	for _, name := range names {
		b, err := kwokStages.ReadFile(name)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, filepath.Base(name))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, fmt.Errorf("writing KWOK stage %q: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// startKWOK starts kwok against the API server as the admin user and waits
// until it serves /healthz, which it does only after its node and pod
// controllers have started.
func (c *ControlPlane) startKWOK(ctx context.Context, path string) error {
	leaseDuration := c.opts.NodeLeaseDuration
	if leaseDuration <= 0 {
		leaseDuration = DefaultNodeLeaseDuration
	}
	// Whole seconds, at least one: kwok reads 0 as "no leases".
	leaseSeconds := max(1, int((leaseDuration+time.Second-1)/time.Second))
	workDir := filepath.Join(c.Dir, "kwok")
	stages, err := writeKWOKStages(filepath.Join(workDir, "stages"))
	if err != nil {
		return err
	}
	port, err := procgroup.FreePort()
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// kwok also reads ~/.kwok/kwok.yaml, which kwokctl writes, before
	// --config; KWOK_WORKDIR points it at a directory of this control
	// plane instead. procgroup.Start passes this process's environment,
	// so env(1) adds the variable and execs kwok in the same process.
	args := []string{
		"KWOK_WORKDIR=" + workDir,
		path,
		"--kubeconfig=" + c.AdminKubeconfig,
		"--manage-nodes-with-annotation-selector=" + KWOKNodeAnnotation + "=" + KWOKNodeAnnotationValue,
		"--node-lease-duration-seconds=" + strconv.Itoa(leaseSeconds),
		"--cidr=" + kwokPodCIDR,
		"--server-address=" + addr,
	}
	for _, s := range stages {
		args = append(args, "--config="+s)
	}
	p, err := procgroup.Start("kwok", "env", args, c.KWOKLog)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.kwok = p
	c.mu.Unlock()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	return poll(ctx, p, kwokPollInterval, func(ctx context.Context) error {
		return getOK(ctx, hc, "http://"+addr+"/healthz", "")
	})
}

// CreateKWOKNode creates node as one KWOK manages: with
// KWOKNodeAnnotation, ready and without the not-ready taint as
// CreateReadyNode makes it, so a scheduler can use it at once; from then on
// KWOK renews its Lease, refreshes its status and runs the pods bound to
// it. It needs a control plane started with Options.KWOK. node is not
// modified.
func CreateKWOKNode(ctx context.Context, c kubernetes.Interface, node *v1.Node) (*v1.Node, error) {
	n := node.DeepCopy()
	metav1.SetMetaDataAnnotation(&n.ObjectMeta, KWOKNodeAnnotation, KWOKNodeAnnotationValue)
	return CreateReadyNode(ctx, c, n)
}
