#!/usr/bin/env bash
# Integration test of integrations/slurm against a real Slurm.
#
# It starts a real one-node Slurm with four counted `gpu` GRES
# (.ci/lib/slurm.sh) and creates a tree of accounts and users: team-a (3)
# and team-b (1), and ai (10) with vision (2, users root and alice), nlp (2)
# and speech (Fairshare=parent, so its user is accounted beside vision and
# nlp). It runs short GPU jobs through sbatch, among them a job array, then
# runs astraea-slurm on the real sacct, sshare, sacctmgr and squeue output
# and checks GPU-seconds, rho and the SiteFactor lines against what was
# submitted, and every association's NormShares against Slurm's own sshare
# on the same cluster.
#
# The cluster's work directory, daemons, watchdog and the loud "NOT RUN"
# when Slurm cannot be installed or started are described in
# .ci/lib/slurm.sh. A run takes about a minute past the install.
#
# Environment:
#   ASTRAEA_SLURM_WORK     work directory (default ${TMPDIR:-/tmp}/astraea-slurm-it)
#   ASTRAEA_SLURM_CAPTURE  if set, a directory where the raw sacct, sshare,
#                          squeue and sinfo outputs are copied (test fixtures:
#                          integrations/slurm/testdata/real)
#   ASTRAEA_SLURM_LIMIT    watchdog in seconds (default 200)
#   ASTRAEA_SLURM_{CTLD,SLURMD,DBD,DB}PORT  ports (16817, 16818, 16819, 33061)
set -uo pipefail

cd "$(dirname "$0")/../.."
REPO=$(pwd)
NAME=slurm-it
WORK=${ASTRAEA_SLURM_WORK:-${TMPDIR:-/tmp}/astraea-slurm-it}
CAPTURE=${ASTRAEA_SLURM_CAPTURE:-}
LIMIT=${ASTRAEA_SLURM_LIMIT:-200}
. .ci/lib/slurm.sh

slurm_accounts() {
  slurm_account team-a 3
  slurm_account team-b 1
  slurm_account ai 10
  slurm_account vision 2 ai
  slurm_account nlp 2 ai
  slurm_account speech parent ai
  slurm_user team-a,team-b,vision,nlp,speech
  # alice has no Unix account and runs nothing; her share still counts.
  sacctmgr -i add user alice Account=vision Fairshare=3 >/dev/null || fail "add user alice"
}
slurm_start

say "building astraea-slurm"
(cd "$REPO" && go build -o "$WORK/bin/astraea-slurm" ./integrations/slurm/cmd/astraea-slurm) ||
  fail "go build of astraea-slurm failed"

# ---------------------------------------------------------------- jobs
now_local() { date +%Y-%m-%dT%H:%M:%S; }
submit() { sbatch --parsable -n1 -o /dev/null "$@" || fail "sbatch $*"; }
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
is_state() { [ "$(job_state "$1")" = "$2" ]; }
# accounted JOB STATE: slurmdbd, which sacct reads, records job starts and
# ends a little after slurmctld does.
accounted() { [ "$(timeout 20 sacct -n -X -P -j "$1" -o State | tail -n 1)" = "$2" ]; }
all_done() {
  local j
  for j in "$@"; do is_state "$j" COMPLETED && accounted "$j" COMPLETED || return 1; done
}

