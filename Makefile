# yardmaster — build, test and run.
#
# `make test` needs nothing but Go: it builds the local control plane
# (etcd, kube-apiserver, kube-controller-manager, KWOK's kwok for simulated
# nodes; kube-scheduler for the comparisons; kube-apiserver and
# kube-controller-manager of the older releases yardmaster supports) from
# their Go modules into bin/ on first use and reuses them afterwards.

SHELL := /bin/bash
BIN   := $(CURDIR)/bin
GO    ?= go
PKGS  := ./...

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/yardmaster-io/yardmaster/internal/version.Version=$(VERSION)
STATICCHECK_VERSION := v0.8.2
IMAGE ?= yardmaster:dev
# make image-tarball's output, and what its labels say.
IMAGE_TARBALL ?= _output/yardmaster-image.tar
REVISION := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
CREATED  := $(shell git log -1 --format=%cI 2>/dev/null)

# Control-plane binaries: KUBE_BINARIES built from hack/tools (k8s.io/kubernetes
# v1.37.2 and etcd v3.7.0 as Go modules), kwok from hack/tools/kwok
# (sigs.k8s.io/kwok v0.8.0, a module of its own: it needs other versions of
# shared dependencies than k8s.io/kubernetes pins).
KUBE_BINARIES := $(BIN)/etcd $(BIN)/kube-apiserver $(BIN)/kube-controller-manager $(BIN)/kube-scheduler
CONTROL_PLANE := $(KUBE_BINARIES) $(BIN)/kwok

# The older API servers yardmaster is tested against (test/e2e/compat_test.go):
# kube-apiserver and kube-controller-manager of each minor version, built from
# hack/tools/kube-<minor> into bin/ under versioned names; etcd and kwok are
# the ones above. controlplane.Options.KubeVersion picks them.
COMPAT_VERSIONS := 1.35 1.36
COMPAT_BINARIES := $(foreach v,$(COMPAT_VERSIONS),$(BIN)/kube-apiserver-$(v) $(BIN)/kube-controller-manager-$(v))

export YARDMASTER_BIN_DIR := $(BIN)

.PHONY: all build test unit e2e lint vet fmt bench demo image image-tarball image-test helm-test helm-docs deploy control-plane compat-binaries prometheus clean soak

all: build

build: ## Build bin/yardmaster.
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/yardmaster ./cmd/yardmaster

control-plane: $(CONTROL_PLANE) ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok into bin/.

$(KUBE_BINARIES) &: hack/tools/go.mod hack/tools/go.sum
	@mkdir -p $(BIN)
	cd hack/tools && $(GO) build -o $(BIN)/ k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
	cd hack/tools && $(GO) build -o $(BIN)/etcd go.etcd.io/etcd/server/v3
	@touch $(KUBE_BINARIES)

compat-binaries: $(COMPAT_BINARIES) ## Build kube-apiserver and kube-controller-manager of each of COMPAT_VERSIONS into bin/ (kube-apiserver-1.35, ...).

# A pattern rule with two targets is one recipe that makes both. Each binary
# is built on its own: one `go build -o bin/` of both packages would name
# them kube-apiserver and kube-controller-manager and overwrite the current
# ones; the second build reuses the first one's compiled packages. The
# version k8s.io/kubernetes is required at is stamped in, as its release
# build does, so the server reports it (/version, kubectl version) instead
# of v0.0.0-master; features follow the minor version either way.
KUBE_VERSION_PKG := k8s.io/component-base/version
$(BIN)/kube-apiserver-% $(BIN)/kube-controller-manager-%: hack/tools/kube-%/go.mod hack/tools/kube-%/go.sum
	@mkdir -p $(BIN)
	cd hack/tools/kube-$* && v=$$($(GO) list -m -f '{{.Version}}' k8s.io/kubernetes) && \
	for c in kube-apiserver kube-controller-manager; do \
	  $(GO) build -ldflags "-X $(KUBE_VERSION_PKG).gitVersion=$$v -X $(KUBE_VERSION_PKG).gitMajor=$(word 1,$(subst ., ,$*)) -X $(KUBE_VERSION_PKG).gitMinor=$(word 2,$(subst ., ,$*)) -X $(KUBE_VERSION_PKG).gitTreeState=clean" \
	    -o $(BIN)/$$c-$* k8s.io/kubernetes/cmd/$$c || exit 1; \
	done
	@touch $(BIN)/kube-apiserver-$* $(BIN)/kube-controller-manager-$*

