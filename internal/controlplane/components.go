package controlplane

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

// etcdQuotaBytes raises etcd's 2 GiB default backend quota: benchmarks
// create and delete tens of thousands of objects between compactions.
const etcdQuotaBytes = 4 << 30

// Poll intervals of the readiness waits. etcd is up within a fraction of a
// second; kube-apiserver takes 10-20s, so polling it faster buys nothing.
const (
	etcdPollInterval      = 50 * time.Millisecond
	apiserverPollInterval = 200 * time.Millisecond
)

// startEtcd starts a single-member etcd on loopback and waits for /health.
func (c *ControlPlane) startEtcd(ctx context.Context, path string, clientPort, peerPort int) error {
	clientURL := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	args := []string{
		"--name=default",
		"--data-dir=" + filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		"--initial-cluster-state=new",
		"--quota-backend-bytes=" + strconv.Itoa(etcdQuotaBytes),
		"--log-level=warn",
	}
	// Throw-away data needs no fsync, and fsync dominates etcd's write
	// latency. Older etcd (Debian's 3.4) lacks the flag.
	if etcdSupportsFlag(path, "--unsafe-no-fsync") {
		args = append(args, "--unsafe-no-fsync")
	}
	c.etcdPath, c.etcdArgs = path, args
	c.EtcdURL = clientURL
	return c.launchEtcd(ctx)
}

// launchEtcd starts etcd with the arguments startEtcd chose (its data
// directory kept, so a restart finds its data) and waits for /health.
func (c *ControlPlane) launchEtcd(ctx context.Context) error {
	p, err := procgroup.Start("etcd", c.etcdPath, c.etcdArgs, c.EtcdLog)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.etcd = p
	c.mu.Unlock()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	return poll(ctx, p, etcdPollInterval, func(ctx context.Context) error {
		return getOK(ctx, hc, c.EtcdURL+"/health", "")
	})
}

func etcdSupportsFlag(path, flag string) bool {
	out, _ := exec.Command(path, "--help").CombinedOutput()
	return strings.Contains(string(out), flag)
}

// startAPIServer writes the service-account key and token file, starts
// kube-apiserver against etcd and waits for /readyz.
func (c *ControlPlane) startAPIServer(ctx context.Context, path string, securePort int, extraFlags []string) error {
	saKey := filepath.Join(c.Dir, "service-account.key")
	if err := writeRSAKey(saKey); err != nil {
		return err
	}
	tokenFile := filepath.Join(c.Dir, "tokens.csv")
	if err := writeTokenFile(tokenFile, c.tokens); err != nil {
		return err
	}
	certDir := filepath.Join(c.Dir, "certs")
	args := []string{
		"--etcd-servers=" + c.EtcdURL,
		"--secure-port=" + strconv.Itoa(securePort),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--cert-dir=" + certDir,
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		"--service-account-issuer=" + ServiceAccountIssuer,
		"--service-cluster-ip-range=" + ServiceClusterIPRange,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=Node,RBAC",
		// ServiceAccount rejects every pod of a namespace without a
		// "default" ServiceAccount, and no token controller creates one.
		// The other default plugins admit pods without controllers.
		"--disable-admission-plugins=ServiceAccount",
		// Priority and fairness would queue a benchmark's ~2,000 req/s
		// from one identity; the plain in-flight limits, raised, do not.
		"--enable-priority-and-fairness=false",
		"--max-requests-inflight=2000",
		"--max-mutating-requests-inflight=1000",
		// With the advertise address on loopback, the lease reconciler
		// only logs that it refuses to write the kubernetes endpoints.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		"-v=1",
	}
	args = withFlags(args, extraFlags)
	c.apiserverPath, c.apiserverArgs = path, args
	c.APIServerURL = "https://127.0.0.1:" + strconv.Itoa(securePort)
	return c.launchAPIServer(ctx)
}

// launchAPIServer starts kube-apiserver with the arguments startAPIServer
// chose (its keys, tokens and serving certificate kept, so clients of a
// restarted server trust it and are trusted) and waits for /readyz.
func (c *ControlPlane) launchAPIServer(ctx context.Context) error {
	p, err := procgroup.Start("kube-apiserver", c.apiserverPath, c.apiserverArgs, c.APIServerLog)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.apiserver = p
	c.mu.Unlock()

	// kube-apiserver writes its self-signed serving cert (followed by the
	// CA that signed it) before it listens, so the CA is known by the time
	// /readyz answers; until then each poll retries reading it.
	certFile := filepath.Join(c.Dir, "certs", "apiserver.crt")
	var hc *http.Client
	defer func() {
		if hc != nil {
			hc.CloseIdleConnections()
		}
	}()
	return poll(ctx, p, apiserverPollInterval, func(ctx context.Context) error {
		if hc == nil {
			ca, err := os.ReadFile(certFile)
			if err != nil {
				return fmt.Errorf("reading serving cert: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(ca) {
				return fmt.Errorf("no certificate in %q yet", certFile)
			}
			c.caData = ca
			hc = &http.Client{
				Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{RootCAs: pool}},
				Timeout:   5 * time.Second,
			}
		}
		return getOK(ctx, hc, c.APIServerURL+"/readyz?verbose", c.AdminToken)
	})
}

