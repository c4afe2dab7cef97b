package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// tarballEnv names a tarball `make image-tarball` wrote, which the test then
// checks instead of building its own (`make test` sets it).
const tarballEnv = "YARDMASTER_IMAGE_TARBALL"

// The tarball holds one image whose config is the Dockerfile's (user,
// entrypoint, port, labels), whose files are the binary and the little it
// needs and no shell, and whose binary runs and reports the labelled
// version.
func TestImageTarball(t *testing.T) {
	path, tag := os.Getenv(tarballEnv), ""
	if path == "" {
		path, tag = filepath.Join(t.TempDir(), "image.tar"), "yardmaster:test"
		img, err := Build(Options{
			Binary:   buildYardmaster(t, "v0.0.0-test"),
			Version:  "v0.0.0-test",
			Revision: "0123456789abcdef0123456789abcdef01234567",
			Created:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(img, tag, path); err != nil {
			t.Fatal(err)
		}
	}

	opener := func() (io.ReadCloser, error) { return os.Open(path) }
	m, err := tarball.LoadManifest(opener)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(m) != 1 || len(m[0].RepoTags) != 1 {
		t.Fatalf("%s: manifest %+v, want one image with one tag", path, m)
	}
	if tag != "" && m[0].RepoTags[0] != tag {
		t.Errorf("tag %q, want %q", m[0].RepoTags[0], tag)
	}
	img, err := tarball.Image(opener, nil)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	version := cf.Config.Labels[LabelVersion]
	if version == "" || cf.Config.Labels[LabelRevision] == "" {
		t.Errorf("labels %v: want a version and a revision", cf.Config.Labels)
	}
	want := v1.Config{
		User:         "0:0",
		Entrypoint:   []string{"/usr/local/bin/yardmaster"},
		Cmd:          []string{"run"},
		Env:          []string{"PATH=/usr/local/bin", "HOME=/home/nonroot"},
		WorkingDir:   "/home/nonroot",
		ExposedPorts: map[string]struct{}{"10259/tcp": {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "yardmaster",
			"org.opencontainers.image.version":  version,
			"org.opencontainers.image.revision": cf.Config.Labels[LabelRevision],
			"org.opencontainers.image.source":   "https://github.com/yardmaster-io/yardmaster",
			"org.opencontainers.image.created":  cf.Created.UTC().Format(time.RFC3339),
		},
	}
	if diff := cmp.Diff(want, cf.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if cf.OS != "linux" || cf.Architecture == "" {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}

	files := extract(t, img)
	bin, ok := files["usr/local/bin/yardmaster"]
	if !ok || bin.hdr.Mode&0o111 == 0 {
		t.Fatalf("no executable /usr/local/bin/yardmaster in the image: %v", names(files))
	}
	// kube-scheduler's manifests call the binary by kube-scheduler's name,
	// absolute or through PATH: the link must lead to the binary from
	// where the image's PATH finds it.
	link, ok := files["usr/local/bin/kube-scheduler"]
	if !ok || link.hdr.Typeflag != tar.TypeSymlink {
		t.Fatalf("no symlink /usr/local/bin/kube-scheduler in the image: %v", names(files))
	}
	if got := filepath.Join("/usr/local/bin", link.hdr.Linkname); got != "/usr/local/bin/yardmaster" {
		t.Errorf("/usr/local/bin/kube-scheduler leads to %s, want /usr/local/bin/yardmaster", got)
	}
	if !slices.Contains(cf.Config.Env, "PATH=/usr/local/bin") {
		t.Errorf("env %v: kube-scheduler is not on the PATH", cf.Config.Env)
	}
	for _, shell := range []string{"bin/sh", "bin/bash", "bin/busybox", "usr/bin/sh"} {
		if _, ok := files[shell]; ok {
			t.Errorf("the image has a shell, /%s", shell)
		}
	}
	if !strings.Contains(string(files["etc/passwd"].data), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot (65532):\n%s", files["etc/passwd"].data)
	}
	if home := files["home/nonroot"]; home == nil || home.hdr.Uid != NonrootUID {
		t.Errorf("/home/nonroot missing or not owned by %d", NonrootUID)
	}

	// The binary runs from the image (it is static: no loader, no libc in
	// there) and is the version the labels say.
	exe := filepath.Join(t.TempDir(), "yardmaster")
	if err := os.WriteFile(exe, bin.data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("yardmaster version: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "yardmaster "+version) {
		t.Errorf("yardmaster version printed %q, want the label's %q", out, version)
	}
	// Called as kube-scheduler (argv[0], as the link gives it), it is the
	// scheduler's root command, which takes kube-scheduler's --version.
	ks := filepath.Join(filepath.Dir(exe), "kube-scheduler")
	if err := os.Symlink(link.hdr.Linkname, ks); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(ks, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("kube-scheduler --version: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "yardmaster "+version) {
		t.Errorf("kube-scheduler --version printed %q, want yardmaster's %q", out, version)
	}
}

// Build makes an OCI image (the tarball, docker save's format, keeps no
// manifest, so this is checked before writing), and the same binary and
// options give the same image, byte for byte.
func TestBuildReproducible(t *testing.T) {
	o := Options{Binary: buildYardmaster(t, "v0.0.0-test"), Version: "v0.0.0-test", Created: time.Unix(0, 0)}
	var digests []v1.Hash
	for range 2 {
		img, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		if mt, err := img.MediaType(); err != nil || mt != types.OCIManifestSchema1 {
			t.Errorf("manifest media type %s (%v), want %s", mt, err, types.OCIManifestSchema1)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds: %s and %s", digests[0], digests[1])
	}
}

// A binary that needs a dynamic loader would not start in the image, so
// Build refuses it.
func TestBuildRefusesDynamicBinary(t *testing.T) {
	for _, p := range []string{"/bin/ls", "/usr/bin/env"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if _, err := Build(Options{Binary: p}); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
			t.Errorf("Build(%s): %v, want a refusal of a dynamically linked binary", p, err)
		}
		return
	}
	t.Skip("no dynamically linked binary found")
}

// built caches the binary across the tests of one run.
var built = map[string]string{}

// buildYardmaster builds the daemon as `make build` does (static, version
// stamped) and returns its path.
func buildYardmaster(t *testing.T, version string) string {
	t.Helper()
	if p, ok := built[version]; ok {
		return p
	}
	dir, err := os.MkdirTemp("", "yardmaster-image-test-")
	if err != nil {
		t.Fatal(err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	out := filepath.Join(dir, "yardmaster")
	cmd := exec.Command("go", "build", "-trimpath",
		"-ldflags", "-s -w -X github.com/yardmaster-io/yardmaster/internal/version.Version="+version,
		"-o", out, "./cmd/yardmaster")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	built[version] = out
	return out
}

// cleanups run after all tests: the built binary outlives each one.
var cleanups []func()

func TestMain(m *testing.M) {
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	os.Exit(code)
}

type entry struct {
	hdr  *tar.Header
	data []byte
}

// extract returns the image's flattened filesystem.
func extract(t *testing.T, img v1.Image) map[string]*entry {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	files := map[string]*entry{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(strings.TrimPrefix(h.Name, "/"), "/")] = &entry{hdr: h, data: data}
	}
	return files
}

func names(files map[string]*entry) []string {
	var out []string
	for n := range files {
		out = append(out, n)
	}
	return out
}
