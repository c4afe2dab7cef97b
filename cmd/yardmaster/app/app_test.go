package app

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

func TestServePprof(t *testing.T) {
	tests := []struct {
		name                  string
		flag, secure          bool
		addr                  string
		fileSaysOn            bool
		wantPlain, wantSecure bool
	}{
		{name: "plain: the file's true alone is not enough", addr: "127.0.0.1:0", fileSaysOn: true},
		{name: "plain: flag and file", flag: true, addr: "127.0.0.1:0", fileSaysOn: true, wantPlain: true},
		{name: "plain: the file turns it off", flag: true, addr: "127.0.0.1:0"},
		{name: "no endpoint", flag: true, fileSaysOn: true},
		{name: "secure: the file's true is enough, as in kube-scheduler", secure: true, fileSaysOn: true, wantSecure: true},
		{name: "secure: the file turns it off", secure: true, flag: true},
		{name: "both", secure: true, flag: true, addr: "127.0.0.1:0", fileSaysOn: true, wantPlain: true, wantSecure: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.EnableProfiling = tc.fileSaysOn
			o := Options{EnableProfiling: tc.flag, HTTPBindAddress: tc.addr}
			if tc.secure {
				o.Secure = NewSecureServing()
			}
			plain, secure := servePprof(o, cfg)
			if plain != tc.wantPlain || secure != tc.wantSecure {
				t.Errorf("got plain %v secure %v, want %v %v", plain, secure, tc.wantPlain, tc.wantSecure)
			}
		})
	}
}

// parse parses args with a scheduler command, run or the root, and
// returns the Options they ask for.
func parse(t *testing.T, use string, args ...string) (Options, error) {
	t.Helper()
	cmd, sf := newSchedulerCommandFlags(use, "", registry.NewInTree())
	if err := cmd.ParseFlags(args); err != nil {
		return Options{}, err
	}
	return sf.options(cmd)
}