// waitForBootstrap waits for what kube-apiserver creates after /readyz
// may already answer: the "default" namespace, the bootstrap RBAC roles,
// which kube-scheduler's identity needs, and, for KWOK's node Leases,
// the kube-node-lease namespace.
func (c *ControlPlane) waitForBootstrap(ctx context.Context) error {
	namespaces := []string{metav1.NamespaceDefault}
	if c.opts.KWOK {
		namespaces = append(namespaces, v1.NamespaceNodeLease)
	}
	return poll(ctx, c.apiserver, apiserverPollInterval, func(ctx context.Context) error {
		for _, ns := range namespaces {
			if _, err := c.adminClient.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
				return fmt.Errorf("namespace %q: %w", ns, err)
			}
		}
		if _, err := c.adminClient.RbacV1().ClusterRoles().Get(ctx, "system:kube-scheduler", metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("bootstrap clusterrole: %w", err)
			}
			return err
		}
		return nil
	})
}

// poll calls check every interval until it returns nil, p exits, or ctx
// ends. The error of a timeout carries check's last error and the tail of
// p's log, which usually says why.
func poll(ctx context.Context, p *procgroup.Process, interval time.Duration, check func(context.Context) error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	var lastErr error
	for {
		if ended, _ := p.Exited(); ended {
			return exitError(p)
		}
		err := check(ctx)
		if err == nil {
			return nil
		}
		// A check cut short by the deadline says less than the one before.
		if ctx.Err() == nil || lastErr == nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to become ready: %w (last error: %v); tail of %q:\n%s",
				p.Name(), context.Cause(ctx), lastErr, p.LogPath(), p.LogTail(logTailBytes))
		case <-t.C:
		}
	}
}

// getOK returns nil if GET url answers 200.
func getOK(ctx context.Context, hc *http.Client, url, token string) error {
	_, err := getBody(ctx, hc, url, token)
	return err
}

// getBody returns the body (up to 64 KiB) of GET url if it answers 200,
// else an error that quotes up to 4 KiB of it.
func getBody(ctx context.Context, hc *http.Client, url, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", redact(url), resp.Status, strings.TrimSpace(string(body[:min(len(body), 4<<10)])))
	}
	return string(body), nil
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Redacted()
}

// writeRSAKey writes a new PKCS#1 RSA key, which kube-apiserver accepts
// both to sign service-account tokens and, deriving the public half, to
// verify them.
func writeRSAKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating service-account key: %w", err)
	}
	b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("writing service-account key: %w", err)
	}
	return nil
}

// writeTokenFile writes kube-apiserver's --token-auth-file: CSV lines of
// token,user,uid,"group1,group2".
func writeTokenFile(path string, tokens []Token) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("writing token file: %w", err)
	}
	w := csv.NewWriter(f)
	for _, t := range tokens {
		rec := []string{t.Token, t.User, t.UID}
		if len(t.Groups) > 0 {
			rec = append(rec, strings.Join(t.Groups, ","))
		}
		if err := w.Write(rec); err != nil {
			f.Close()
			return fmt.Errorf("writing token file: %w", err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("writing token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing token file: %w", err)
	}
	return nil
}

// validateTokens rejects identities kube-apiserver would refuse or misread.
func validateTokens(tokens []Token) error {
	seen := map[string]bool{}
	for i, t := range tokens {
		if t.Token == "" || t.User == "" {
			return fmt.Errorf("token %d (user %q): token and user must be set", i, t.User)
		}
		if seen[t.Token] {
			return fmt.Errorf("token %d (user %q): duplicate token", i, t.User)
		}
		seen[t.Token] = true
		for _, g := range t.Groups {
			if g == "" || strings.Contains(g, ",") {
				return fmt.Errorf("token %d (user %q): group %q must be non-empty and have no comma", i, t.User, g)
			}
		}
		for _, s := range append([]string{t.Token, t.User, t.UID}, t.Groups...) {
			if strings.ContainsAny(s, "\r\n") {
				return fmt.Errorf("token %d (user %q): fields must not contain line breaks", i, t.User)
			}
		}
	}
	return nil
}
