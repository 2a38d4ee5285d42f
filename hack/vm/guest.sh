#!/usr/bin/env bash
# Runs inside make vm-test's VM as root (hack/vm/init starts it):
#
#   guest.sh TREE STEPS [ACCEL]   (ACCEL: kvm or tcg, from run.sh; tcg lengthens the demo's timeouts)
#
# STEPS (comma-separated, in this order):
#   checks  the unified hierarchy (stat -fc %T /sys/fs/cgroup prints
#           cgroup2fs) with the kubelet's controllers, the cgroup driver the
#           real node will use (systemd under VM_INIT=systemd, with its
#           private socket; else cgroupfs), and the real node's Debian
#           packages up to date (make node-prereqs installs nothing)
#   build   make binaries node-training: what the host built is reused, this
#           repository's own binaries are rebuilt with the VM's build cache
#   node    local-cluster up with the real node required, a Job of two busybox
#           pods on it (hack/vm/real-node-job.yaml), local-cluster down
#   demo    make demo on the real node (DEMO_MODE=real)
# node and demo check the host state around the cluster: the top-level
# cgroups and the root's cgroup.subtree_control, network namespaces and
# interfaces, mounts, the node's fixed host paths, its processes and the
# kubelet's sysctls are as before.
# Each step prints its time; the exit status (the first failing step's) is
# written to TREE/_output/vm/result for the host.
set -uo pipefail
tree=$1 steps=$2 accel=${3:-kvm}
out=$tree/_output/vm
cd "$tree" || exit 1
export HOME=/root
export PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The VM's own build cache, on its disk; modules only from the shared cache.
export GOCACHE=/var/cache/go-build GOMODCACHE=/root/go/pkg/mod GOPROXY=off GOTOOLCHAIN=local
rc=0

run() { # NAME COMMAND...: prints its time and exit status; records a failure
	local name=$1 start=$(date +%s) status
	shift
	echo "== vm: $name"
	"$@"
	status=$?
	echo "== vm: $name: exit $status ($(($(date +%s) - start))s)"
	if [[ $status -ne 0 && $rc -eq 0 ]]; then rc=$status; fi
	return "$status"
}

checks() {
	local fstype
	fstype=$(stat -fc %T /sys/fs/cgroup)
	echo "stat -fc %T /sys/fs/cgroup: $fstype"
	echo "kernel $(uname -r), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) memory"
	echo "cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
	echo "root disk: $(df -h / | awk 'NR == 2 {print $2 " (" $4 " free)"}')"
	echo "network: $(ip -o -4 addr show | awk '{print $2 " " $4}' | tr '\n' ' ')default via $(ip route show default | awk '{print $3}')"
	[[ "$fstype" == cgroup2fs ]] || { echo "not the unified hierarchy"; return 1; }
	# The real node's choice (realnode.go's hostCgroupDriver): systemd where
	# /run/systemd/system is a directory, as sd_booted(3) tests.
	if [[ -d /run/systemd/system ]]; then
		echo "real node's cgroup driver: systemd (PID 1 $(cat /proc/1/comm), $(systemctl --version | head -n 1); private socket /run/systemd/private $([[ -S /run/systemd/private ]] && echo there || echo missing))"
		[[ -S /run/systemd/private ]] || { echo "systemd's private socket is missing"; return 1; }
	else
		echo "real node's cgroup driver: cgroupfs (no /run/systemd/system; PID 1 $(cat /proc/1/comm))"
	fi
	local prereqs
	prereqs=$(make --no-print-directory node-prereqs 2>&1)
	echo "$prereqs"
	[[ "$prereqs" == *"real node packages: up to date"* ]] || { echo "make node-prereqs did not find the real node's packages up to date"; return 1; }
}

# host_state prints what the real node may change on this host, sorted.
host_state() {
	find /sys/fs/cgroup -mindepth 1 -maxdepth 1 -type d | sed 's/^/cgroup /'
	echo "subtree_control $(cat /sys/fs/cgroup/cgroup.subtree_control)"
	ls /run/netns 2>/dev/null | sed 's/^/netns /'
	ip -o link | awk -F': ' '{sub(/@.*/, "", $2); print "link " $2}'
	awk '{print "mount " $5}' /proc/self/mountinfo
	for p in /run/netns /run/containerd /run/nri /run/vcplugins-* /run/mount /var/lib/cni /var/lib/kubelet /var/log/containers /var/log/pods /usr/libexec/kubernetes; do
		[[ -e $p ]] && echo "path $p"
	done
	ps -eo comm= | grep -E '^(containerd|kubelet|kube-|etcd|vc-|coredns|runc)' | sed 's/^/process /'
	sysctl -n vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward | tr '\n' ' ' | sed 's/^/sysctls /'
	echo
}

