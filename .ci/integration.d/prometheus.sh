#!/usr/bin/env bash
# The Prometheus collector (integrations/prometheus), a module of its own:
# go vet and its tests, which serve the collector over HTTP and scrape it.
# Its dependencies come from the Go module proxy into Go's module cache,
# as the main module's do; it needs nothing else (about 10 s once they are
# there).
set -euo pipefail
cd "$(dirname "$0")/../../integrations/prometheus"
export GOFLAGS="${GOFLAGS:-} -mod=readonly"
echo "-- go vet (integrations/prometheus)"
go vet ./...
echo "-- go test (integrations/prometheus)"
go test -count=1 ./...
