# The local cluster's real node: the Debian packages it runs (pinned) and its
# images. Included from the top-level Makefile.
#
#   make node-prereqs  install containerd, runc, CNI plugins, busybox-static and
#                      mmdebstrap at the versions below (root on Debian 12 with
#                      cgroup v1 or v2 and no container runtime of the host's own, and
#                      never replacing an installed package; elsewhere it says
#                      why and the cluster runs KWOK nodes only)

NODE_PACKAGES := \
	containerd=1.6.20~ds1-1+deb12u3 \
	runc=1.1.5+ds1-1+deb12u1 \
	containernetworking-plugins=1.1.1+ds1-3+b5 \
	busybox-static=1:1.35.0-4+deb12u1+b1 \
	mmdebstrap=1.3.5-7

.PHONY: node node-training node-prereqs
# node-prereqs writes "ready" here where the real node's packages are there
# (removes it elsewhere); the e2e suite then requires the real node.
NODE_PREREQS_STATE := $(CURDIR)/_output/node-prereqs

# The images only where the real node can run; elsewhere the cluster runs KWOK
# nodes only and needs none.
node: node-prereqs ## Everything the real node needs besides the binaries: packages and images.
	@if [ -f $(NODE_PREREQS_STATE) ] && [ -x /bin/busybox ]; then $(MAKE) --no-print-directory node-images; \
	else echo "real node: no images built (the real node is skipped here)"; fi

node-prereqs: ## Install the real node's Debian packages (pinned; root on Debian 12 with cgroup v1 or v2, no runtime of the host's own).
	@mkdir -p $(dir $(NODE_PREREQS_STATE))
	@NODE_PREREQS_STATE=$(NODE_PREREQS_STATE) hack/node-prereqs.sh $(NODE_PACKAGES)

# The training image (PyTorch, MPI; ~3.5 minutes and 750 MB, built each time) for
# the e2e suite's training specs, where mmdebstrap is installed.
node-training: node ## The real node's training image too (make test needs it).
	@if [ -f $(NODE_PREREQS_STATE) ] && command -v mmdebstrap >/dev/null; then $(MAKE) --no-print-directory node-images-training; \
	else echo "real node: no training image built (the real node is skipped here)"; fi
