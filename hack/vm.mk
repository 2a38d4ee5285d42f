# The real node on cgroup v2, in a KVM VM: make vm-test. Included from the
# top-level Makefile.
#
#   make vm-test   boot a Debian 12 VM (built here from Debian's packages) on
#                  the unified cgroup hierarchy, with this tree, Go and the
#                  module cache shared into it, and run there the real node's
#                  checks, the build and make demo (VM_STEPS)
#   make vm-image  only build the VM's kernel, initramfs and root file system
#   make vm-clean  remove _output/vm (make local-down does too)
#
# The VM: VM_CPUS vCPUs, VM_MEMORY of memory, KVM (VM_ACCEL); QEMU's user-mode
# network with restrict=on (the VM reaches neither the host nor anything
# outside, and nothing is forwarded in); by default no systemd (VM_INIT):
# hack/vm/init mounts cgroup2 at /sys/fs/cgroup and runs hack/vm/guest.sh.
# Its files are under
# $(VM_DIR): the root image (sparse, $(VM_DISK)), the kernel, the initramfs,
# the console log and the guest's result. Needs root, /dev/kvm and apt-get.

VM_DIR ?= $(CURDIR)/_output/vm
VM_CPUS ?= 2
VM_MEMORY ?= 6G
VM_DISK ?= 24G
# checks: cgroup2fs at /sys/fs/cgroup, the node's packages up to date;
# build: make binaries node-training (over the host's Go build cache);
# node: local-up with the real node, a Job of two pods on it, local-down;
# demo: make demo on the real node. node and demo check that the VM's host
# state is as before. Empty: checks,build,node,demo. Where QEMU emulates the
# CPU (TCG: a host whose KVM is PVM) the demo runs its Jobs one at a time
# (hack/vm/guest.sh), about half an hour.
VM_STEPS ?=
# auto: KVM unless the host's KVM is PVM (then TCG); kvm; tcg.
VM_ACCEL ?= auto
# PID 1 of the VM. boot: hack/vm/boot, then hack/vm/init (no systemd; the
# real node uses the cgroupfs driver). systemd: Debian's systemd, which runs
# the same through the image's vm-test.service (hack/vm/vm-test.service);
# the real node then uses the systemd cgroup driver and its slice.
VM_INIT ?= boot

# Host packages, pinned as hack/node.mk's: QEMU (mmdebstrap is one of
# NODE_PACKAGES). Debian 12's kernel is installed into the VM's root, not on
# this machine.
VM_HOST_PACKAGES := qemu-system-x86=1:7.2+dfsg-7+deb12u18+b3
# The VM's packages besides NODE_PACKAGES (so that make node-prereqs finds
# them all up to date inside): the kernel, its initramfs generator, what
# hack/vm/init and the real node run, cgo's compiler for runc's build (this
# machine's image has them; a minbase root does not), and systemd as init for
# VM_INIT=systemd (without its Recommends, as mmdebstrap installs: no
# dbus-daemon; udev is there already, for initramfs-tools).
VM_PACKAGES := \
	gcc=4:12.2.0-3 \
	libc6-dev=2.36-9+deb12u14 \
	pkg-config=1.8.1-1 \
	linux-image-amd64=6.1.176-1 \
	linux-image-6.1.0-50-amd64=6.1.176-1 \
	initramfs-tools=0.142+deb12u3 \
	kmod=30+20221128-1 \
	iproute2=6.1.0-3 \
	make=4.3-4.1 \
	procps=2:4.0.2-3 \
	systemd-sysv=252.39-1~deb12u2

.PHONY: vm-prereqs vm-image vm-test vm-clean

vm-prereqs: node-prereqs
	@hack/vm/host-prereqs.sh $(VM_HOST_PACKAGES)

vm-image: vm-prereqs ## Build the VM of make vm-test: Debian 12's kernel, initramfs and root file system (mmdebstrap), in _output/vm.
	@hack/vm/build-image.sh $(VM_DIR) $(VM_DISK) $(VM_PACKAGES) $(NODE_PACKAGES)

# The VM builds nothing the host's make binaries node-training kubectl already
# built but this repository's own binaries, and fetches nothing: the training
# image comes from the host (its packages need the network). The demo step
# runs $(BIN)/demo, which make binaries does not build: built here, so that
# VM_STEPS without build never runs an old one.
vm-test: vm-image binaries node-training kubectl ## Boot the VM (cgroup v2; KVM, VM_CPUS vCPUs, VM_MEMORY) and run the real node's checks, a Job on it and make demo inside (VM_STEPS).
	$(call local_go_build,$(BIN)/demo,./hack/demo)
	@VM_DIR=$(VM_DIR) VM_CPUS=$(VM_CPUS) VM_MEMORY=$(VM_MEMORY) VM_STEPS=$(VM_STEPS) VM_ACCEL=$(VM_ACCEL) VM_INIT=$(VM_INIT) hack/vm/run.sh $(CURDIR)

vm-clean: ## Remove the VM's files (_output/vm).
	rm -rf $(VM_DIR)