T0=$(now_local)
sleep 1
# team-a: 2 GPUs × 5 s; team-b: 1 GPU × 4 s, and 1 GPU × 6 s after a requeue
J1=$(submit -A team-a --gres=gpu:2 --wrap 'sleep 5')
J2=$(submit -A team-b --gres=gpu:1 --wrap 'sleep 4')
J4=$(submit -A team-b --gres=gpu:1 --requeue --wrap 'sleep 6')
TIMEOUT=30 wait_for is_state "$J4" RUNNING || fail "job $J4 did not start"
scontrol requeue "$J4" || fail "scontrol requeue $J4"
# Slurm holds a requeued job back for a while (its begin time moves on);
# once it is pending again, let it start at once.
TIMEOUT=30 wait_for is_state "$J4" PENDING || fail "job $J4 was not requeued"
scontrol update JobId="$J4" StartTime=now || fail "releasing requeued job $J4"
# team-a: 1 GPU × 3 s
J3=$(submit -A team-a --gres=gpu:1 --wrap 'sleep 3')
# speech (Fairshare=parent): an array of 3 tasks, 1 GPU × 2 s each; nlp:
# 1 GPU × 3 s
JA=$(submit -A speech --array=0-2 --gres=gpu:1 --wrap 'sleep 2')
J8=$(submit -A nlp --gres=gpu:1 --wrap 'sleep 3')
array_done() {
  [ "$(timeout 20 sacct -n -X -P -j "$1" -o State | grep -c '^COMPLETED$')" = 3 ]
}
TIMEOUT=90 wait_for all_done "$J1" "$J2" "$J3" "$J4" "$J8" ||
  fail "jobs did not complete: $(squeue -h -o '%i %T %r' 2>&1)"
TIMEOUT=60 wait_for array_done "$JA" || fail "array job $JA did not complete: $(squeue -h -o '%i %T %r' 2>&1)"
sleep 1
T1=$(now_local)
say "finished jobs from $T0 to $T1"

# One job still running when the accounting is taken (billed up to -now),
# and two pending ones for the SiteFactor updates.
J5=$(submit -A team-a --gres=gpu:1 --wrap 'sleep 120')
J6=$(submit -A team-a --gres=gpu:1 --begin=now+3600 --wrap 'sleep 1')
J7=$(submit -A team-b --gres=gpu:2 --hold --wrap 'sleep 1')
# A gang that cannot fit while J5 holds a GPU, for the why-it-waits column.
J9=$(submit -A nlp --gres=gpu:4 --hold --wrap 'sleep 1')
TIMEOUT=30 wait_for accounted "$J5" RUNNING || fail "job $J5 did not start"
OUT=$WORK/out
# A cron-like first run saves its ledger while job J5 runs; the second
# reads only sacct -S since then (see the -state checks below).
TM=$(now_local)
timeout 60 sacct -a -X -D -P -o JobIDRaw,Account,AllocTRES,ReqTRES,Submit,Start,End,State,User -S "$T0" >"$OUT/sacct-first.txt" || fail sacct
sleep 3

