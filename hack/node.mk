# The local cluster's real node: its container runtime, built from Go modules
# like the rest of the cluster, the few Debian packages it still needs
# (pinned), and its images. Included from the top-level Makefile.
#
#   make node          the packages, then (where the real node can run) the
#                      runtime's binaries and the images
#   make node-prereqs  install the packages below (root on Debian 12 with
#                      cgroup v1 or v2 and no container runtime of the host's
#                      own, and never replacing an installed package;
#                      elsewhere it says why and the cluster runs KWOK nodes only)

# The runtime, pinned as go.mod pins the other cluster binaries, each built
# with its own module's requirements (go install MODULE/cmd@VERSION), so
# containerd's dependency graph stays out of go.mod. Built when missing or
# when its version here changed (a stamp per module in $(NODE_BIN)).
CONTAINERD_VERSION  := v2.4.2
RUNC_VERSION        := v1.5.3
CNI_PLUGINS_VERSION := v1.10.0
NODE_BIN     := $(LOCAL_BIN)/node
NODE_CNI_BIN := $(NODE_BIN)/cni
# internal/localcluster's realNodeTools and realNodeCNIPlugins name these;
# the CNI plugins are those the node's CNI configuration uses (bridge,
# host-local) and loopback, which containerd runs for every pod's lo.
NODE_BINARIES := $(addprefix $(NODE_BIN)/,containerd containerd-shim-runc-v2 ctr runc) \
	$(addprefix $(NODE_CNI_BIN)/,bridge host-local loopback)

# Debian packages, and why each is still one:
#   libseccomp-dev  the headers and pkg-config file runc's seccomp build tag
#                   compiles against; without the tag runc refuses every
#                   container with a seccomp profile, and the install test's
#                   Volcano chart asks for RuntimeDefault. The runc built
#                   links libseccomp2, which every Debian has.
#   busybox-static  the busybox image (hack/tools/images copies /bin/busybox).
#   mmdebstrap      the training image's Debian root.
# cgo's gcc, libc6-dev and pkg-config come with the machine image.
NODE_PACKAGES := \
	libseccomp-dev=2.5.4-1+deb12u1 \
	busybox-static=1:1.35.0-4+deb12u1+b1 \
	mmdebstrap=1.3.5-7

.PHONY: node node-training node-prereqs node-binaries node-force
# node-prereqs writes "ready" here where the real node's packages are there
# (removes it elsewhere); the e2e suite then requires the real node.
NODE_PREREQS_STATE := $(CURDIR)/_output/node-prereqs

# The runtime and the images only where the real node can run; elsewhere the
# cluster runs KWOK nodes only and needs neither.
node: node-prereqs ## Everything the real node needs besides make binaries: packages, runtime binaries, images.
	@if [ -f $(NODE_PREREQS_STATE) ] && [ -x /bin/busybox ]; then $(MAKE) --no-print-directory node-binaries node-images; \
	else echo "real node: no runtime or images built (the real node is skipped here)"; fi

node-binaries: $(NODE_BINARIES) ## Build the real node's containerd, runc and CNI plugins into _output/bin/node.
	@:

# $(call node_go_install,<dir>,<CGO_ENABLED>,<names>,<go install arguments>)
# builds packages of one module at one version into <dir>, printing
# "building NAMES ... done (Ns)" as local_go_build does. GOFLAGS are the submodules': a
# line's -modfile must not reach another module.
define node_go_install
	@mkdir -p $(1)
	@printf 'building %s ... ' '$(3)'; start=$$(date +%s); \
	GOBIN=$(abspath $(1)) CGO_ENABLED=$(2) GOFLAGS='$(SUBMODULE_GOFLAGS)' $(GO) install $(4) || { echo "FAILED"; exit 1; }; \
	echo "done ($$(( $$(date +%s) - start ))s)"
endef

# $(NODE_BIN)/<module>.version holds the module's version: rewritten only when
# it differs, so its binaries are rebuilt only then.
node-force:
$(NODE_BIN)/%.version: node-force
	@mkdir -p $(@D)
	@echo '$(VERSION_OF_$*)' | cmp -s - $@ || echo '$(VERSION_OF_$*)' >$@
VERSION_OF_containerd := $(CONTAINERD_VERSION)
VERSION_OF_runc       := $(RUNC_VERSION)
VERSION_OF_cni        := $(CNI_PLUGINS_VERSION)

# Static, as containerd's releases build the shim; the btrfs, zfs and
# devmapper snapshotters, which need cgo, are disabled in the node's
# configuration anyway.
$(addprefix $(NODE_BIN)/,containerd containerd-shim-runc-v2 ctr) &: $(NODE_BIN)/containerd.version
	$(call node_go_install,$(NODE_BIN),0,containerd containerd-shim-runc-v2 ctr,-ldflags '-X github.com/containerd/containerd/v2/version.Version=$(CONTAINERD_VERSION)' \
		$(foreach c,containerd containerd-shim-runc-v2 ctr,github.com/containerd/containerd/v2/cmd/$(c)@$(CONTAINERD_VERSION)))
# runc needs cgo (its nsenter is C) and, for seccomp profiles, libseccomp-dev
# (NODE_PACKAGES above).
$(NODE_BIN)/runc: $(NODE_BIN)/runc.version
	$(call node_go_install,$(NODE_BIN),1,runc,-tags seccomp github.com/opencontainers/runc@$(RUNC_VERSION))
$(NODE_CNI_BIN)/bridge $(NODE_CNI_BIN)/host-local $(NODE_CNI_BIN)/loopback &: $(NODE_BIN)/cni.version
	$(call node_go_install,$(NODE_CNI_BIN),0,bridge host-local loopback,-ldflags '-X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$(CNI_PLUGINS_VERSION)' \
		$(foreach p,main/bridge ipam/host-local main/loopback,github.com/containernetworking/plugins/plugins/$(p)@$(CNI_PLUGINS_VERSION)))

node-prereqs: ## Install the real node's few Debian packages (pinned; root on Debian 12 with cgroup v1 or v2, no runtime of the host's own).
	@mkdir -p $(dir $(NODE_PREREQS_STATE))
	@NODE_PREREQS_STATE=$(NODE_PREREQS_STATE) hack/node-prereqs.sh $(NODE_PACKAGES)

# The training image (PyTorch, MPI; ~3.5 minutes and 750 MB, built each time) for
# the e2e suite's training specs, where mmdebstrap is installed.
node-training: node ## The real node's training image too (make test needs it).
	@if [ -f $(NODE_PREREQS_STATE) ] && command -v mmdebstrap >/dev/null; then $(MAKE) --no-print-directory node-images-training; \
	else echo "real node: no training image built (the real node is skipped here)"; fi
