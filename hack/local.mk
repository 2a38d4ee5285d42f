# Local cluster: binaries and the up/down/status targets. Included from the
# top-level Makefile (`include hack/local.mk`); paths are relative to the
# repository root.
#
#   make binaries      build every missing binary into $(LOCAL_BIN)
#   make kubectl       build kubectl into $(LOCAL_BIN) (not part of binaries)
#   make local-up      binaries, then start the cluster (no-op if it runs)
#   make local-status  show its components; exit status 3 if it is not usable
#   make local-down    stop it and remove $(LOCAL_DIR)
#   make local-restart local-down, then local-up (to run rebuilt binaries)
#
# Third-party binaries are file targets built only when missing: delete one (or
# run `make clean-local-bin`) after changing its version in go.mod or
# hack/tools/go.mod. This repository's own binaries are rebuilt on every run;
# Go's build cache makes that a link step when nothing changed.

GO ?= go
LOCAL_BIN ?= _output/bin
LOCAL_DIR ?= _output/local
LOCAL_NODES ?= 4
# auto (start vc-webhook-manager if it is built), on or off.
LOCAL_WEBHOOK ?= auto
# File in $(LOCAL_BIN) run as Volcano's controller manager;
# vc-controller-manager-stock runs Volcano's own (make stock-controller-manager).
LOCAL_CONTROLLER_MANAGER ?= vc-controller-manager
LOCAL_UP_FLAGS ?=

LOCAL_BIN_ABS := $(abspath $(LOCAL_BIN))

# $(call local_go_build,<output>,<package>[,<directory>]) builds one binary,
# printing "building NAME ... done (Ns)". A <directory> is another module
# (hack/tools, hack/coredns): it builds with SUBMODULE_GOFLAGS, not a line's
# -modfile. The go command's own errors appear
# between the two halves of that line. An identical rebuild leaves the file (and
# its time stamp) alone, so a running local cluster is not reported as stale.
define local_go_build
	@mkdir -p $(LOCAL_BIN_ABS)
	@printf 'building %s ... ' $(notdir $(1)); \
	start=$$(date +%s); \
	cd $(if $(3),$(3),.) && $(if $(3),GOFLAGS='$(SUBMODULE_GOFLAGS)' )$(GO) build -o $(abspath $(1)).new $(2) || { echo "FAILED"; exit 1; }; \
	if cmp -s $(abspath $(1)).new $(abspath $(1)); then rm -f $(abspath $(1)).new; echo "unchanged ($$(( $$(date +%s) - start ))s)"; \
	else mv -f $(abspath $(1)).new $(abspath $(1)); echo "done ($$(( $$(date +%s) - start ))s)"; fi
endef

LOCAL_THIRD_PARTY_BINARIES := \
	$(LOCAL_BIN)/etcd \
	$(LOCAL_BIN)/kube-apiserver \
	$(LOCAL_BIN)/kube-controller-manager \
	$(LOCAL_BIN)/vc-scheduler \
	$(LOCAL_BIN)/vcctl \
	$(LOCAL_BIN)/kwok \
	$(LOCAL_BIN)/helm \
	$(LOCAL_BIN)/kubelet \
	$(LOCAL_BIN)/coredns

