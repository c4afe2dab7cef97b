// Command image builds yardmaster's container image without a container
// engine, with go-containerregistry, and writes it as a tarball that
// `docker load` (and `crane push`, `podman load`, kind's `load image-archive`)
// takes:
//
//	go run . -binary ../../bin/yardmaster -version v0.1.0 -out ../../_output/yardmaster-image.tar
//
// `make image-tarball` runs it on the binary `make build` makes.
//
// The image is what the Dockerfile's is, built from nothing instead of on
// distroless/static (no registry is needed, and none may be reachable): one
// layer with the static binary at /usr/local/bin/yardmaster, the symlink
// /usr/local/bin/kube-scheduler to it (a manifest written for
// kube-scheduler calls the binary by that name, as
// `/usr/local/bin/kube-scheduler` or, through PATH, `kube-scheduler`), /etc/passwd
// and /etc/group naming root and nonroot (65532), a home and /tmp, and the
// build host's CA bundle when it has one (for a Prometheus over HTTPS). No
// shell, no libc, no package manager. It exposes the secure port, 10259.
// Its user is root, as kube-scheduler's image's is: kubeadm's static pod
// reads /etc/kubernetes/scheduler.conf, which kubeadm writes with mode
// 0600 for root, and sets no user. deploy/ and the Helm chart run it as
// nonroot (65532) through their securityContext.
//
// The layer is reproducible: every file has the modification time given by
// -created (the commit's time in `make image-tarball`), so the same binary
// and flags give the same image digest.
//
// This is a module of its own so that yardmaster's module does not carry
// go-containerregistry and its dependencies.
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed contract; deploy/ and the README rely on it.
const (
	// Entrypoint is where the binary is, and the image's entrypoint.
	Entrypoint = "/usr/local/bin/yardmaster"
	// KubeSchedulerLink is a symlink to Entrypoint: the name by which
	// kube-scheduler's manifests (the Kubernetes documentation's second
	// scheduler, kubeadm's static pod) run the binary, so that they run
	// yardmaster with only the image changed. Run under this name the
	// binary is the scheduler's root command, as under its own
	// (test/e2e TestKubeSchedulerManifests runs both manifests).
	KubeSchedulerLink = "/usr/local/bin/kube-scheduler"
	// Path is the image's PATH: `command: [kube-scheduler]` resolves
	// through it, as in kube-scheduler's image.
	Path = "/usr/local/bin"
	// User is the image's user: root, as in kube-scheduler's image, so
	// that kube-scheduler's manifests, which set no user, read what
	// kube-scheduler reads (kubeadm's scheduler.conf is 0600 root).
	User = "0:0"
	// NonrootUID is distroless's nonroot, the owner of its home, which
	// deploy/ and the Helm chart run the image as.
	NonrootUID = 65532
	// SecurePort is --secure-port's default: health, readiness and
	// metrics over HTTPS.
	SecurePort = "10259/tcp"
	// Source is the org.opencontainers.image.source label.
	Source = "https://github.com/yardmaster-io/yardmaster"
	// caBundle is where Go's crypto/x509 looks first on Linux, and where
	// Debian's ca-certificates puts the bundle.
	caBundle = "/etc/ssl/certs/ca-certificates.crt"
)

// OCI annotation keys, used as labels.
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelSource   = "org.opencontainers.image.source"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
)

// Options are what Build needs.
type Options struct {
	// Binary is the yardmaster binary; it must be statically linked.
	Binary string
	// CACerts is a PEM bundle copied to /etc/ssl/certs; empty leaves it out.
	CACerts string
	// Version and Revision are the version and the commit, for the labels.
	Version, Revision string
	// Created is the image's creation time and every file's modification
	// time.
	Created time.Time
}

// Build returns the image.
func Build(o Options) (v1.Image, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, err
	}
	arch, err := staticArch(o.Binary)
	if err != nil {
		return nil, err
	}
	var certs []byte
	if o.CACerts != "" {
		if certs, err = os.ReadFile(o.CACerts); err != nil {
			return nil, err
		}
	}
	layerTar, err := rootfs(bin, certs, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	created := v1.Time{Time: o.Created}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "hack/image: " + Entrypoint + ", " + KubeSchedulerLink + ", /etc/passwd, /etc/group, CA certificates", Comment: "built with go-containerregistry"},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = created
	cf.Author = Source
	cf.Config = v1.Config{
		User:         User,
		Entrypoint:   []string{Entrypoint},
		Cmd:          []string{"run"},
		Env:          []string{"PATH=" + Path, "HOME=/home/nonroot"},
		WorkingDir:   "/home/nonroot",
		ExposedPorts: map[string]struct{}{SecurePort: {}},
		Labels: map[string]string{
			LabelTitle:    "yardmaster",
			LabelVersion:  o.Version,
			LabelRevision: o.Revision,
			LabelSource:   Source,
			LabelCreated:  o.Created.UTC().Format(time.RFC3339),
		},
	}
	return mutate.ConfigFile(img, cf)
}