# The cluster's directory, on the VM's disk: containerd's overlayfs snapshots
# cannot live on 9p (the tree's _output/local).
cluster=/var/lib/vm-local

# with_host_check COMMAND...: runs COMMAND and checks that the host state after
# it is as before.
with_host_check() {
	local before after status
	before=$(host_state | sort)
	"$@"
	status=$?
	after=$(host_state | sort)
	if [[ "$before" != "$after" ]]; then
		echo "host state changed (- before, + after):"
		diff <(echo "$before") <(echo "$after") | grep '^[<>]' | sed 's/^</-/; s/^>/+/'
		[[ $status -ne 0 ]] || status=1
	else
		echo "host state after the cluster: as before ($(echo "$before" | wc -l) entries: cgroups, controllers, namespaces, links, mounts, paths, processes, sysctls)"
	fi
	return "$status"
}

# node: the local cluster with the real node required, one Job on it
# (hack/vm/real-node-job.yaml), the node's cgroups shown, then local-down.
node() {
	local status=0 kubectl=$tree/_output/bin/kubectl
	export KUBECONFIG=$cluster/kubeconfig
	# Only the images the Job needs: the node loads every tarball of its
	# image directory, and the training image (750 MB) takes minutes.
	local images=/var/lib/vm-images
	mkdir -p "$images"
	ln -sf "$tree/_output/images/pause.tar" "$tree/_output/images/busybox.tar" "$images/"
	# make local-up's command without its prerequisites (the build step's
	# make binaries node, minutes when emulated). --timeout: an emulated CPU
	# (TCG) starts the control plane in minutes; one KWOK node and no webhook
	# manager spare it two components' work.
	_output/bin/local-cluster up --dir "$cluster" --bin-dir _output/bin --nodes 1 --webhook off \
		--real-node on --timeout 20m --image-dir "$images" || status=$?
	if [[ $status -eq 0 ]]; then
		"$kubectl" get nodes
		echo "the real node's cgroups (unified hierarchy):"
		# /vcplugins-<id> (cgroupfs driver) or /vcplugins_<id>.slice (systemd).
		find /sys/fs/cgroup/vcplugins[-_]* -maxdepth 2 -type d
		if [[ -d /run/systemd/system ]]; then
			SYSTEMD_COLORS=0 systemctl --no-pager --plain --full --no-legend list-units --all 'vcplugins_*'
		fi
		echo "/sys/fs/cgroup/cgroup.subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
		local t=$(date +%s)
		"$kubectl" create -f hack/vm/real-node-job.yaml &&
			"$kubectl" wait --for=jsonpath='{.status.state.phase}'=Completed jobs.batch.volcano.sh/vm-check --timeout=20m || status=1
		echo "Job vm-check: $("$kubectl" get jobs.batch.volcano.sh vm-check -o jsonpath='{.status.state.phase}') after $(($(date +%s) - t))s"
		"$kubectl" get pods -o wide
		"$kubectl" logs vm-check-server-0
		"$kubectl" logs vm-check-client-0
	fi
	_output/bin/local-cluster down --dir "$cluster" || status=1
	rm -rf "$images"
	return "$status"
}

mkdir -p "$out"
rm -f "$out/result"
for step in ${steps//,/ }; do
	case $step in
	checks) run "checks: cgroup v2 and the real node's packages" checks || break ;;
	build) run "build: make binaries node-training" make --no-print-directory binaries node-training || break ;;
	node) run "node: local-up with the real node, a Job on it, local-down" with_host_check node || break ;;
	# make demo's command after the build step's make binaries node-training.
	# Longer timeouts: a VM loads the training image and trains for minutes;
	# an emulated CPU (TCG) for tens of them (docs/dev/vm-test.md "Runs"),
	# and starts a Job's containers so many minutes apart that the contract
	# checks need longer than their 180 s for a peer; side by side, the
	# eleven Jobs' 35 pods start so slowly that Open MPI's launcher and a
	# torch elastic worker failed, so there they run one at a time.
	demo) run "demo: make demo on the real node" with_host_check _output/bin/demo --mode real --dir "$cluster" \
		$([[ $accel == tcg ]] && echo "--up-timeout 45m --real-job-timeout 150m --check-timeout 60m --at-once 1" || echo "--up-timeout 15m --real-job-timeout 12m") || break ;;
	*)
		echo "unknown step $step"
		rc=2
		break
		;;
	esac
done
echo "$rc" >"$out/result"
exit "$rc"
