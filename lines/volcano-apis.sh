#!/usr/bin/env bash
# Makes the volcano.sh/apis tree that Volcano v1.15.x builds against, in
# _output/volcano-apis (go.mod: replace volcano.sh/apis => ./_output/volcano-apis).
#
# Why: since v1.14 Volcano's go.mod replaces volcano.sh/apis with its own
# staging directory, which its module zip does not contain, and the Go module
# proxy serves apis v1.14.0 but not v1.15.x. apis v1.15.x differs from v1.14.0
# in regenerated informer code and in exactly two exported names that Volcano
# v1.15 (or client-go v0.35 with it) uses. This script copies apis v1.14.0 as
# the proxy serves it (its checksum checked against ours below) and adds those
# two names in files of this project's own:
#   - scheduling/v1beta1.QueueAllocationGateKey, the scheduling gate Volcano
#     v1.15's pod mutation adds and its scheduler removes;
#   - (*fake.Clientset).IsWatchListSemanticsUnSupported, which client-go v0.35
#     asks of a client before it uses WatchList. apis v1.14.0's generated
#     informers do not pass it on (v1.15's were regenerated to), so a unit
#     test that runs them on the fake clientset turns client-go's
#     WatchListClient feature off (pkg/waitwatch's TestController).
# Retire it when the proxy serves volcano.sh/apis v1.15.x: require that
# version and drop the replace (docs/compatibility.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=_output/volcano-apis
version=v1.14.0
# The h1: hash of apis v1.14.0's module zip (as a go.sum records it).
want_sum="h1:Rf8wzGFmgzbyg85GO0CxapDDEk/VM3D7QbjbI/sH+OQ="
stamp="$out/.made-by-volcano-apis.sh"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$version $want_sum $(sha256sum "$0" | cut -c1-16)" ]]; then
	exit 0
fi
# Outside any module, so that the missing replace directory does not stop go.
info="$(cd / && GOFLAGS=-mod=mod go mod download -json "volcano.sh/apis@$version")"
dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$info")"
sum="$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p' <<<"$info")"
if [[ -z "$dir" || ! -d "$dir" ]]; then
	echo "volcano-apis.sh: go mod download volcano.sh/apis@$version gave no directory:" >&2
	echo "$info" >&2
	exit 1
fi
if [[ "$sum" != "$want_sum" ]]; then
	echo "volcano-apis.sh: volcano.sh/apis@$version has checksum $sum, want $want_sum" >&2
	exit 1
fi
rm -rf "$out"
mkdir -p "$(dirname "$out")"
cp -R "$dir" "$out"
chmod -R u+w "$out"

cat >"$out/pkg/apis/scheduling/v1beta1/zz_framework_plugins_v1_15.go" <<'GO'
// Added by framework-plugins' lines/volcano-apis.sh: a name of volcano.sh/apis
// v1.15 that v1.14.0 lacks.

package v1beta1

// QueueAllocationGateKey is the scheduling gate that Volcano v1.15's pod
// mutation adds to pods of queues with allocation gating and its scheduler
// removes once the queue admits them.
const QueueAllocationGateKey = GroupName + "/queue-allocation-gate"
GO

cat >"$out/pkg/client/clientset/versioned/fake/zz_framework_plugins_v1_15.go" <<'GO'
// Added by framework-plugins' lines/volcano-apis.sh: a method of volcano.sh/apis
// v1.15's generated fake clientset that v1.14.0's lacks.

package fake

// IsWatchListSemanticsUnSupported reports true: the fake clientset's watches
// do not send the bookmark that ends a WatchList's initial list, so client-go
// v0.35 must list and then watch (k8s.io/client-go/util/watchlist).
func (c *Clientset) IsWatchListSemanticsUnSupported() bool { return true }
GO
echo "$version $sum $(sha256sum "$0" | cut -c1-16)" >"$stamp"
echo "volcano-apis.sh: $out is volcano.sh/apis $version ($sum) plus QueueAllocationGateKey and IsWatchListSemanticsUnSupported"
