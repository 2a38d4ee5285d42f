#!/usr/bin/env bash
# Installs the Debian packages of the local cluster's real node, at the pinned
# versions given as arguments (name=version ...). A machine that cannot run a
# real node (not Linux, not root, no apt-get) gets one line saying so and
# exit status 0: the local cluster then runs KWOK nodes only.
set -euo pipefail

if [[ "$(uname -s)" != Linux ]]; then
	echo "real node: not on Linux; the local cluster will run KWOK nodes only"
	exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
	echo "real node: not root; the local cluster will run KWOK nodes only"
	exit 0
fi
if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
	echo "real node: no apt-get (not Debian); the local cluster will run KWOK nodes only"
	exit 0
fi

missing=()
for pin in "$@"; do
	name=${pin%%=*}
	want=${pin#*=}
	have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
	if [[ "$have" != "install ok installed $want" ]]; then
		missing+=("$pin")
	fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
	echo "real node packages: up to date"
	exit 0
fi

echo "real node packages: installing ${missing[*]}"
start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
# The package lists of a fresh machine are empty or old.
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "real node packages: installed ($(( $(date +%s) - start ))s)"
