#!/usr/bin/env bash
# The Venus reproduction tests (TestReproVenus: every policy at 5 tick
# phases under the paper profile; TestReproVenusAuthors: the authors
# profile), which `go test ./...` skips: 48 simulations take minutes of
# CPU, more than the unit run's per-package timeout should hold. They read
# ../shared/traces (or $ASTRAEA_TRACES) and fail under CI=true when the
# traces are absent.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CI="${CI:-true}"
echo "-- go test -run TestReproVenus (simulate/cmd/astraea)"
ASTRAEA_REPRO=1 go test -count=1 -timeout 45m -run '^TestReproVenus' -v ./simulate/cmd/astraea
