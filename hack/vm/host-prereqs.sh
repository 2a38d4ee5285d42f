#!/usr/bin/env bash
# Installs the host packages make vm-test needs, at the pinned versions given
# as arguments (name=version ...), with apt-get: only what is missing, never
# over another installed version (apt-get install --no-remove, no downgrade).
# Exits 1 saying why where it cannot (not root, no apt-get, a package at
# another version, no /dev/kvm): the VM test needs all of them.
set -euo pipefail

if [[ "$(id -u)" != 0 ]]; then
	echo "vm: needs root (apt-get, mmdebstrap, /dev/kvm)" >&2
	exit 1
fi
if [[ ! -w /dev/kvm ]]; then
	echo "vm: no usable /dev/kvm (KVM is needed to boot the VM)" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
	echo "vm: needs apt-get and dpkg-query (Debian) to install $*" >&2
	exit 1
fi
missing=()
for pin in "$@"; do
	name=${pin%%=*}
	want=${pin#*=}
	have=$({ dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$name" 2>/dev/null || true; } | awk '$1 == "installed" {print $2}')
	if [[ -z "$have" ]]; then
		missing+=("$pin")
	elif [[ "$have" != "$want" ]]; then
		echo "vm: $name $have is installed, not the pinned $want; not replacing it" >&2
		exit 1
	fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
	echo "vm: host packages up to date ($*)"
	exit 0
fi
echo "vm: installing ${missing[*]}"
start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends --no-remove "${missing[@]}" >/dev/null
echo "vm: installed ($(($(date +%s) - start))s)"
