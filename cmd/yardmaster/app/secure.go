package app

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/spf13/pflag"
	genericapiserver "k8s.io/apiserver/pkg/server"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"

	"github.com/yardmaster-io/yardmaster/internal/server"
)

// DefaultSecurePort is --secure-port's default, kube-scheduler's.
const DefaultSecurePort = 10259

// healthPaths stay open to requests without credentials, whatever
// --authorization-always-allow-paths says: the kubelet probes them without
// any.
var healthPaths = []string{"/healthz", "/livez", "/readyz"}

// SecureServing are the settings of the secure endpoint, kube-scheduler's
// secure port: k8s.io/apiserver's options, hence kube-scheduler's flags
// (--secure-port, --bind-address, --tls-*, --cert-dir, --authentication-*,
// --authorization-*, --client-ca-file, --requestheader-*) with its
// defaults, and its checks (TokenReview, client certificates from the
// extension-apiserver-authentication ConfigMap, SubjectAccessReview).
type SecureServing struct {
	Serving        *apiserveroptions.SecureServingOptions
	Authentication *apiserveroptions.DelegatingAuthenticationOptions
	Authorization  *apiserveroptions.DelegatingAuthorizationOptions
}

// NewSecureServing returns kube-scheduler's defaults: port 10259 on every
// interface, a self-signed certificate made in memory, the
// authentication and authorization kubeconfigs optional (in a cluster the
// service account's credentials), a failed lookup of the authentication
// ConfigMap tolerated, /healthz, /livez and /readyz always allowed.
func NewSecureServing() *SecureServing {
	s := &SecureServing{
		Serving:        apiserveroptions.NewSecureServingOptions(),
		Authentication: apiserveroptions.NewDelegatingAuthenticationOptions(),
		Authorization:  apiserveroptions.NewDelegatingAuthorizationOptions(),
	}
	s.Serving.BindPort = DefaultSecurePort
	// A certificate directory left empty keeps the generated certificate in
	// memory: the root file system is read-only in deploy/.
	s.Serving.ServerCert.CertDirectory = ""
	s.Serving.ServerCert.PairName = "yardmaster"
	s.Authentication.TolerateInClusterLookupFailure = true
	s.Authentication.RemoteKubeConfigFileOptional = true
	s.Authorization.RemoteKubeConfigFileOptional = true
	return s
}

// AddFlags adds kube-scheduler's secure serving, authentication and
// authorization flags to fs.
func (s *SecureServing) AddFlags(fs *pflag.FlagSet) {
	s.Serving.AddFlags(fs)
	s.Authentication.AddFlags(fs)
	s.Authorization.AddFlags(fs)
	// What differs from kube-scheduler.
	fs.Lookup("secure-port").Usage = "The port on which to serve HTTPS with authentication and authorization " +
		"(/healthz, /livez, /readyz, /metrics, /debug/pprof). 0 turns HTTPS off, as in kube-scheduler."
	fs.Lookup("authentication-kubeconfig").Usage += " yardmaster uses --kubeconfig (clientConnection.kubeconfig) when this is empty and that is set."
	fs.Lookup("authorization-kubeconfig").Usage += " yardmaster uses --kubeconfig (clientConnection.kubeconfig) when this is empty and that is set."
}

// apply listens and builds the secure endpoint's serving information,
// authenticator and authorizer. An empty authentication or authorization
// kubeconfig falls back to kubeconfig, the daemon's own (when it has a
// file), before k8s.io/apiserver's fallback, the in-cluster config. s is
// not changed. Once apply returns without error, the listener is open.
func (s *SecureServing) apply(kubeconfig string) (_ server.SecureOptions, err error) {
	if errs := slices.Concat(s.Serving.Validate(), s.Authentication.Validate(), s.Authorization.Validate()); len(errs) > 0 {
		return server.SecureOptions{}, errors.Join(errs...)
	}
	serving, authn, authz := *s.Serving, *s.Authentication, *s.Authorization
	if authn.RemoteKubeConfigFile == "" {
		authn.RemoteKubeConfigFile = kubeconfig
	}
	if authz.RemoteKubeConfigFile == "" {
		authz.RemoteKubeConfigFile = kubeconfig
	}
	if serving.Listener == nil && serving.BindPort == 0 {
		// k8s.io/apiserver reads port 0 as "do not serve", and so does
		// the command line (--secure-port=0 leaves Options.Secure nil);
		// a caller of the Go API that sets port 0 gets any free port, so
		// that tests and several replicas on one host run side by side.
		addr := net.JoinHostPort(bindHost(serving.BindAddress), strconv.Itoa(0))
		if serving.Listener, _, err = apiserveroptions.CreateListener(serving.BindNetwork, addr, net.ListenConfig{}); err != nil {
			return server.SecureOptions{}, fmt.Errorf("secure serving: %w", err)
		}
	}
	// As kube-scheduler: a certificate for localhost and 127.0.0.1 (and
	// the bind address) unless --tls-cert-file names one.
	if err := serving.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.IPv4(127, 0, 0, 1)}); err != nil {
		closeListener(serving.Listener)
		return server.SecureOptions{}, fmt.Errorf("self-signed serving certificate: %w", err)
	}
	var info *genericapiserver.SecureServingInfo
	if err := serving.ApplyTo(&info); err != nil {
		closeListener(serving.Listener)
		return server.SecureOptions{}, fmt.Errorf("secure serving: %w", err)
	}
	defer func() {
		if err != nil {
			closeListener(info.Listener)
		}
	}()
	var authnInfo genericapiserver.AuthenticationInfo
	if err := authn.ApplyTo(&authnInfo, info, nil); err != nil {
		return server.SecureOptions{}, fmt.Errorf("delegated authentication: %w", err)
	}
	var authzInfo genericapiserver.AuthorizationInfo
	if err := authz.ApplyTo(&authzInfo); err != nil {
		return server.SecureOptions{}, fmt.Errorf("delegated authorization: %w", err)
	}
	return server.SecureOptions{
		Serving:        info,
		Authenticator:  authnInfo.Authenticator,
		Authorizer:     authzInfo.Authorizer,
		AnonymousPaths: slices.Concat(authz.AlwaysAllowPaths, healthPaths),
	}, nil
}

// bindHost is the host part of a listen address for ip; nil (a blank
// --bind-address) is every interface.
func bindHost(ip net.IP) string {
	if ip == nil {
		return ""
	}
	return ip.String()
}

func closeListener(ln net.Listener) {
	if ln != nil {
		_ = ln.Close()
	}
}
