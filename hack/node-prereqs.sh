#!/usr/bin/env bash
# Installs the few Debian packages the local cluster's real node still needs
# (hack/node.mk says which and why; its containerd, runc and CNI plugins are
# built from Go modules), at the pinned versions given as arguments
# (name=version ...), only where the real node can run and the host keeps
# what it has:
#
#   - Linux, root, apt-get: Debian 12 (bookworm), whose versions are pinned;
#   - cgroup v1 (the memory hierarchy at <cgroup root>/memory) or cgroup v2
#     (<cgroup root> is cgroup2fs, with the cpu, memory and pids controllers),
#     as internal/localcluster's realNodePreflight checks;
#   - on a host booted with systemd (/run/systemd/system is a directory),
#     systemd's private socket /run/systemd/private: the node uses the
#     systemd cgroup driver there and starts its slice through that socket;
#   - no container runtime or kubelet of the host's own: none of its packages
#     (Docker's containerd.io, docker-ce, moby-*, k3s, ...), no containerd,
#     dockerd, kubelet or k3s program that a package of ours (or Debian's
#     containerd, which this script installed before) does not own, and none
#     running;
#   - no pinned package installed at another version: nothing is downgraded,
#     upgraded, replaced or removed (apt-get install --no-remove).
#
# Anywhere else it prints one line saying why the real node is skipped and
# exits 0: the local cluster then runs KWOK nodes only; under CI=true it
# exits 1 instead (CI's machines run the real node: a run that would test
# nothing on it fails). Where the packages are
# there (installed or up to date) it exits 0 too and, if NODE_PREREQS_STATE
# names a file, writes "ready" there (the e2e suite then requires the real
# node); otherwise it removes that file.
#
# What it reads can be pointed elsewhere, so that its tests fake a machine:
#   OS_RELEASE    (/etc/os-release)      CGROUP_ROOT (/sys/fs/cgroup)
#   CGROUP_FSTYPE (stat -fc %T of CGROUP_ROOT: cgroup2fs on a cgroup v2 host)
#   SD_BOOTED     (/run/systemd/system)  SYSTEMD_PRIVATE (/run/systemd/private)
#   DPKG_QUERY    (dpkg-query)           PROC_ROOT   (/proc)
#   RUNTIME_PATH  ($PATH and the sbin/bin dirs: where host runtimes are looked for)
#   NODE_PREREQS_UID (id -u)             NODE_PREREQS_KERNEL (uname -s)
#   OWN_OUTPUT    (this project's _output: its own kubelet and containerd,
#                  on PATH after make kubectl, are never the host's)
#   CGO_TOOLS     ("gcc pkg-config": what runc's cgo build runs)
# DRY_RUN=1 prints the apt-get commands instead of running them.
set -euo pipefail

os_release=${OS_RELEASE:-/etc/os-release}
cgroup_root=${CGROUP_ROOT:-/sys/fs/cgroup}
sd_booted=${SD_BOOTED:-/run/systemd/system}
systemd_private=${SYSTEMD_PRIVATE:-/run/systemd/private}
dpkg_query=${DPKG_QUERY:-dpkg-query}
proc_root=${PROC_ROOT:-/proc}
runtime_path=${RUNTIME_PATH:-$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}
state=${NODE_PREREQS_STATE:-}
own_output=${OWN_OUTPUT:-$(cd "$(dirname "$0")/.." && pwd)/_output}

# Packages of a container runtime or kubelet that is the host's own (patterns
# as dpkg-query -W takes them). Debian's docker.io depends on Debian's
# containerd: that containerd is then Docker's, not ours.
host_runtime_packages=(containerd.io docker-ce docker-ee docker-engine docker.io 'moby-*' kubelet 'k3s*' 'rke2*' cri-o)
# Programs and process names (comm) of such runtimes; k3s runs its kubelet in
# k3s-server or k3s-agent (as realnode.go's hostRuntimes).
host_runtime_programs=(containerd dockerd kubelet k3s)
host_runtime_processes=(containerd dockerd kubelet k3s-server k3s-agent)

[[ -n "$state" ]] && rm -f "$state"

skip() {
	if [[ "${CI:-}" == true ]]; then
		echo "real node: $*; CI=true needs the real node (CI's machines run it), so this fails" >&2
		exit 1
	fi
	echo "real node: $*; the local cluster will run KWOK nodes only"
	exit 0
}

# installed NAME prints the version of package NAME if dpkg has it installed
# (or half-installed, or held), nothing if not installed or only its
# configuration files are left.
installed() {
	local status
	status=$("$dpkg_query" -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null || true)
	while read -r st version; do
		case "$st" in
		"" | not-installed | config-files) ;;
		*) echo "$version" ;;
		esac
	done <<<"$status"
}

if [[ "${NODE_PREREQS_KERNEL:-$(uname -s)}" != Linux ]]; then
	skip "not on Linux"
fi
if [[ "${NODE_PREREQS_UID:-$(id -u)}" != 0 ]]; then
	skip "not root"
