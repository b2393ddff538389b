#!/usr/bin/env bash
# A short mutation sample of one package, for a manual or weekly job; not
# part of .ci/run (a full campaign takes tens of minutes). The seed defaults
# to the ISO year and week, so a weekly job draws a fresh sample each week
# and a rerun in the same week reproduces it.
#
#   .ci/mutation-sample.sh [package dir] [mutants] [minimum score %]
set -euo pipefail
cd "$(dirname "$0")/.."
pkg="${1:-./lease}"
n="${2:-15}"
min="${3:-90}"
seed="${MUTATE_SEED:-$(date -u +%G%V)}"
exec nice -n 19 go run ./internal/mutate -pkg "$pkg" -n "$n" -seed "$seed" -min "$min"
