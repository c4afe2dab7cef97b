package controlplane

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrBinaryNotFound is wrapped by Start's error when etcd, kube-apiserver,
// (with Options.Controllers) kube-controller-manager or (with
// Options.KWOK) kwok cannot be found, so tests can tell "not built" from
// "broken".
var ErrBinaryNotFound = errors.New("control plane binary not found")

// BinDirEnv names the environment variable that overrides the default BinDir.
const BinDirEnv = "YARDMASTER_BIN_DIR"

const modulePath = "github.com/yardmaster-io/yardmaster"

// etcdNames are tried in order: the Makefile builds bin/etcd, while
// `go build go.etcd.io/etcd/server/v3` names the binary after its package.
var etcdNames = []string{"etcd", "server"}

// binaryPaths are the resolved paths of the components Start runs;
// controllerManager is empty when Options.Controllers is, kwok when
// Options.KWOK is false.
type binaryPaths struct {
	etcd, apiserver, controllerManager, kwok string
}

// versioned names the binary of a Kubernetes component of
// Options.KubeVersion in the bin directory: kube-apiserver-1.35 for "1.35",
// kube-apiserver itself for "" (the version the module is built for).
func (o Options) versioned(name string) string {
	if o.KubeVersion == "" {
		return name
	}
	return name + "-" + o.KubeVersion
}

// validateKubeVersion rejects a KubeVersion that could not be part of a
// file name in the bin directory.
func validateKubeVersion(v string) error {
	if strings.ContainsAny(v, "/\\ \t\r\n") || strings.HasPrefix(v, ".") {
		return fmt.Errorf("kube version %q: want a version such as \"1.35\"", v)
	}
	return nil
}

// binaries resolves the paths of etcd, kube-apiserver and, when asked
// for, kube-controller-manager and kwok; kube-apiserver's and
// kube-controller-manager's those of Options.KubeVersion.
func (o Options) binaries() (binaryPaths, error) {
	if err := validateKubeVersion(o.KubeVersion); err != nil {
		return binaryPaths{}, err
	}
	b := binaryPaths{etcd: o.EtcdPath, apiserver: o.APIServerPath}
	wantCM := len(o.Controllers) > 0
	if wantCM {
		b.controllerManager = o.ControllerManagerPath
	}
	if o.KWOK {
		b.kwok = o.KWOKPath
	}
	if b.etcd == "" || b.apiserver == "" || (wantCM && b.controllerManager == "") || (o.KWOK && b.kwok == "") {
		dir, err := o.binDir()
		if err != nil {
			return binaryPaths{}, err
		}
		if b.etcd == "" {
			for _, name := range etcdNames {
				if p := filepath.Join(dir, name); isExecutable(p) {
					b.etcd = p
					break
				}
			}
			if b.etcd == "" {
				return binaryPaths{}, fmt.Errorf("%w: none of %q in %q", ErrBinaryNotFound, etcdNames, dir)
			}
		}
		if b.apiserver == "" {
			b.apiserver = filepath.Join(dir, o.versioned("kube-apiserver"))
		}
		if wantCM && b.controllerManager == "" {
			b.controllerManager = filepath.Join(dir, o.versioned("kube-controller-manager"))
		}
		if o.KWOK && b.kwok == "" {
			b.kwok = filepath.Join(dir, "kwok")
		}
	}
	for _, p := range []string{b.etcd, b.apiserver, b.controllerManager, b.kwok} {
		if p != "" && !isExecutable(p) {
			return binaryPaths{}, fmt.Errorf("%w: %q", ErrBinaryNotFound, p)
		}
	}
	return b, nil
}

func (o Options) binDir() (string, error) {
	if o.BinDir != "" {
		return o.BinDir, nil
	}
	if d := os.Getenv(BinDirEnv); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding bin dir: %w", err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin"), nil
}

// moduleRoot walks up from dir to the directory whose go.mod declares
// modulePath. Other go.mod files on the way (hack/tools) are passed over.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		if declaresModule(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%w: no go.mod of module %q above %q; set %s or Options.BinDir", ErrBinaryNotFound, modulePath, dir, BinDirEnv)
		}
		d = parent
	}
}

func declaresModule(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == modulePath
		}
	}
	return false
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// BinaryPath returns the path of a binary the Makefile builds into the bin
// directory (kube-scheduler, say), resolved as Start resolves etcd's.
func BinaryPath(name string) (string, error) {
	dir, err := Options{}.binDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if !isExecutable(p) {
		return "", fmt.Errorf("%w: %q", ErrBinaryNotFound, p)
	}
	return p, nil
}