// A kube-scheduler command line, as kubeadm and the "multiple schedulers"
// documentation write it, runs yardmaster with kube-scheduler's meaning,
// with or without `run`.
func TestKubeSchedulerCommandLine(t *testing.T) {
	args := []string{
		"--config=/etc/kubernetes/my-scheduler/config.yaml",
		"--authentication-kubeconfig=/etc/kubernetes/scheduler.conf",
		"--authorization-kubeconfig=/etc/kubernetes/scheduler.conf",
		"--bind-address=127.0.0.1",
		"--secure-port=10260",
		"--kubeconfig=/etc/kubernetes/scheduler.conf",
		"--leader-elect=true",
		"--leader-elect-lease-duration=20s",
		"--leader-elect-resource-name=my-scheduler",
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
		"--authentication-skip-lookup=false",
		"--authentication-tolerate-lookup-failure=false",
		"--tls-cert-file=/etc/tls/tls.crt",
		"--tls-private-key-file=/etc/tls/tls.key",
		"--profiling=false",
		"--contention-profiling=false",
		"--kube-api-qps=100",
		"--kube-api-burst=200",
		"--v=2",
	}
	for _, use := range []string{"yardmaster", "run"} {
		t.Run(use, func(t *testing.T) {
			o, err := parse(t, use, args...)
			if err != nil {
				t.Fatal(err)
			}
			if o.Secure == nil {
				t.Fatal("no secure serving")
			}
			type got struct {
				ConfigFile, Kubeconfig, AuthnKubeconfig, AuthzKubeconfig string
				BindAddress                                              string
				SecurePort                                               int
				CertFile, KeyFile                                        string
				AlwaysAllow                                              []string
				SkipLookup, TolerateLookupFailure                        bool
				LeaderElect                                              bool
				LeaseDuration                                            time.Duration
				ResourceName                                             string
				QPS                                                      float32
				Burst                                                    int
				Profiling, ContentionProfiling                           bool
				LogLevel, HTTP                                           string
			}
			want := got{
				ConfigFile: "/etc/kubernetes/my-scheduler/config.yaml", Kubeconfig: "/etc/kubernetes/scheduler.conf",
				AuthnKubeconfig: "/etc/kubernetes/scheduler.conf", AuthzKubeconfig: "/etc/kubernetes/scheduler.conf",
				BindAddress: "127.0.0.1", SecurePort: 10260,
				CertFile: "/etc/tls/tls.crt", KeyFile: "/etc/tls/tls.key",
				AlwaysAllow:           []string{"/healthz", "/readyz", "/livez", "/metrics"},
				TolerateLookupFailure: false,
				LeaderElect:           true, LeaseDuration: 20 * time.Second, ResourceName: "my-scheduler",
				QPS: 100, Burst: 200,
				LogLevel: "info",
			}
			s := o.Secure
			g := got{
				ConfigFile: o.ConfigFile, Kubeconfig: deref(o.Overrides.Kubeconfig),
				AuthnKubeconfig: s.Authentication.RemoteKubeConfigFile, AuthzKubeconfig: s.Authorization.RemoteKubeConfigFile,
				BindAddress: s.Serving.BindAddress.String(), SecurePort: s.Serving.BindPort,
				CertFile: s.Serving.ServerCert.CertKey.CertFile, KeyFile: s.Serving.ServerCert.CertKey.KeyFile,
				AlwaysAllow: s.Authorization.AlwaysAllowPaths,
				SkipLookup:  s.Authentication.SkipInClusterLookup, TolerateLookupFailure: s.Authentication.TolerateInClusterLookupFailure,
				LeaderElect: deref(o.Overrides.LeaderElect), LeaseDuration: deref(o.Overrides.LeaseDuration), ResourceName: deref(o.Overrides.ResourceName),
				QPS: deref(o.Overrides.QPS), Burst: deref(o.Overrides.Burst),
				Profiling: deref(o.Profiling), ContentionProfiling: deref(o.ContentionProfiling),
				LogLevel: o.LogLevel, HTTP: o.HTTPBindAddress,
			}
			if diff := cmp.Diff(want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := parse(t, "yardmaster", "--feature-gates=Foo=true"); err == nil || !strings.Contains(err.Error(), "--feature-gates is kube-scheduler's") {
		t.Errorf("--feature-gates: %v, want it refused by name", err)
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// The secure port is served unless the plain HTTP endpoint alone was asked
// for.
func TestServeSecurely(t *testing.T) {
	tests := []struct {
		args       []string
		wantHTTP   string
		wantPort   int
		wantSecure bool
	}{
		{args: nil, wantSecure: true, wantPort: DefaultSecurePort},
		{args: []string{"--http-bind-address=127.0.0.1:0"}, wantHTTP: "127.0.0.1:0"},
		{args: []string{"--http-bind-address="}},
		// As kube-scheduler: port 0 serves no HTTPS.
		{args: []string{"--http-bind-address=127.0.0.1:0", "--secure-port=0"}, wantHTTP: "127.0.0.1:0"},
		{args: []string{"--secure-port=0"}},
		{args: []string{"--secure-port=0", "--authorization-kubeconfig=k"}},
		{args: []string{"--http-bind-address=127.0.0.1:0", "--authorization-kubeconfig=k"}, wantHTTP: "127.0.0.1:0", wantSecure: true, wantPort: DefaultSecurePort},
		{args: []string{"--http-bind-address=127.0.0.1:0", "--tls-cert-file=c", "--tls-private-key-file=k"}, wantHTTP: "127.0.0.1:0", wantSecure: true, wantPort: DefaultSecurePort},
		{args: []string{"--bind-address=127.0.0.1"}, wantSecure: true, wantPort: DefaultSecurePort},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o, err := parse(t, "run", tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if o.HTTPBindAddress != tc.wantHTTP || (o.Secure != nil) != tc.wantSecure {
				t.Fatalf("http %q secure %v, want %q %v", o.HTTPBindAddress, o.Secure != nil, tc.wantHTTP, tc.wantSecure)
			}
			if o.Secure != nil && o.Secure.Serving.BindPort != tc.wantPort {
				t.Errorf("secure port %d, want %d", o.Secure.Serving.BindPort, tc.wantPort)
			}
		})
	}
}

func TestLogSettings(t *testing.T) {
	tests := []struct {
		args                  []string
		wantLevel, wantFormat string
		wantErr               bool
	}{
		{args: nil, wantLevel: "info"},
		{args: []string{"--v=0"}, wantLevel: "info"},
		{args: []string{"--v=2"}, wantLevel: "info"},
		{args: []string{"-v", "3"}, wantLevel: "info"},
		{args: []string{"--v=4"}, wantLevel: "debug"},
		{args: []string{"--v=10"}, wantLevel: "debug"},
		{args: []string{"--v=5", "--log-level=warn"}, wantLevel: "warn"},
		{args: []string{"--log-level=error"}, wantLevel: "error"},
		{args: []string{"--v=-1"}, wantErr: true},
		{args: []string{"--logging-format=json"}, wantLevel: "info", wantFormat: "json"},
		{args: []string{"--logging-format=text"}, wantLevel: "info", wantFormat: "console"},
		{args: []string{"--logging-format=text", "--log-format=json"}, wantLevel: "info", wantFormat: "json"},
		{args: []string{"--logging-format=xml"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o, err := parse(t, "run", tc.args...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			if err == nil && (o.LogLevel != tc.wantLevel || o.LogFormat != tc.wantFormat) {
				t.Errorf("level %q format %q, want %q %q", o.LogLevel, o.LogFormat, tc.wantLevel, tc.wantFormat)
			}
		})
	}
}

// --profiling and --contention-profiling replace the file's fields.
func TestProfilingFlags(t *testing.T) {
	o, err := parse(t, "run", "--profiling=false")
	if err != nil {
		t.Fatal(err)
	}
	c, err := o.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.EnableProfiling || !c.EnableContentionProfiling {
		t.Errorf("enableProfiling %v enableContentionProfiling %v, want false true", c.EnableProfiling, c.EnableContentionProfiling)
	}
}

// What client-go logs through klog arrives in zap, structured, at the
// matching level.
func TestKlogSink(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	l := newKlogLogger(zap.New(core))

	l.Info("successfully acquired lease", "lock", "kube-system/yardmaster")
	l.V(4).Info("renewed", "lock", "x") // debug: below the level
	l.WithName("leaderelection").WithValues("identity", "a").Error(errors.New("boom"), "failed to renew lease", 7, "odd", "last")

	type entry struct {
		Level   zapcore.Level
		Logger  string
		Message string
		Fields  map[string]any
	}
	var got []entry
	for _, e := range logs.All() {
		got = append(got, entry{e.Level, e.LoggerName, e.Message, e.ContextMap()})
	}
	want := []entry{
		{zapcore.InfoLevel, "client-go", "successfully acquired lease", map[string]any{"lock": "kube-system/yardmaster"}},
		{zapcore.ErrorLevel, "client-go.leaderelection", "failed to renew lease", map[string]any{
			// 7 is not a key: kept as a value, and "odd" starts the next pair.
			"identity": "a", "!BADKEY": int64(7), "odd": "last", "error": "boom",
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
