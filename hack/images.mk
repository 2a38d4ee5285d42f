# Container images for the local cluster's real node (kubelet + containerd), built
# offline by hack/tools/images as docker-save tarballs. Included from the top
# Makefile; paths are relative to the repository root.
#
#   make node-images      busybox (localhost/framework-plugins/busybox:1.35.0-debian,
#                         Debian's busybox-static; the local cluster's --wait-image)
#                         and pause (localhost/framework-plugins/pause:local)
#   make node-images-training  localhost/framework-plugins/training:local (mmdebstrap'd Debian
#                         bookworm with PyTorch, scikit-learn, Open MPI, MPICH, ssh)
#
# Each image is $(IMAGES_DIR)/<name>.tar, skipped when $(IMAGES_DIR)/<name>.inputs
# says its inputs did not change (IMAGES_FLAGS=--force rebuilds). Load one with
#   ctr -n k8s.io images import $(IMAGES_DIR)/busybox.tar

GO ?= go
IMAGES_DIR ?= _output/images
IMAGES_FLAGS ?=
IMAGES_TOOL := _output/bin/images

.PHONY: node-images node-images-training images-tool

# The tool is rebuilt on every run; Go's build cache makes that a link step.
# It is a program of the hack/tools module, which a Volcano line's -modfile
# (GOFLAGS) must not reach; the images it builds from this repository, and
# the stock images' version (go list -m volcano.sh/volcano), do follow the
# line's module file.
images-tool:
	@mkdir -p _output/bin
	cd hack/tools && GOFLAGS='$(SUBMODULE_GOFLAGS)' $(GO) build -o ../../$(IMAGES_TOOL) ./images

node-images: images-tool ## Build the busybox and pause image tarballs into _output/images.
	$(IMAGES_TOOL) build --out $(IMAGES_DIR) --only busybox,pause $(IMAGES_FLAGS)

node-images-training: images-tool ## Build the training image tarball (Debian bookworm, PyTorch, MPI) into _output/images.
	$(IMAGES_TOOL) build --out $(IMAGES_DIR) --only training $(IMAGES_FLAGS)