timeout 60 sacct -a -X -D -P -o JobIDRaw,Account,AllocTRES,ReqTRES,Submit,Start,End,State,User -S "$T0" >"$OUT/sacct.txt" || fail sacct
NOW=$(now_local)
timeout 60 sacct -a -X -D -P -o JobIDRaw,Account,AllocTRES,ReqTRES,Submit,Start,End,State,User -S "$TM" >"$OUT/sacct-since.txt" || fail sacct
timeout 60 sshare -a -P >"$OUT/sshare.txt" || fail sshare
timeout 60 sacctmgr -P show assoc format=Account,User,ParentName,Share >"$OUT/assoc.txt" || fail sacctmgr
timeout 60 squeue -h -t PD -o '%i|%a|%b|%u|%P' >"$OUT/squeue.txt" || fail squeue
timeout 60 sinfo -h -N -O 'NodeHost:|,Partition:|,Gres:|,GresUsed:' >"$OUT/sinfo.txt" || fail sinfo
printf 'T0=%s\nT1=%s\nTM=%s\nNOW=%s\nTZ=%s\nJOBS=%s\n' "$T0" "$T1" "$TM" "$NOW" "$(date +%Z)" "$J1 $J2 $J3 $J4 $J5 $J6 $J7 $J8 ${JA}_[0-2] $J9" >"$OUT/times.txt"
if [ -n "$CAPTURE" ]; then
  mkdir -p "$CAPTURE" && cp "$OUT"/*.txt "$CAPTURE"/ && say "captured outputs in $CAPTURE"
fi
scancel "$J5" 2>/dev/null

# ---------------------------------------------------------------- checks
AS=$WORK/bin/astraea-slurm
COMMON=(-sacct "$OUT/sacct.txt" -sshare "$OUT/sshare.txt" -sinfo "$OUT/sinfo.txt" -tz Local -now "$NOW")
timeout 60 "$AS" "${COMMON[@]}" -mode quota -from "$T0" -to "$T1" -format csv >"$OUT/window.csv" || fail "astraea-slurm (window)"
timeout 60 "$AS" "${COMMON[@]}" -mode quota -format csv >"$OUT/now.csv" || fail "astraea-slurm (up to now)"
timeout 60 "$AS" "${COMMON[@]}" -mode quota -from "$T0" -to "$T1" >"$OUT/window.txt" || fail "astraea-slurm (text)"
cat "$OUT/window.txt"

secs() { date -d "$1" +%s; }
W=$(( $(secs "$T1") - $(secs "$T0") ))
RUN5=$(( $(secs "$NOW") - $(secs "$T1") ))
# field CSV ACCOUNT USER COLUMN: the column of the row of that association
# (USER empty: the account's own row).
field() { awk -F, -v a="$2" -v u="$3" -v c="$4" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR>1&&$1==a&&$(h["user"])==u{print $(h[c])}' "$1"; }
# slurm_norm ACCOUNT USER: NormShares as Slurm's sshare printed it.
slurm_norm() { awk -F'|' -v a="$1" -v u="$2" 'NR>1{x=$1; gsub(/ /,"",x); if(x==a&&$2==u)print $4}' "$OUT/sshare.txt"; }
# check NAME VALUE LOW HIGH
check() {
  if awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN{exit !(v>=lo-1e-9 && v<=hi+1e-9)}'; then
    say "ok   $1 = $2 (expected $3 .. $4)"
  else
    fail "$1 = $2, expected $3 .. $4"
  fi
}
near() { awk -v x="$1" -v d="$2" 'BEGIN{printf "%.6f %.6f", x-d, x+d}'; }

# NormShares: every association sshare lists (but root) must have ours,
# equal to sshare's to its 6 printed digits.
norm_check() { # CSV LABEL
  local n=0 acct user want got
  while IFS='|' read -r acct user _ want _; do
    acct=${acct// /}
    [ "$acct" = root ] && [ -z "$user" ] && continue
    got=$(field "$1" "$acct" "$user" norm_shares)
    [ -n "$got" ] || fail "$2: no row for $acct|$user (sshare NormShares $want)"
    awk -v g="$got" -v w="$want" 'BEGIN{exit !(g-w < 5.1e-7 && w-g < 5.1e-7)}' ||
      fail "$2: NormShares of $acct|$user = $got, sshare says $want"
    say "ok   $2 NormShares $acct|$user = $got (sshare $want)"
    n=$((n + 1))
  done < <(tail -n +2 "$OUT/sshare.txt")
  [ "$n" -ge 10 ] || fail "$2: only $n associations compared"
}
norm_check "$OUT/window.csv" "sshare tree"
timeout 60 "$AS" -sacct "$OUT/sacct.txt" -assoc "$OUT/assoc.txt" -sinfo "$OUT/sinfo.txt" -tz Local -now "$NOW" \
  -mode quota -from "$T0" -to "$T1" -format csv >"$OUT/assoc.csv" || fail "astraea-slurm -assoc"
norm_check "$OUT/assoc.csv" "sacctmgr tree"
grep -q '^ *speech|root|1|0.200000|' "$OUT/sshare.txt" || fail "sshare: speech|root is not 0.200000 (Fairshare=parent not applied?)"

ua=$(field "$OUT/window.csv" team-a "" used_gpu_seconds)
ub=$(field "$OUT/window.csv" team-b "" used_gpu_seconds)
us=$(field "$OUT/window.csv" speech root used_gpu_seconds)
un=$(field "$OUT/window.csv" nlp root used_gpu_seconds)
uai=$(field "$OUT/window.csv" ai "" used_gpu_seconds)
oa=$(field "$OUT/window.csv" team-a "" owed_gpu_seconds)
ob=$(field "$OUT/window.csv" team-b "" owed_gpu_seconds)
oar=$(field "$OUT/window.csv" team-a root owed_gpu_seconds)
ra=$(field "$OUT/window.csv" team-a "" rho)
rb=$(field "$OUT/window.csv" team-b "" rho)
# Submitted: team-a 2×5 + 1×3 = 13 GPU·s; team-b 1×4 + 1×6 (+ the requeued
# run's first seconds) = 10; speech's array 3 × 1×2 = 6; nlp 1×3. Slurm
# rounds times to seconds: allow −1 s and +2 s per job and GPU, and 3 s
# more for the run cut short by the requeue.
check "team-a GPU-seconds" "$ua" $(( 13 - 3 )) $(( 13 + 6 ))
check "team-b GPU-seconds" "$ub" $(( 10 - 2 )) $(( 10 + 4 + 3 ))
check "speech|root GPU-seconds (array)" "$us" $(( 6 - 3 )) $(( 6 + 6 ))
check "nlp|root GPU-seconds" "$un" $(( 3 - 1 )) $(( 3 + 2 ))
check "ai GPU-seconds (its subtree)" "$uai" "$(awk -v a="$us" -v b="$un" 'BEGIN{print a+b}')" "$(awk -v a="$us" -v b="$un" 'BEGIN{print a+b}')"
# Quota mode (Eq. 16) on 4 GPUs: a top-level account is owed 4 GPUs ×
# Slurm's NormShares × window (to sshare's 6 digits and our 3), and a
# sole user all of its account's.
check "team-a owed" "$oa" $(near "$(awk -v n="$(slurm_norm team-a "")" -v w="$W" 'BEGIN{print 4*n*w}')" "$(awk -v w="$W" 'BEGIN{print 0.0006 + 4e-6*w}')")
check "team-b owed" "$ob" $(near "$(awk -v n="$(slurm_norm team-b "")" -v w="$W" 'BEGIN{print 4*n*w}')" "$(awk -v w="$W" 'BEGIN{print 0.0006 + 4e-6*w}')")
check "team-a|root owed" "$oar" $(near "$oa" 0.001)
# rho = used ÷ owed, to its 4 printed digits and the 3 of owed.
rho_near() { near "$(awk -v u="$1" -v o="$2" 'BEGIN{print u/o}')" "$(awk -v u="$1" -v o="$2" 'BEGIN{print 0.0001 + u/o*0.0006/o}')"; }
check "team-a rho" "$ra" $(rho_near "$ua" "$oa")
check "team-b rho" "$rb" $(rho_near "$ub" "$ob")
# Demand mode (Eq. 8): owed = ∫ min(demand, quota), so 0 < owed <= quota owed,
# and the GPU-seconds used do not depend on the mode.
timeout 60 "$AS" "${COMMON[@]}" -mode demand -from "$T0" -to "$T1" -format csv >"$OUT/demand.csv" ||
  fail "astraea-slurm (demand)"
check "team-a owed (demand)" "$(field "$OUT/demand.csv" team-a "" owed_gpu_seconds)" 1 "$oa"
check "team-b owed (demand)" "$(field "$OUT/demand.csv" team-b "" owed_gpu_seconds)" 1 "$ob"
check "team-a GPU-seconds (demand)" "$(field "$OUT/demand.csv" team-a "" used_gpu_seconds)" "$ua" "$ua"
# The running job is billed up to -now: 1 GPU from its start (T1 .. T1+3 s).
ua2=$(field "$OUT/now.csv" team-a "" used_gpu_seconds)
check "team-a GPU-seconds up to now" "$(awk -v a="$ua2" -v b="$ua" 'BEGIN{print a-b}')" $(( RUN5 - 4 )) "$RUN5"

# -state: the first run saves its ledger at TM (J5 running), the second
# continues it with sacct -S TM only; every row must equal the one run
# over the whole accounting (now.csv), J5 counted once, nothing lost.
ST=$WORK/ledger.state
rm -f "$ST"
timeout 60 "$AS" -state "$ST" -sacct "$OUT/sacct-first.txt" -sshare "$OUT/sshare.txt" -sinfo "$OUT/sinfo.txt" -tz Local -now "$TM" \
  -mode quota >/dev/null || fail "astraea-slurm -state (first run)"
[ "$(timeout 10 "$AS" -state "$ST" -state-time -tz Local)" = "$TM" ] || fail "-state-time is not $TM"
timeout 60 "$AS" -state "$ST" -sacct "$OUT/sacct-since.txt" -sshare "$OUT/sshare.txt" -sinfo "$OUT/sinfo.txt" -tz Local -now "$NOW" \
  -mode quota -format csv >"$OUT/resumed.csv" || fail "astraea-slurm -state (second run)"
rows=0
while IFS=, read -r acct _ _ _ _ used owed _ _ user _; do
  [ "$acct" = account ] && continue
  want_used=$(field "$OUT/now.csv" "$acct" "$user" used_gpu_seconds)
  want_owed=$(field "$OUT/now.csv" "$acct" "$user" owed_gpu_seconds)
  awk -v a="$used" -v b="$want_used" -v c="$owed" -v d="$want_owed" 'BEGIN{exit !(a-b<0.002&&b-a<0.002&&c-d<0.002&&d-c<0.002)}' ||
    fail "-state: $acct|$user used $used owed $owed, one replay $want_used $want_owed"
  rows=$((rows + 1))
done <"$OUT/resumed.csv"
[ "$rows" -ge 13 ] || fail "-state: only $rows rows compared"
say "ok   -state: $rows rows of the resumed ledger equal one replay (team-a used $(field "$OUT/resumed.csv" team-a "" used_gpu_seconds))"

# SiteFactor: a pending job gets the factor of its association's rank
# among the ranked leaves: round(1000 × (n − rank) ÷ (n − 1)).
timeout 60 "$AS" "${COMMON[@]}" -mode quota -squeue "$OUT/squeue.txt" -sitefactor-max 1000 -report "$OUT/pending.txt" >"$OUT/sitefactor.txt" ||
  fail "astraea-slurm -squeue"
cat "$OUT/sitefactor.txt"
sed -n '/^partition /,$p' "$OUT/pending.txt"
# Capacity by partition: 4 GPUs, J5 holds 1. J6 and J7 (1 + 2 GPUs) fit
# in the 3 free; J9 (4) cannot, whatever the order.
grep -qx 'partition debug: 4 GPUs on 1 node, 3 free' "$OUT/pending.txt" || fail "partition capacity line"
why() { awk -v j="$1" '$1==j{sub(/^([^ ]+ +){5}/, ""); print}' "$OUT/pending.txt"; }
case "$(why "$J6")" in "next in fair order"*) ;; *) fail "why $J6 waits: $(why "$J6")" ;; esac
case "$(why "$J7")" in "next in fair order"*) ;; *) fail "why $J7 waits: $(why "$J7")" ;; esac
case "$(why "$J9")" in "does not fit: needs 4 GPUs"* | "cluster full"*) ;; *) fail "why $J9 waits: $(why "$J9")" ;; esac
say "ok   why they wait: $J6: $(why "$J6"); $J7: $(why "$J7"); $J9: $(why "$J9")"
factor() {
  awk -F, -v a="$2" -v u="$3" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $(h["rank"])>0{n++} $1==a&&$(h["user"])==u{r=$(h["rank"])}
    END{if(n==1)print 1000; else printf "%d\n", int(1000*(n-r)/(n-1)+0.5)}' "$1"
}
fa=$(factor "$OUT/now.csv" team-a root)
fb=$(factor "$OUT/now.csv" team-b root)
grep -qx "scontrol update JobId=$J6 SiteFactor=$fa" "$OUT/sitefactor.txt" || fail "SiteFactor line of job $J6 (team-a|root, want $fa)"
grep -qx "scontrol update JobId=$J7 SiteFactor=$fb" "$OUT/sitefactor.txt" || fail "SiteFactor line of job $J7 (team-b|root, want $fb)"
say "ok   SiteFactor lines ($J6: $fa, $J7: $fb)"
timeout 60 "$AS" "${COMMON[@]}" -mode quota -squeue "$OUT/squeue.txt" -sitefactor-max 1000 -apply >/dev/null ||
  fail "astraea-slurm -apply"
# With every other priority weight at 0, the site factor is the priority.
prio=$(squeue -h -j "$J6" -o '%Q')
# (Slurm keeps a pending job's priority at least 1.)
check "priority of job $J6 after -apply" "$prio" "$fa" "$(( fa > 1 ? fa : 1 ))"
scancel "$J6" "$J7" "$J9" 2>/dev/null

slurm_finish