// staticArch returns the GOARCH of a statically linked Linux ELF binary,
// and fails for anything else: the image has no dynamic loader and no libc.
func staticArch(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%q is not a Linux binary: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%q is dynamically linked; build it with CGO_ENABLED=0", path)
		}
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_PPC64:
		return "ppc64le", nil
	case elf.EM_S390:
		return "s390x", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	}
	return "", fmt.Errorf("%q: unsupported machine %s", path, f.Machine)
}

// passwd and group name root and nonroot as distroless does, so that tools
// (and Go's os/user) resolve 65532 to a name with a home.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group  = "root:x:0:\nnonroot:x:65532:\n"
)

// rootfs returns the layer: an uncompressed tar of the image's files, in a
// fixed order with fixed times.
func rootfs(bin, certs []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: uid, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	symlink := func(name, target string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: mtime, Format: tar.FormatPAX})
	}
	steps := []func() error{
		func() error { return dir("etc", 0o755, 0) },
		func() error { return file("etc/passwd", 0o644, []byte(passwd)) },
		func() error { return file("etc/group", 0o644, []byte(group)) },
		func() error { return dir("home", 0o755, 0) },
		func() error { return dir("home/nonroot", 0o700, NonrootUID) },
		func() error { return dir("root", 0o700, 0) },
		// Sticky and world-writable, as on any Linux system.
		func() error { return dir("tmp", 0o1777, 0) },
		func() error { return dir("usr", 0o755, 0) },
		func() error { return dir("usr/local", 0o755, 0) },
		func() error { return dir("usr/local/bin", 0o755, 0) },
		func() error { return file(Entrypoint[1:], 0o755, bin) },
		// Relative, so that it resolves wherever the file system is
		// mounted (a chroot, an extracted layer).
		func() error { return symlink(KubeSchedulerLink[1:], path.Base(Entrypoint)) },
	}
	if certs != nil {
		steps = append(steps,
			func() error { return dir("etc/ssl", 0o755, 0) },
			func() error { return dir("etc/ssl/certs", 0o755, 0) },
			func() error { return file(caBundle[1:], 0o644, certs) },
		)
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes img as a tarball tagged tag, through a temporary file so
// that a failed build leaves no partial tarball behind.
func Write(img v1.Image, tag, out string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".image-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tarball.Write(ref, img, tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %q: %w", out, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp's 0600 would keep the tarball from other users (a CI
	// step under another account loading it, say).
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

func main() {
	var o Options
	var tag, out, created string
	flag.StringVar(&o.Binary, "binary", "bin/yardmaster", "the statically linked yardmaster binary")
	flag.StringVar(&o.Version, "version", "dev", "the org.opencontainers.image.version label")
	flag.StringVar(&o.Revision, "revision", "", "the org.opencontainers.image.revision label: the commit")
	flag.StringVar(&created, "created", "", "creation time, RFC 3339; also every file's modification time (default: the Unix epoch, for reproducible layers)")
	flag.StringVar(&o.CACerts, "ca-certs", caBundle, "PEM CA bundle to include; empty, or a path that does not exist, leaves it out")
	flag.StringVar(&tag, "tag", "yardmaster:dev", "the image's name in the tarball (what docker load tags)")
	flag.StringVar(&out, "out", "_output/yardmaster-image.tar", "the tarball to write")
	flag.Parse()
	if err := run(o, created, tag, out); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(o Options, created, tag, out string) error {
	o.Created = time.Unix(0, 0).UTC()
	if created != "" {
		t, err := time.Parse(time.RFC3339, created)
		if err != nil {
			return fmt.Errorf("-created: %w", err)
		}
		o.Created = t.UTC()
	}
	if o.CACerts != "" {
		if _, err := os.Stat(o.CACerts); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "image: no CA bundle at %s; the image has none (a Prometheus over HTTPS then needs tlsCAFile)\n", o.CACerts)
			o.CACerts = ""
		}
	}
	img, err := Build(o)
	if err != nil {
		return err
	}
	if err := Write(img, tag, out); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	size := int64(0)
	if fi, err := os.Stat(out); err == nil {
		size = fi.Size()
	}
	fmt.Printf("wrote %s: %s, %s, %.1f MiB\n", out, tag, digest, float64(size)/(1<<20))
	return nil
}
