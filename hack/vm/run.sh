#!/usr/bin/env bash
# Boots make vm-test's VM (hack/vm/build-image.sh built it in VM_DIR) with
# KVM and runs hack/vm/guest.sh inside on TREE, this repository, shared at
# the same path with 9p; Go (GOROOT), the module cache and the build cache
# are shared read-only (the guest puts an overlay on the build cache). The console (the guest's progress) is printed and kept in
# VM_DIR/console.log; the exit status is the guest's (VM_DIR/result).
#
#   VM_DIR=... VM_CPUS=2 VM_MEMORY=6G VM_STEPS=checks,build,node,demo VM_ACCEL=auto VM_INIT=boot run.sh TREE
set -euo pipefail
tree=$1
dir=${VM_DIR:?} cpus=${VM_CPUS:-2} memory=${VM_MEMORY:-6G} steps=${VM_STEPS:-}
goroot=$(go env GOROOT)
gomodcache=$(go env GOMODCACHE)
gocache=$(go env GOCACHE)
# PID 1: hack/vm/boot (the image's /usr/local/sbin/vm-boot), or systemd, which
# runs vm-boot from the image's vm-test.service (hack/vm/build-image.sh).
# Under systemd udev runs (the image has it for initramfs-tools) and would
# rename the NIC while hack/vm/init sets it up: net.ifnames=0 keeps eth0.
# systemd.firstboot=off: no prompt on the console whatever the image's empty
# /etc/machine-id makes of the boot.
init_args=
case ${VM_INIT:-boot} in
boot) init=/usr/local/sbin/vm-boot ;;
systemd) init=/lib/systemd/systemd init_args=" net.ifnames=0 systemd.firstboot=off" ;;
*)
	echo "vm: VM_INIT=$VM_INIT: want boot or systemd" >&2
	exit 2
	;;
esac
rm -f "$dir/result"
# KVM where it can run a stock kernel. A host whose KVM is PVM (the kvm_pvm
# module: KVM without hardware virtualization, as on this project's CI
# machines, themselves VMs) runs only kernels built as PVM guests: Debian's
# stops right after decompression there (no "Linux version" line). Then
# QEMU emulates the CPU (TCG, one host thread per vCPU), many times slower.
accel=${VM_ACCEL:-auto}
if [[ $accel == auto ]]; then
	accel=kvm
	[[ -d /sys/module/kvm_pvm ]] && accel=tcg
fi
case $accel in
# arch-capabilities: QEMU fails to set that MSR under a nested KVM.
kvm) accel_args=(-enable-kvm -cpu host,-arch-capabilities) kernel_args= ;;
# mitigations=off: the VM runs nothing but this test, and emulated each
# mitigation costs many times more (page-table isolation's CR3 switch on
# every system call flushes QEMU's software TLB).
tcg) accel_args=(-accel tcg,thread=multi -cpu max) kernel_args=" mitigations=off" ;;
*)
	echo "vm: VM_ACCEL=$accel: want kvm, tcg or auto" >&2
	exit 2
	;;
esac
steps=${steps:-checks,build,node,demo}
echo "vm: booting Debian 12 ($(cut -c1-12 "$dir/image.inputs")) with ${accel^^}$([[ $accel == tcg && -d /sys/module/kvm_pvm ]] && echo " (this host's KVM is PVM)"): $cpus vCPUs, $memory memory, steps $steps, init $init; console in $dir/console.log"
start=$(date +%s)
share() { # TAG PATH [readonly]
	echo "-virtfs" "local,path=$2,mount_tag=$1,security_model=passthrough,multidevs=remap${3:+,readonly=on}"
}
# -nodefaults: no display, no default NIC or drives. The one NIC is QEMU's
# user-mode network with restrict=on: the guest reaches neither the host nor
# anything beyond it, and no port is forwarded in. romfile= : no PXE ROM.
# cgroup_no_v1=all and systemd.unified_cgroup_hierarchy=1: the unified
# hierarchy only (hack/vm/init mounts it; the second says the same to
# systemd, which mounts it under VM_INIT=systemd). panic=-1 and -no-reboot: a kernel panic ends QEMU. discard: what
# the guest deletes frees the sparse image's blocks on this machine.
set +e
qemu-system-x86_64 "${accel_args[@]}" -smp "$cpus" -m "$memory" \
	-nodefaults -no-reboot -display none -serial stdio \
	-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
	-append "console=ttyS0 root=/dev/vda rw rootflags=discard init=$init$init_args cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1 panic=-1 quiet$kernel_args vm.tree=$tree vm.steps=$steps vm.accel=$accel" \
	-drive "file=$dir/root.img,format=raw,if=virtio,discard=unmap" \
	$(share tree "$tree") $(share goroot "$goroot" ro) $(share gomodcache "$gomodcache" ro) $(share gocache "$gocache" ro) \
	-netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0,romfile= \
	</dev/null 2>&1 | tee "$dir/console.log"
qemu=${PIPESTATUS[0]}
set -e
echo "vm: QEMU exited $qemu after $(($(date +%s) - start))s"
if [[ ! -f "$dir/result" ]]; then
	echo "vm: the guest wrote no result ($dir/result): it did not finish" >&2
	exit 1
fi
rc=$(cat "$dir/result")
echo "vm: guest result: exit $rc"
exit "$rc"