fi
if [[ -z "${DRY_RUN:-}" ]] && ! command -v apt-get >/dev/null; then
	skip "no apt-get (not Debian)"
fi
if ! command -v "$dpkg_query" >/dev/null; then
	skip "no dpkg-query (not Debian)"
fi

id=$(. "$os_release" 2>/dev/null && echo "${ID:-}")
version_id=$(. "$os_release" 2>/dev/null && echo "${VERSION_ID:-}")
if [[ "$id" != debian || "$version_id" != 12 ]]; then
	skip "the pinned packages are Debian 12's, this is ${id:-an unknown system} ${version_id}"
fi

if [[ ! -d "$cgroup_root/memory" ]]; then
	fstype=${CGROUP_FSTYPE:-$(stat -fc %T "$cgroup_root" 2>/dev/null || true)}
	if [[ "$fstype" != cgroup2fs ]]; then
		skip "needs cgroup v1 (the memory hierarchy at $cgroup_root/memory) or v2 (cgroup2 at $cgroup_root, which is ${fstype:-unreadable} here)"
	fi
	controllers=" $(cat "$cgroup_root/cgroup.controllers" 2>/dev/null | tr '\n' ' ')"
	for c in cpu memory pids; do
		if [[ "$controllers" != *" $c "* ]]; then
			skip "cgroup v2 at $cgroup_root lacks the $c controller (cgroup.controllers:${controllers% })"
		fi
	done
fi
# As realNodePreflight's checkSystemdDriver.
if [[ -d "$sd_booted" && ! -S "$systemd_private" ]]; then
	skip "this host runs systemd ($sd_booted), so the node uses the systemd cgroup driver, which needs systemd's private socket $systemd_private"
fi

# make node builds runc with cgo (hack/node.mk). The machine image has
# these; a host without them would fail that build, so it says so here.
for tool in ${CGO_TOOLS:-gcc pkg-config}; do
	command -v "$tool" >/dev/null || skip "no $tool for runc's cgo build (Debian's gcc, libc6-dev and pkg-config)"
done

for p in "${host_runtime_packages[@]}"; do
	while read -r st name version; do
		case "$st" in
		"" | not-installed | config-files) ;;
		*) skip "the host has a container runtime of its own (package $name $version)" ;;
		esac
	done < <("$dpkg_query" -W -f='${db:Status-Status} ${Package} ${Version}\n' "$p" 2>/dev/null || true)
done

# Our packages, by name: a program one of them owns is ours. So is one of
# Debian's containerd, which this script installed (its service disabled)
# until the real node built its own: left by an earlier run, it is no
# runtime of the host's; one that runs is refused all the same, below and by
# the local cluster's preflight.
ours=(containerd)
for pin in "$@"; do
	ours+=("${pin%%=*}")
done
IFS=: read -ra dirs <<<"$runtime_path"
for dir in "${dirs[@]}"; do
	for prog in "${host_runtime_programs[@]}"; do
		[[ -n "$dir" && -x "$dir/$prog" ]] || continue
		real=$(readlink -f "$dir/$prog")
		# This project's own binaries (make kubectl puts them on PATH).
		[[ "$real" == "$own_output"/* ]] && continue
		owner=$("$dpkg_query" -S "$real" 2>/dev/null | cut -d: -f1 || true)
		mine=false
		for o in "${ours[@]}"; do
			[[ "$owner" == "$o" ]] && mine=true
		done
		if ! $mine; then
			skip "the host has a container runtime of its own ($real${owner:+, package $owner})"
		fi
	done
done

missing=()
for pin in "$@"; do
	name=${pin%%=*}
	want=${pin#*=}
	have=$(installed "$name")
	if [[ -z "$have" ]]; then
		missing+=("$pin")
	elif [[ "$have" != "$want" ]]; then
		skip "$name $have is installed, not the pinned $want; not replacing it"
	fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
	echo "real node packages: up to date"
	[[ -n "$state" ]] && echo ready >"$state"
	exit 0
fi

# A runtime of the host's that runs would share the node's fixed paths
# (/run/containerd, /var/lib/cni): nothing is installed for a node that could
# not run beside it.
for d in "$proc_root"/[0-9]*; do
	comm=$(cat "$d/comm" 2>/dev/null) || continue
	for p in "${host_runtime_processes[@]}"; do
		if [[ "$comm" == "$p" ]]; then
			skip "a $comm of the host runs (pid ${d##*/})"
		fi
	done
done

echo "real node packages: installing ${missing[*]}"
# --no-remove: apt fails rather than remove a package; no --allow-downgrades.
install=(apt-get install -y -qq --no-install-recommends --no-remove "${missing[@]}")
if [[ -n "${DRY_RUN:-}" ]]; then
	echo "dry run: apt-get update -qq"
	echo "dry run: ${install[*]}"
	exit 0
fi
start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
# The package lists of a fresh machine are empty or old.
apt-get update -qq
"${install[@]}" >/dev/null
echo "real node packages: installed ($(($(date +%s) - start))s)"
[[ -n "$state" ]] && echo ready >"$state"
exit 0
