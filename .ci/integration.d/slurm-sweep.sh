#!/usr/bin/env bash
# Integration test of astraea sweep as a real Slurm job array.
#
# It starts a real one-node Slurm (.ci/lib/slurm.sh), submits a small
# grid with the shipped deploy/sweep/astraea-sweep.sbatch as
# `sbatch --array=0-2`, waits for the three tasks, checks that each wrote
# its own part of the grid, merges the parts and checks that the merged
# table is byte for byte the table of the same grid run in one process.
# It then submits the array again: every point is recorded, so the tasks
# must succeed without writing anything (resumption). About a minute past
# the install.
#
# Environment:
#   ASTRAEA_SWEEP_WORK   work directory (default ${TMPDIR:-/tmp}/astraea-slurm-sweep)
#   ASTRAEA_SLURM_LIMIT  watchdog in seconds (default 240)
#   ASTRAEA_SLURM_{CTLD,SLURMD,DBD,DB}PORT  ports, as for slurm.sh
set -uo pipefail

cd "$(dirname "$0")/../.."
REPO=$(pwd)
NAME=slurm-sweep
WORK=${ASTRAEA_SWEEP_WORK:-${TMPDIR:-/tmp}/astraea-slurm-sweep}
LIMIT=${ASTRAEA_SLURM_LIMIT:-240}
. .ci/lib/slurm.sh

slurm_accounts() {
  slurm_account sweep 1
  slurm_user sweep
}
slurm_start

say "building astraea"
(cd "$REPO" && go build -o "$WORK/bin/astraea" ./simulate/cmd/astraea) || fail "go build of astraea failed"
AS=$WORK/bin/astraea
OUT=$WORK/out

# 3 leases × 2 policies × 2 seeds of a small synthetic workload: 12
# points, 4 per task.
cat >"$WORK/grid.txt" <<'GRID'
# a small grid for the job-array test
jobs = 300
overhead = false
lease = 10m..30m/10m
policy = astraea, tiresias-l
seed = 1, 2
GRID

array_state() { scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort | uniq -c; }
array_done() {
  local s
  s=$(scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u)
  [ -n "$s" ] && ! grep -q -E 'PENDING|RUNNING|CONFIGURING|COMPLETING|REQUEUED|SUSPENDED' <<<"$s"
}
# submit_array DIR submits the shipped script as a 3-task array writing to
# DIR, waits for its end and fails unless every task completed.
submit_array() {
  local job
  job=$(sbatch --parsable --array=0-2 --cpus-per-task=1 --mem-per-cpu=128M -o "$OUT/task-%A_%a.log" \
    --export=ALL,ASTRAEA="$AS" "$REPO/deploy/sweep/astraea-sweep.sbatch" -grid "$WORK/grid.txt" -out "$1") ||
    fail "sbatch --array"
  say "submitted array job $job"
  TIMEOUT=150 wait_for array_done "$job" || fail "array job $job did not end: $(array_state "$job")"
  local bad
  bad=$(scontrol -o show job "$job" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | grep -v -c '^COMPLETED$')
  if [ "$bad" != 0 ]; then
    for f in "$OUT"/task-"$job"_*.log; do echo "---- $f" >&2; cat "$f" >&2; done
    fail "array job $job: $bad tasks did not complete: $(array_state "$job")"
  fi
  tasks=$(scontrol -o show job "$job" | grep -c 'ArrayTaskId=')
  [ "$tasks" = 3 ] || fail "array job $job has $tasks tasks, want 3"
}

T0=$(date +%s)
submit_array "$OUT/array"
say "array of 3 tasks done in $(( $(date +%s) - T0 )) s"
for i in 0 1 2; do
  n=$(wc -l <"$OUT/array/part-$i-of-3.jsonl" 2>/dev/null || echo 0)
  [ "$n" = 4 ] || fail "task $i recorded $n points in part-$i-of-3.jsonl, want 4"
done
say "ok   each task recorded its 4 points"

timeout 120 "$AS" sweep -grid "$WORK/grid.txt" -out "$OUT/single" -quiet || fail "astraea sweep in one process"
timeout 60 "$AS" sweep merge -o "$OUT/array.csv" "$OUT/array" || fail "astraea sweep merge (array)"
timeout 60 "$AS" sweep merge -o "$OUT/single.csv" -figures=false "$OUT/single" || fail "astraea sweep merge (single)"
cmp "$OUT/array.csv" "$OUT/single.csv" || fail "the array's merged table differs from the single process's: $(diff "$OUT/array.csv" "$OUT/single.csv" | head -5)"
rows=$(( $(wc -l <"$OUT/array.csv") - 1 ))
[ "$rows" -ge 12 ] || fail "the merged table has $rows rows"
say "ok   merged table of the array = the single process's ($rows rows)"
for f in sweep_lease_jct_mean_seconds sweep_lease_overhead_direct sweep_lease_sharing_loss_jobs; do
  grep -q 'policy=tiresias-l' "$OUT/$f.svg" 2>/dev/null || fail "figure $f.svg missing or without its tiresias-l lines"
done
say "ok   lease figures drawn"

sum_before=$(cat "$OUT"/array/part-*.jsonl | md5sum)
submit_array "$OUT/array"
[ "$(cat "$OUT"/array/part-*.jsonl | md5sum)" = "$sum_before" ] || fail "the array submitted again changed the records"
say "ok   the array submitted again ran nothing"

slurm_finish