# vc-webhook-manager joins once ./cmd/vc-webhook-manager exists.
LOCAL_OWN_BINARIES := $(LOCAL_BIN)/vc-controller-manager
ifneq ($(wildcard cmd/vc-webhook-manager/*.go),)
LOCAL_OWN_BINARIES += $(LOCAL_BIN)/vc-webhook-manager
endif

.PHONY: kubectl binaries local-up local-down local-status local-restart stock-controller-manager stock-webhook-manager clean-local-bin local-force

binaries: $(LOCAL_THIRD_PARTY_BINARIES) $(LOCAL_OWN_BINARIES) $(LOCAL_BIN)/local-cluster ## Build every binary of the local cluster that is missing into _output/bin.

# --- third-party binaries, pinned by go.mod (see hack/tools.go) ---
# Another line's Kubernetes control plane and kubelet (and etcd) are built as
# Kubernetes builds them: from the line's module file without Volcano's own
# replace pins of modules outside k8s.io (and volcano.sh/apis), which are for
# Volcano's binaries.
# Volcano v1.14.1 pins gRPC v1.64.0, older than the v1.72.1 Kubernetes 1.34.1
# requires: a kube-apiserver built with it never reaches etcd ("context deadline
# exceeded" at start). The module file is made from the line's
# (_output/<line>/cluster.mod, `go mod edit -dropreplace`); -mod=mod lets the
# go command add the few go.sum lines the unpinned versions need (checked
# against the checksum database, as any download is).
CLUSTER_BINARIES := etcd kube-apiserver kube-controller-manager kube-scheduler kubelet
ifneq ($(LINE),$(DEFAULT_LINE))
CLUSTER_MODFILE := $(CURDIR)/_output/$(LINE)/cluster.mod
$(addprefix $(LOCAL_BIN)/,$(CLUSTER_BINARIES)): GOFLAGS := $(BUILD_GOFLAGS) -modfile=$(CLUSTER_MODFILE) -mod=mod
# Order-only: like every third-party binary, built when missing (delete them
# after changing the line's versions); the go command may rewrite the file.
$(addprefix $(LOCAL_BIN)/,$(CLUSTER_BINARIES)): | $(CLUSTER_MODFILE)
$(CLUSTER_MODFILE): lines/$(LINE).mod lines/$(LINE).sum
	@mkdir -p $(dir $@)
	@cp lines/$(LINE).sum $(@:.mod=.sum)
	@cp lines/$(LINE).mod $@.tmp
	@drops=$$(awk '/^replace \($$/ {r = 1; next} r && /^\)/ {r = 0} \
		r && $$2 == "=>" && $$1 !~ /^k8s\.io\// && $$1 != "volcano.sh/apis" {printf " -dropreplace=%s", $$1}' lines/$(LINE).mod); \
	echo "$@: lines/$(LINE).mod,$$drops"; \
	GOFLAGS= $(GO) mod edit $$drops $@.tmp
	@mv -f $@.tmp $@
endif
$(LOCAL_BIN)/etcd:
	$(call local_go_build,$@,go.etcd.io/etcd/server/v3)
$(LOCAL_BIN)/kube-apiserver:
	$(call local_go_build,$@,-ldflags '$(KUBE_VERSION_LDFLAGS)' k8s.io/kubernetes/cmd/kube-apiserver)
$(LOCAL_BIN)/kube-controller-manager:
	$(call local_go_build,$@,-ldflags '$(KUBE_VERSION_LDFLAGS)' k8s.io/kubernetes/cmd/kube-controller-manager)
$(LOCAL_BIN)/vc-scheduler:
	$(call local_go_build,$@,volcano.sh/volcano/cmd/scheduler)
$(LOCAL_BIN)/vcctl:
	$(call local_go_build,$@,volcano.sh/volcano/cmd/cli)
# The control plane and the real node's kubelet report the version of the
# kubernetes module, as release builds do; without these flags they say
# v0.0.0-master.
# $(shell) does not see the exported GOFLAGS (GNU make < 4.4): passed by hand, so
# that another line's build reports that line's Kubernetes.
KUBE_VERSION = $(shell GOFLAGS='$(GOFLAGS)' $(GO) list -m -f '{{.Version}}' k8s.io/kubernetes)
KUBE_VERSION_WORDS = $(subst ., ,$(patsubst v%,%,$(KUBE_VERSION)))
KUBE_VERSION_LDFLAGS = -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(KUBE_VERSION_WORDS)) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(KUBE_VERSION_WORDS)) \
	-X k8s.io/component-base/version.gitTreeState=clean
# kubectl of the same Kubernetes release, for the docs' commands; not part of
# make binaries. Always the default line's go.mod (kubectl 1.35 serves 1.34 too).
kubectl: $(LOCAL_BIN)/kubectl ## Build kubectl (of go.mod's Kubernetes release) into _output/bin.
$(LOCAL_BIN)/kubectl: GOFLAGS := $(BUILD_GOFLAGS)
$(LOCAL_BIN)/kubectl:
	$(call local_go_build,$@,-ldflags '$(KUBE_VERSION_LDFLAGS)' k8s.io/kubernetes/cmd/kubectl)
# KUBE=<minor> (Makefile): the cluster's Kubernetes, etcd and kubectl of
# hack/kube/<version>.mod, a module of their own (hack/kube/update.sh writes
# it), into _output/kube-<version>/bin; everything else as without KUBE.
ifneq ($(KUBE),)
$(addprefix $(LOCAL_BIN)/,$(CLUSTER_BINARIES) kubectl): GOFLAGS := $(BUILD_GOFLAGS) -modfile=$(CURDIR)/$(KUBE_MODFILE)
endif
# Only in a cluster without Volcano (local-cluster up --no-volcano, make test-install).
$(LOCAL_BIN)/kube-scheduler:
	$(call local_go_build,$@,-ldflags '$(KUBE_VERSION_LDFLAGS)' k8s.io/kubernetes/cmd/kube-scheduler)
$(LOCAL_BIN)/kubelet:
	$(call local_go_build,$@,-ldflags '$(KUBE_VERSION_LDFLAGS)' k8s.io/kubernetes/cmd/kubelet)
# CoreDNS, the real node's cluster DNS: its own module (hack/coredns).
$(LOCAL_BIN)/coredns:
	$(call local_go_build,$@,.,hack/coredns)
# Volcano's unmodified controller manager, for comparisons with ours.
$(LOCAL_BIN)/vc-controller-manager-stock:
	$(call local_go_build,$@,volcano.sh/volcano/cmd/controller-manager)
stock-controller-manager: $(LOCAL_BIN)/vc-controller-manager-stock ## Build Volcano's own controller manager, for comparisons.
# Volcano's unmodified webhook manager, for make startup's stock runs.
$(LOCAL_BIN)/vc-webhook-manager-stock:
	$(call local_go_build,$@,volcano.sh/volcano/cmd/webhook-manager)
stock-webhook-manager: $(LOCAL_BIN)/vc-webhook-manager-stock ## Build Volcano's own webhook manager, for comparisons.

# --- KWOK and Helm pin Kubernetes libraries of their own (v0.30): separate module hack/tools ---
$(LOCAL_BIN)/kwok:
	$(call local_go_build,$@,sigs.k8s.io/kwok/cmd/kwok,hack/tools)
$(LOCAL_BIN)/helm:
	$(call local_go_build,$@,helm.sh/helm/v3/cmd/helm,hack/tools)

# --- this repository's binaries: always rebuilt ---
local-force:
# The managers' --version (Volcano's pkg/version) names this project's VERSION
# and the commit, as the images' do; "-dirty" when the work tree has changes.
MANAGER_GIT_SHA = $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
MANAGER_LDFLAGS = -X volcano.sh/volcano/pkg/version.Version=$(VERSION) -X volcano.sh/volcano/pkg/version.GitSHA=$(MANAGER_GIT_SHA)
$(LOCAL_BIN)/vc-controller-manager: local-force
	$(call local_go_build,$@,-ldflags '$(MANAGER_LDFLAGS)' ./cmd/vc-controller-manager)
$(LOCAL_BIN)/vc-webhook-manager: local-force
	$(call local_go_build,$@,-ldflags '$(MANAGER_LDFLAGS)' ./cmd/vc-webhook-manager)
$(LOCAL_BIN)/local-cluster: local-force
	$(call local_go_build,$@,./hack/local-cluster)
# The local cluster's image registry (hack/tools/registry): the install test
# pushes there and the real node pulls from it; for your own images,
# make _output/bin/registry local-up LOCAL_UP_FLAGS=--registry.
$(LOCAL_BIN)/registry: local-force
	$(call local_go_build,$@,./registry,hack/tools)

# --- the cluster ---
local-up: binaries node ## Start the local cluster (KWOK nodes and, where possible, the real node); no-op if it runs.
	$(LOCAL_BIN)/local-cluster up --dir $(LOCAL_DIR) --bin-dir $(LOCAL_BIN) --nodes $(LOCAL_NODES) \
		--webhook $(LOCAL_WEBHOOK) --controller-manager $(LOCAL_CONTROLLER_MANAGER) $(LOCAL_UP_FLAGS)

# down and status use the CLI as built, so they work while the main module does
# not compile; `go run` covers a fresh checkout.
LOCAL_CLI = $(if $(wildcard $(LOCAL_BIN)/local-cluster),$(LOCAL_BIN)/local-cluster,$(GO) run ./hack/local-cluster)

# The VM of make vm-test (hack/vm.mk) goes too: its root image is the largest
# file a local run leaves.
local-down: ## Stop the local cluster and undo what it changed on the host; remove make vm-test's VM files.
	$(LOCAL_CLI) down --dir $(LOCAL_DIR)
	$(if $(VM_DIR),rm -rf $(VM_DIR))

local-status: ## Show the local cluster's components; exit status 3 if it is not usable.
	@$(LOCAL_CLI) status --dir $(LOCAL_DIR)

# Stops the cluster before building, so no binary is replaced under a running process.
local-restart: local-down ## Stop, rebuild and start the local cluster.
	$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) local-up

clean-local-bin:
	rm -rf $(LOCAL_BIN)
