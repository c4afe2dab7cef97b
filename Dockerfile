# syntax=docker/dockerfile:1
#
# yardmaster's image: a static binary on distroless.
#
#   make image                       # docker build --build-arg VERSION=$(VERSION) -t yardmaster:$(VERSION) .
#   docker build --build-arg VERSION=v0.1.0 -t registry.example.com/yardmaster:v0.1.0 .
#
# deploy/ runs it as `yardmaster run --config /etc/yardmaster/config.yaml`;
# a manifest written for kube-scheduler runs it as kube-scheduler
# (/usr/local/bin/kube-scheduler, a symlink; distroless's PATH has
# /usr/local/bin), with only the image changed.

ARG GO_VERSION=1.26

# The build runs on the builder's own platform and cross-compiles (the
# binary is pure Go), so a multi-platform build never emulates the compiler.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
# Modules first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
ARG TARGETOS
ARG TARGETARCH
# CGO off: a static binary, which distroless/static needs (it has no libc).
# -trimpath: no build paths in the binary. -buildvcs=false: .git is not in
# the build context; the version comes from VERSION instead.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/yardmaster-io/yardmaster/internal/version.Version=${VERSION}" \
      -o /out/bin/yardmaster ./cmd/yardmaster
# kube-scheduler's manifests (the Kubernetes documentation's second
# scheduler, kubeadm's static pod) call the binary by kube-scheduler's name,
# as /usr/local/bin/kube-scheduler or, through PATH, kube-scheduler: a
# relative symlink, made here because the final image has no shell. COPY
# of a directory keeps the links inside it. hack/image builds the same.
RUN ln -s yardmaster /out/bin/kube-scheduler

# No shell, no package manager, CA certificates included (for a Prometheus
# over https). distroless's nonroot variant for its home and working
# directory (/home/nonroot), but the user is root, as in kube-scheduler's
# image: kubeadm's static pod sets no user and reads
# /etc/kubernetes/scheduler.conf, which kubeadm writes 0600 for root.
# deploy/ and the Helm chart run it as nonroot (65532) through their
# securityContext. hack/image builds the same.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.version=${VERSION} \
      org.opencontainers.image.licenses=Apache-2.0
COPY --from=build /out/bin/ /usr/local/bin/
USER 0:0
# The secure port (--secure-port): health, readiness and metrics over HTTPS.
EXPOSE 10259
ENTRYPOINT ["/usr/local/bin/yardmaster"]
CMD ["run"]
