#!/usr/bin/env bash
# Builds make vm-test's VM on this machine from Debian 12's packages:
#   DIR/vmlinuz, DIR/initrd.img  Debian's kernel and the initramfs its package
#                                makes (initramfs-tools), taken out of the root
#   DIR/root.img                 the root file system, ext4 (sparse; SIZE)
# from mmdebstrap --variant=minbase bookworm with the packages given as
# arguments (name=version: the kernel, the real node's pins of hack/node.mk
# and the tools the guest runs) and hack/vm/boot as its PID 1; with systemd
# as PID 1 instead (make vm-test VM_INIT=systemd) hack/vm/vm-test.service
# runs hack/vm/boot.
#
#   build-image.sh DIR SIZE PACKAGE=VERSION...
#
# DIR/image.inputs records the sha256 of the arguments, of hack/vm/boot and
# vm-test.service and of this script:
# when it matches, nothing is rebuilt ("up to date"). Needs root (mmdebstrap
# writes a root file system with its owners and device nodes) and network
# access to deb.debian.org (mmdebstrap's default mirrors for bookworm).
set -euo pipefail
dir=$1 size=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
inputs=$(printf '%s\n' "$size" "$@" "$(sha256sum "$here/boot" "$here/vm-test.service" "$0" | cut -d' ' -f1)" | sha256sum | cut -d' ' -f1)
if [[ -f "$dir/image.inputs" && "$(cat "$dir/image.inputs")" == "$inputs" && -f "$dir/root.img" && -f "$dir/vmlinuz" && -f "$dir/initrd.img" ]]; then
	echo "vm: image up to date ($dir/root.img, $(du -h --apparent-size "$dir/root.img" | cut -f1) sparse, $(du -h "$dir/root.img" | cut -f1) used)"
	exit 0
fi
if ! command -v mmdebstrap >/dev/null || ! command -v mkfs.ext4 >/dev/null; then
	echo "vm: needs mmdebstrap and mkfs.ext4 (make node-prereqs installs mmdebstrap)" >&2
	exit 1
fi
mkdir -p "$dir"
rm -f "$dir/image.inputs" "$dir/root.img" "$dir/vmlinuz" "$dir/initrd.img"
rootfs=$dir/rootfs
rm -rf --one-file-system "$rootfs"
# --one-file-system: never into a mount left in the root (mmdebstrap mounts
# /proc, /sys and /dev there while it runs).
trap 'rm -rf --one-file-system "$rootfs"' EXIT

start=$(date +%s)
echo "vm: mmdebstrap bookworm with $* (one to two minutes; its progress follows)"
# The kernel's postinst runs update-initramfs inside: MODULES=most (the
# default) puts virtio_blk and ext4, which the root needs, into the initramfs.
mmdebstrap --variant=minbase --mode=root --include="$(
	IFS=,
	echo "$*"
)" \
	bookworm "$rootfs"
echo "vm: root file system made ($(($(date +%s) - start))s, $(du -sh "$rootfs" | cut -f1))"

install -m 755 "$here/boot" "$rootfs/usr/local/sbin/vm-boot"
# Under systemd: the unit that runs vm-boot, enabled as systemctl enable
# would; no getty on the console (console=ttyS0), whose prompt would mix
# with the guest's output there.
install -m 644 "$here/vm-test.service" "$rootfs/etc/systemd/system/vm-test.service"
mkdir -p "$rootfs/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/vm-test.service "$rootfs/etc/systemd/system/multi-user.target.wants/vm-test.service"
ln -sf /dev/null "$rootfs/etc/systemd/system/serial-getty@ttyS0.service"
kernel=$(ls "$rootfs"/boot/vmlinuz-* | sort -V | tail -n 1)
initrd=$rootfs/boot/initrd.img-${kernel##*/vmlinuz-}
if [[ ! -f "$initrd" ]]; then
	echo "vm: the kernel package made no initramfs ($initrd)" >&2
	exit 1
fi
cp "$kernel" "$dir/vmlinuz"
cp "$initrd" "$dir/initrd.img"

t=$(date +%s)
mkfs.ext4 -q -F -L vmroot -d "$rootfs" "$dir/root.img.new" "$size"
mv "$dir/root.img.new" "$dir/root.img"
echo "$inputs" >"$dir/image.inputs"
echo "vm: image built in $(($(date +%s) - start))s: kernel ${kernel##*/vmlinuz-}, root.img ($size sparse, $(du -h "$dir/root.img" | cut -f1) used, mkfs $(($(date +%s) - t))s)"
