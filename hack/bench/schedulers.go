package main

import (
	"context"
	"crypto/tls"
	"debug/buildinfo"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

// ceilingSchedulerName is the schedulerName of the ceiling's pods: no
// scheduler runs under it, so only the harness's Bindings place them.
const ceilingSchedulerName = "bench-nobody"

// profileName is the spec.schedulerName of the pods given to contender c.
// Each contender has its own, so a scheduler left running by mistake could
// never take another's pods.
func profileName(c string) string {
	if isCeiling(c) {
		return ceilingSchedulerName
	}
	return "bench-" + c
}

// schedulerConfig is the KubeSchedulerConfiguration both schedulers get:
// identical but for the profile's name. Everything not set here is each
// scheduler's default (parallelism 16, adaptive percentageOfNodesToScore,
// the default plugins).
func schedulerConfig(kubeconfig, schedulerName string, qps float64, burst int) string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %s
  burst: %d
leaderElection:
  leaderElect: false
profiles:
- schedulerName: %s
`, kubeconfig, strconv.FormatFloat(qps, 'f', -1, 64), burst, schedulerName)
}

// startScheduler writes contender c's configuration and starts it with its
// log in logPath.
func startScheduler(o *options, c, kubeconfig, dir, logPath string) (*process, error) {
	cfgPath := filepath.Join(dir, c+".yaml")
	if err := os.WriteFile(cfgPath, []byte(schedulerConfig(kubeconfig, profileName(c), o.qps, o.burst)), 0o644); err != nil {
		return nil, fmt.Errorf("writing %s config: %w", c, err)
	}
	// Both serve their HTTP endpoint (health, metrics, pprof) as they
	// would in a cluster, each on a free loopback port, so that neither a
	// slow-dying predecessor nor anything else on the machine holding the
	// default port can fail a start.
	port, err := procgroup.FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	var (
		p        *process
		pprofURL string
	)
	switch c {
	case yardmasterName, baselineName:
		binary, http := o.yardmasterBinary, o.yardmasterHTTP
		if c == baselineName {
			binary, http = o.baselineBinary, o.baselineHTTP
		}
		args := []string{"run", "--config", cfgPath}
		if http {
			args = append(args, "--http-bind-address="+addr)
			if o.profile {
				args = append(args, "--enable-profiling")
				pprofURL = "http://" + addr + "/debug/pprof/"
			}
		}
		p, err = startProcess(c, binary, append(args, o.yardmasterFlags...), logPath)
	case kubeSchedulerName:
		args := []string{"--config", cfgPath, "--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port)}
		if o.profile {
			// Without an authorization kubeconfig every path but the
			// always-allowed ones is forbidden; pprof is on by default.
			args = append(args, "--authorization-always-allow-paths=/healthz,/readyz,/livez,/debug/pprof/*")
			pprofURL = "https://" + addr + "/debug/pprof/"
		}
		if o.podGroups {
			// Without it kube-scheduler ignores spec.schedulingGroup. A
			// --feature-gates in -kube-scheduler-flags adds to it.
			args = append(args, "--feature-gates=GenericWorkload=true")
		}
		p, err = startProcess(c, o.kubeSchedulerBin, append(args, o.kubeSchedulerFlags...), logPath)
	default:
		return nil, fmt.Errorf("%q is not a scheduler binary", c)
	}
	if err != nil {
		return nil, err
	}
	p.pprofURL = pprofURL
	return p, nil
}

// supportsFlag reports whether `binary args... --help` mentions flag, for
// flags that binaries built from older trees lack.
func supportsFlag(binary, flag string, args ...string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, binary, append(args, "--help")...).CombinedOutput()
	return strings.Contains(string(out), flag)
}

// fetchProfile saves the profile at url (a CPU profile blocks for its
// ?seconds=) into path, authenticating with token if it is set. The
// endpoints are on loopback; kube-scheduler's certificate is self-signed.
func fetchProfile(ctx context.Context, url, token, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fetchPprof(ctx, url, token, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fetchPprof copies what a pprof endpoint at url serves into w.
func fetchPprof(ctx context.Context, url, token string, w io.Writer) error {
	// Not verifying is fine for a self-signed certificate on loopback.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	// The endpoint comes up a moment (kube-scheduler: a second or two)
	// after the process starts.
	var resp *http.Response
	for range 250 {
		if resp, err = hc.Do(req); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("fetching profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("fetching profile: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("saving profile: %w", err)
	}
	return nil
}

// bindRoundRobin is the ceiling: workers post the Binding of pod i to node
// i mod nodes, as fast as the API server takes them, deciding nothing.
// With events, each Binding is followed by the events.k8s.io Scheduled
// event both schedulers post for every pod they place.
func bindRoundRobin(ctx context.Context, c kubernetes.Interface, workers int, pods []*v1.Pod, nodes int, events bool) error {
	return parallel(ctx, workers, len(pods), func(ctx context.Context, i int) error {
		p, node := pods[i], nodeName(i%nodes)
		b := &v1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name},
			Target:     v1.ObjectReference{Kind: "Node", Name: node},
		}
		if err := c.CoreV1().Pods(p.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("binding %s/%s: %w", p.Namespace, p.Name, err)
		}
		if !events {
			return nil
		}
		now := metav1.NowMicro()
		ev := &eventsv1.Event{
			// Named as client-go's event recorders name them.
			ObjectMeta:          metav1.ObjectMeta{Namespace: p.Namespace, Name: fmt.Sprintf("%s.%x", p.Name, now.UnixNano())},
			EventTime:           now,
			ReportingController: "bench-ceiling",
			ReportingInstance:   "bench-ceiling",
			Action:              "Binding",
			Reason:              "Scheduled",
			Regarding:           v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name},
			Note:                fmt.Sprintf("Successfully assigned %s/%s to %s", p.Namespace, p.Name, node),
			Type:                v1.EventTypeNormal,
		}
		if _, err := c.EventsV1().Events(p.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("posting the Scheduled event of %s/%s: %w", p.Namespace, p.Name, err)
		}
		return nil
	})
}

// binaryVersion describes a binary: the k8s.io/kubernetes module version a
// kube-scheduler was built from (its --version says v0.0.0-master when
// built as a module), or the first line of `<bin> version`.
func binaryVersion(path string, versionArgs ...string) string {
	if info, err := buildinfo.ReadFile(path); err == nil {
		for _, d := range info.Deps {
			if d.Path == "k8s.io/kubernetes" {
				return d.Version
			}
		}
		if info.Main.Path == "k8s.io/kubernetes" && info.Main.Version != "" {
			return info.Main.Version
		}
	}
	if len(versionArgs) == 0 {
		return "unknown"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, versionArgs...).Output()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimPrefix(line, filepath.Base(path)+" ")
}
