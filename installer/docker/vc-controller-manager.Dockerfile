# syntax=docker/dockerfile:1
#
# vc-controller-manager: Volcano v1.15.1's controller manager with this
# project's tensorflow, pytorch, mpi, mxnet, xgboost, dask, jax and paddle job
# plugins (cmd/vc-controller-manager).
# A drop-in replacement for docker.io/volcanosh/vc-controller-manager:v1.15.1.
#
# Build from the repository root (the build context must be the repository):
#
#   docker buildx build -f installer/docker/vc-controller-manager.Dockerfile \
#     -t <registry>/<path>/vc-controller-manager:<VERSION> .
#
# or `make image-vc-controller-manager` (hack/installer.mk); docs/install.md.
# vc-controller-manager.Dockerfile.dockerignore, next to this file, keeps
# _output/ and .git/ out of the context (BuildKit).

# Base images pinned by digest (multi-platform index digests), so that a
# rebuild uses the same bytes and a moved or hijacked tag changes nothing:
# golang:1.24 and gcr.io/distroless/static-debian12:nonroot as pinned by
# several public projects in 2026 (this repository's build host has no
# registry access, so they were not checked against the registries here).
# Check and update them with
#   crane digest golang:1.24
#   crane digest gcr.io/distroless/static-debian12:nonroot
# (or docker buildx imagetools inspect <image>), or override with
# --build-arg GO_IMAGE=...@sha256:... / BASE_IMAGE=...@sha256:... .
ARG GO_IMAGE=golang:1.24@sha256:10c131810f80a4802c49cab0961bbe18a16f4bb2fb99ef16deaa23e4246fc817
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab

# The builder runs on the build machine's platform and cross-compiles for the
# target platform (buildx --platform linux/amd64,linux/arm64).
FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS builder
# The golang images set GOTOOLCHAIN=local; go.mod needs Go 1.25, which auto
# fetches from the module proxy (checksummed): the release of go.mod's
# toolchain line (a current 1.25.x with its security fixes; without that line
# it would be go1.25.0).
ENV GOTOOLCHAIN=auto
ARG TARGETOS
ARG TARGETARCH
# Printed by --version (Volcano's version package). `make images-docker`
# passes the Makefile's VERSION (v1.15.1-fp.<n>), the tag of the image too.
ARG VERSION=unknown
ARG GIT_SHA=unknown
# The Volcano line (lines/README.md): empty for the default line, else e.g.
# "-modfile=lines/v1.14.1.mod -tags=volcano_line,volcano_v1.14.1" (make images
# LINE=... passes it).
ARG LINE_GOFLAGS=
WORKDIR /src
COPY . .
# go.mod's volcano.sh/apis (the default line's) is made from the module proxy.
RUN --mount=type=cache,target=/go/pkg/mod bash lines/volcano-apis.sh
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} GOFLAGS="-buildvcs=false ${LINE_GOFLAGS}" \
    go build -trimpath \
      -ldflags "-s -w -X volcano.sh/volcano/pkg/version.Version=${VERSION} -X volcano.sh/volcano/pkg/version.GitSHA=${GIT_SHA}" \
      -o /out/vc-controller-manager ./cmd/vc-controller-manager

FROM ${BASE_IMAGE}
ARG VERSION=unknown
ARG GIT_SHA=unknown
LABEL org.opencontainers.image.source="https://github.com/vcplugins/framework-plugins" \
      org.opencontainers.image.revision="${GIT_SHA}" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=builder /out/vc-controller-manager /vc-controller-manager
WORKDIR /
# nonroot (65532) as a number, so that runAsNonRoot can check it.
USER 65532:65532
ENTRYPOINT ["/vc-controller-manager"]