$(BIN)/kwok: hack/tools/kwok/go.mod hack/tools/kwok/go.sum
	@mkdir -p $(BIN)
	cd hack/tools/kwok && $(GO) build -o $(BIN)/kwok sigs.k8s.io/kwok/cmd/kwok
	@touch $@

$(BIN)/staticcheck:
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# hack/image and hack/helm are modules of their own (go-containerregistry,
# and Helm with its newer k8s.io modules, stay out of yardmaster's), and so
# is $(EXAMPLE), an outside team's module that builds yardmaster with its own
# plugin (docs/plugins.md); ./... does not reach them: they are vetted and
# linted here, and the example's tests run in unit and test.
EXAMPLE := examples/out-of-tree

vet:
	$(GO) vet $(PKGS)
	cd hack/image && $(GO) vet ./...
	cd hack/helm && $(GO) vet ./...
	cd $(EXAMPLE) && $(GO) vet ./...

lint: fmt vet $(BIN)/staticcheck ## gofmt, go vet and staticcheck.
	$(BIN)/staticcheck $(PKGS)
	cd hack/image && $(BIN)/staticcheck ./...
	cd hack/helm && $(BIN)/staticcheck ./...
	cd $(EXAMPLE) && $(BIN)/staticcheck ./...

unit: ## Unit tests with the race detector (no control plane).
	$(GO) test -race -count=1 $$($(GO) list $(PKGS) | grep -v /test/e2e)
	cd $(EXAMPLE) && $(GO) test -race -count=1 ./...

e2e: $(CONTROL_PLANE) $(COMPAT_BINARIES) prometheus ## End-to-end tests against a local control plane.
	$(GO) test -race -count=1 -timeout 30m ./test/e2e/...

prometheus: ## Install Prometheus (Debian package) for the bandwidth e2e tests, if missing.
	bash hack/install-prometheus.sh

test: lint $(CONTROL_PLANE) $(COMPAT_BINARIES) prometheus ## Everything CI runs: lint, unit and e2e tests with -race, a short fuzz run, the image tarball, the Helm chart, the out-of-tree example.
	$(GO) test -race -count=1 -timeout 40m $(PKGS)
	@# The example's own tests; test/e2e (above) builds its binary and
	@# schedules pods with it (TestOutOfTree).
	cd $(EXAMPLE) && $(GO) test -race -count=1 ./...
	$(MAKE) image-test
	$(MAKE) helm-test
	@# Allocation counts are exact only without the race detector.
	$(GO) test -count=1 -run 'Alloc|NoAlloc|ReuseArrays' ./framework/... ./predicates/... ./priorities/... ./metrics/
	@# A count, not a duration: with -fuzztime 15s, Go 1.26's fuzz coordinator
	@# can fail the run with "context deadline exceeded" and no failing input
	@# when the deadline meets a busy worker (go.dev/issue/75804).
	$(GO) test -run '^$$' -fuzz FuzzLoad -fuzztime 60000x ./config/

