# The local cluster's real node: the Debian packages it runs (pinned) and its
# images. Included from the top-level Makefile.
#
#   make node-prereqs  install containerd, runc, CNI plugins, busybox-static and
#                      mmdebstrap at the versions below (root on Debian 12 only;
#                      elsewhere it says so and the cluster runs KWOK nodes only)

NODE_PACKAGES := \
	containerd=1.6.20~ds1-1+deb12u3 \
	runc=1.1.5+ds1-1+deb12u1 \
	containernetworking-plugins=1.1.1+ds1-3+b5 \
	busybox-static=1:1.35.0-4+deb12u1+b1 \
	mmdebstrap=1.3.5-7

.PHONY: node node-training node-prereqs
# The images are built from busybox-static, so only where node-prereqs could
# install it; elsewhere the cluster runs KWOK nodes only and needs none.
node: node-prereqs ## Everything the real node needs besides the binaries: packages and images.
	@if [ -x /bin/busybox ] && [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory node-images; \
	else echo "real node: no images built (needs root and busybox-static)"; fi

node-prereqs: ## Install the real node's Debian packages (pinned; root on Debian only).
	@hack/node-prereqs.sh $(NODE_PACKAGES)

# The training image (PyTorch, MPI; ~10 minutes and 750 MB the first time) for
# the e2e suite's training specs, where mmdebstrap is installed.
node-training: node ## The real node's training image too (make test needs it).
	@if command -v mmdebstrap >/dev/null && [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory node-images-training; \
	else echo "real node: no training image built (needs root and mmdebstrap)"; fi
