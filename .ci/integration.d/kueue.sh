#!/usr/bin/env bash
# Integration tests of integrations/kueue (its own Go module): gofmt, vet
# and every test of the module, against a real kube-apiserver and etcd
# (.ci/lib/kube.sh) with Kueue's CRDs from the module cache, and, for the
# end-to-end test, the real Kueue manager built from
# sigs.k8s.io/kueue/cmd/kueue at the version the module requires.
#
# The manager is built once into $ASTRAEA_CACHE/kueue/<version>/bin
# (ASTRAEA_CACHE defaults to $HOME/.cache/astraea; about 2.5 min cold on
# two cores, under `nice -n 10`), behind a flock, and renamed into place
# so that bin/ is either absent or complete. Kueue reads its metrics
# certificate from /etc/kueue/metrics/certs, a path fixed in Kueue; the
# test writes a self-signed one there if none is present, so it runs as
# root (as CI does). Under CI=true anything missing fails the run;
# otherwise the script says why it skips and exits 0.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export CI=${CI:-true}
T_START=$SECONDS
say() { echo "kueue: $*" >&2; }

# shellcheck source=../lib/kube.sh
source "$REPO/.ci/lib/kube.sh" || { say "skipped: no kube-apiserver/etcd"; exit 0; }
say "control plane ready after $((SECONDS - T_START)) s"

MOD=$REPO/integrations/kueue
cd "$MOD"
export GOWORK=off
VERSION=$(go list -m -f '{{.Version}}' sigs.k8s.io/kueue)
ROOT=${ASTRAEA_CACHE:-$HOME/.cache/astraea}/kueue/$VERSION
mkdir -p "$ROOT"
exec {lock}>"$ROOT/lock"
flock -w 1800 "$lock" || { say "timed out waiting for another build of Kueue ($ROOT/lock)"; exit 1; }
if [ ! -x "$ROOT/bin/kueue" ]; then
  say "building Kueue's manager $VERSION (once; cached in $ROOT/bin)"
  t0=$SECONDS
  tmp=$(mktemp -d "$ROOT/build.XXXXXX")
  if ! (cd "$tmp" && GOBIN=$tmp/bin GOFLAGS=-mod=mod nice -n 10 go install "sigs.k8s.io/kueue/cmd/kueue@$VERSION") >"$tmp/build.log" 2>&1; then
    tail -n 30 "$tmp/build.log" >&2
    say "building Kueue's manager failed"
    rm -rf "$tmp"
    exit 1
  fi
  rm -rf "$ROOT/bin" && mv -T "$tmp/bin" "$ROOT/bin" && rm -rf "$tmp"
  say "built Kueue's manager in $((SECONDS - t0)) s"
fi
exec {lock}>&-
export ASTRAEA_KUEUE_BIN=$ROOT/bin/kueue

bad=$(gofmt -l .)
[ -z "$bad" ] || { say "gofmt would change: $bad"; exit 1; }
go vet ./...
t0=$SECONDS
export ASTRAEA_KUEUE_REPORT=${TMPDIR:-/tmp}/astraea-kueue-admissions.txt
log=${TMPDIR:-/tmp}/astraea-kueue-test.log
rc=0
go test -count=1 -timeout 15m -v ./... >"$log" 2>&1 || rc=$?
grep -E '^(\s*--- |ok|FAIL|panic)|(e2e|envtest)_test.go' "$log" >&2 || true
if [ "$rc" != 0 ]; then
  tail -n 80 "$log" >&2
  say "FAIL: go test exited $rc (full log: $log)"
  exit "$rc"
fi
[ -f "$ASTRAEA_KUEUE_REPORT" ] && sed 's/^/kueue: admission order /' "$ASTRAEA_KUEUE_REPORT" >&2
say "module tests took $((SECONDS - t0)) s; PASS in $((SECONDS - T_START)) s"
