#!/usr/bin/env bash
# Tests of integrations/volcano, the Volcano scheduler plugin, at three
# levels:
#   1. unit tests of its orders, arguments, snapshot and session-open
#      reconciliation;
#   2. Volcano's own uthelper harness running the real allocate action with
#      the gang and astraea plugins;
#   3. end to end: vc-scheduler (Volcano's scheduler with the plugin) built
#      and run against a kube-apiserver and etcd that the test starts, with
#      Volcano's CRDs and fake GPU Nodes (no kubelet).
#
# The control plane comes from .ci/lib/kube.sh (etcd from apt, kube-apiserver
# built from the Go module once and cached under $HOME/.cache/astraea).
# Everything else is the Go module proxy. If the control plane cannot be
# had, the script fails under CI=true and is skipped otherwise.
#
# Cost, measured on 2 cores shared with other builds (load average ~40):
# cold, compiling Volcano's ~1,100 packages for vet and the tests took
# about 40 min, on top of kube.sh's own cold build; warm, 195 s: vet
# 16 s, unit and uthelper tests 39 s (mostly linking), vc-scheduler 68 s
# (linking), the e2e test 72 s (two control planes, 30 s of scenario
# each).
set -uo pipefail

cd "$(dirname "$0")/../.."
T_START=$(date +%s)
say() { echo "volcano-it: $*"; }
fail() {
  echo "volcano-it: FAIL: $*" >&2
  exit 1
}

command -v go >/dev/null 2>&1 || fail "go is not on PATH"
# shellcheck source=../lib/kube.sh
source .ci/lib/kube.sh || {
  say "skipped: no Kubernetes control plane (see above)"
  exit 0
}
say "control plane ready after $(($(date +%s) - T_START)) s"

cd integrations/volcano || fail "no integrations/volcano"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/astraea-volcano-it.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

t=$(date +%s)
nice -n 10 go vet ./... || fail "go vet in integrations/volcano"
say "vet done in $(($(date +%s) - t)) s"

t=$(date +%s)
nice -n 10 timeout 900 go test -count=1 . || fail "unit and uthelper tests"
say "unit and uthelper tests done in $(($(date +%s) - t)) s"

t=$(date +%s)
nice -n 10 go build -o "$WORK/vc-scheduler" ./cmd/vc-scheduler || fail "go build ./cmd/vc-scheduler"
say "vc-scheduler built in $(($(date +%s) - t)) s"

t=$(date +%s)
ASTRAEA_VC_SCHEDULER=$WORK/vc-scheduler timeout 600 go test -count=1 -v ./e2e 2>&1 |
  tee "$WORK/e2e.log" | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|binding order|bound to' ||
  true
grep -q '^ok' "$WORK/e2e.log" || {
  tail -n 80 "$WORK/e2e.log" >&2
  fail "end-to-end test"
}
say "e2e done in $(($(date +%s) - t)) s"
say "PASS in $(($(date +%s) - T_START)) s"