# Flags for hack/bench, the side-by-side harness. Empty means its quick
# default (1,000 nodes; basic and spread with 2,000 pods, and the gangs of
# scheduler_perf's GangScheduling: 1,000 PodGroups of 3 pods and 10 of
# 1,000, on an API server that serves PodGroups, kube-scheduler with
# --feature-gates=GenericWorkload=true; some 15 minutes on 2 cores, 5 of
# them kube-scheduler's largegangs);
# docs/performance.md gives the full matrix, e.g.
#   make bench-compare BENCH_FLAGS='-nodes 1000,5000 -pods 5000 -workloads basic,spread,antiaffinity,mixed -runs 3'
# and the volume workload (WaitForFirstConsumer claims on local volumes,
# with kube-controller-manager's PV binder; kube-scheduler takes about ten
# minutes per 1,000-pod drain there):
#   make bench-compare BENCH_FLAGS='-nodes 1000 -workloads volumes -stream-count 0 -runs 2'
# and the DRA workload (a device of 8 per node claimed through a
# ResourceClaimTemplate, with kube-controller-manager's ResourceClaim
# controller; a few minutes):
#   make bench-compare BENCH_FLAGS='-nodes 1000 -workloads dra -stream-count 0 -runs 3'
# and the shapes of kube-scheduler's scheduler_perf: Unschedulable (20,000
# pods that fit nowhere queued before 5,000 that fit) and
# SchedulingWithMixedChurn (10,000 pods while nodes, pods and Services come
# and go), PreemptionBasic (full nodes, higher-priority pods), DaemonSet
# pods pinned by node affinity to each of 15,000 nodes, and the scheduler's
# idle CPU over 20,000 unschedulable pods while KWOK completes 50 pods/s:
#   make bench-compare BENCH_FLAGS='-nodes 5000 -workloads unschedulable,mixedchurn -stream-count 0 -stall 120s'
#   make bench-compare BENCH_FLAGS='-nodes 1000 -workloads preemption -stream-count 0'
#   make bench-compare BENCH_FLAGS='-nodes 15000 -workloads daemonset -stream-count 0'
#   make bench-compare BENCH_FLAGS='-nodes 5000 -workloads idle'
# and the gangs alone, at the issue's size:
#   make bench-compare BENCH_FLAGS='-nodes 5000 -workloads smallgangs,largegangs -stream-count 0'
BENCH_FLAGS ?=

bench: bench-go bench-compare ## Go benchmarks, then yardmaster against kube-scheduler side by side.

bench-go: ## Go benchmarks of the hot paths.
	$(GO) test -run '^$$' -bench . -benchmem $$($(GO) list $(PKGS) | grep -v /test/e2e)

bench-compare: build $(CONTROL_PLANE) ## yardmaster, kube-scheduler and the raw Binding ceiling on one local API server (hack/bench).
	YARDMASTER_BINARY=$(BIN)/yardmaster $(GO) run ./hack/bench $(BENCH_FLAGS)

soak: build $(CONTROL_PLANE) ## 30 minutes of churn on 500 nodes: no leak, no overcommit, every pod that fits bound (SOAK_FLAGS; not part of make test).
	$(GO) run ./hack/soak -binary $(BIN)/yardmaster $(SOAK_FLAGS)

image: ## Build the container image (needs a Docker engine).
	docker build --build-arg VERSION=$(VERSION) -t $(IMAGE) .

image-tarball: build ## Build the image without Docker (hack/image, go-containerregistry) into $(IMAGE_TARBALL), for docker load -i.
	cd hack/image && $(GO) run . -binary $(BIN)/yardmaster -version $(VERSION) -revision $(REVISION) \
	  $(if $(CREATED),-created $(CREATED)) -tag $(IMAGE) -out $(CURDIR)/$(IMAGE_TARBALL)

# Without -race: the test is one goroutine gzipping and hashing the binary,
# which the race detector slows sevenfold (4 s become 28 s) for nothing.
image-test: image-tarball ## Check the tarball image-tarball wrote: config, files, and its binary running.
	cd hack/image && YARDMASTER_IMAGE_TARBALL=$(CURDIR)/$(IMAGE_TARBALL) $(GO) test -count=1 ./...

# Without -race, as image-test: the tests render templates in one goroutine,
# and -race would compile Helm and its dependencies a second time.
helm-test: build ## helm lint and helm template of deploy/helm/yardmaster through Helm's Go module (hack/helm); the default values must make deploy/base.
	cd hack/helm && YARDMASTER_BINARY=$(BIN)/yardmaster $(GO) test -count=1 ./...

helm-docs: ## Write the values table of deploy/helm/yardmaster/README.md from its values.yaml (helm-test fails when it is out of date).
	cd hack/helm && $(GO) run ./cmd/chart-readme

deploy: ## Apply deploy/ to the cluster kubectl points at.
	kubectl apply -k deploy/

clean:
	rm -rf $(BIN)

# The demo installs Prometheus as make test does, for its bandwidth part; where
# that cannot be done (no apt-get, not root) it says why and runs without it.
demo: build $(CONTROL_PLANE) ## Show yardmaster scheduling on a local control plane (Prometheus installed for bandwidth scoring); exits by itself.
	@bash hack/install-prometheus.sh || echo "demo: no Prometheus, so the bandwidth part will be skipped (see the message above)" >&2
	YARDMASTER_BINARY=$(BIN)/yardmaster $(GO) run ./hack/demo
