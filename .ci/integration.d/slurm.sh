#!/usr/bin/env bash
# Integration test of examples/slurm against a real Slurm.
#
# It installs Debian's Slurm (slurmctld, slurmd, slurmdbd with MariaDB for
# accounting, munge), configures a one-node cluster on 127.0.0.1 with four
# counted `gpu` GRES, creates two accounts with different shares, runs short
# GPU jobs through sbatch, then runs astraea-slurm on the real sacct, sshare
# and squeue output and checks GPU-seconds, rho and the SiteFactor lines
# against what was submitted.
#
# Everything lives under one work directory (configuration, MariaDB data,
# munge key, spool, logs, pid files); the daemons are started directly (no
# init system needed) on their own ports and are stopped on exit, also after
# a failure. A munged already serving the default socket is reused (Slurm's
# clients only talk to that socket). Every wait has a timeout, and a
# watchdog fails the run after ASTRAEA_SLURM_LIMIT seconds past the install
# (a run takes about a minute). Running it again starts afresh.
#
# If Slurm cannot be installed or started, the script says so loudly and
# exits 1 under CI=true, 0 otherwise.
#
# Environment:
#   ASTRAEA_SLURM_WORK     work directory (default ${TMPDIR:-/tmp}/astraea-slurm-it)
#   ASTRAEA_SLURM_CAPTURE  if set, a directory where the raw sacct, sshare,
#                          squeue and sinfo outputs are copied (test fixtures:
#                          examples/slurm/testdata/real)
#   ASTRAEA_SLURM_LIMIT    watchdog in seconds (default 150)
#   ASTRAEA_SLURM_{CTLD,SLURMD,DBD,DB}PORT  ports (16817, 16818, 16819, 33061)
set -uo pipefail

cd "$(dirname "$0")/../.."
REPO=$(pwd)
WORK=${ASTRAEA_SLURM_WORK:-${TMPDIR:-/tmp}/astraea-slurm-it}
CAPTURE=${ASTRAEA_SLURM_CAPTURE:-}
T_START=$(date +%s)

say() { echo "slurm-it: $*"; }

unavailable() {
  echo "############################################################" >&2
  echo "## slurm integration test NOT RUN: $*" >&2
  echo "############################################################" >&2
  stop_daemons
  [ -n "${WATCHDOG:-}" ] && kill "$WATCHDOG" 2>/dev/null
  if [ "${CI:-}" = true ]; then exit 1; fi
  exit 0
}

fail() {
  echo "slurm-it: FAIL: $*" >&2
  for f in "$WORK"/log/*.log; do
    [ -e "$f" ] || continue
    echo "---- tail $f" >&2
    tail -n 20 "$f" >&2
  done
  stop_daemons
  [ -n "${WATCHDOG:-}" ] && kill "$WATCHDOG" 2>/dev/null
  exit 1
}

# stop_daemons stops every daemon this script started, by the pid files it
# wrote in the work directory (also those of an earlier, interrupted run).
stop_daemons() {
  local p pid
  for p in slurmd slurmctld slurmdbd mariadb munged; do
    [ -f "$WORK/run/$p.pid" ] || continue
    pid=$(cat "$WORK/run/$p.pid" 2>/dev/null)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -9 "$pid" 2>/dev/null
    fi
    rm -f "$WORK/run/$p.pid"
  done
}

# wait_for CMD... retries CMD every half second for at most $TIMEOUT seconds.
wait_for() {
  local deadline=$(( $(date +%s) + ${TIMEOUT:-30} ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

# ---------------------------------------------------------------- install
need_install=0
for b in slurmctld slurmd slurmdbd sacct sshare squeue sinfo sbatch sacctmgr munged mariadbd mariadb-install-db; do
  command -v "$b" >/dev/null 2>&1 || need_install=1
done
if [ "$need_install" = 1 ]; then
  if [ "$(id -u)" != 0 ]; then unavailable "Slurm is not installed and we are not root"; fi
  say "installing Debian's Slurm, munge and MariaDB"
  export DEBIAN_FRONTEND=noninteractive
  timeout 60 apt-get update -q >/dev/null 2>&1 || unavailable "apt-get update failed"
  timeout 150 apt-get install -y -q slurmctld slurmd slurmdbd slurm-client munge mariadb-server \
    >"${TMPDIR:-/tmp}/astraea-slurm-apt.log" 2>&1 ||
    unavailable "apt-get install of slurm failed (see ${TMPDIR:-/tmp}/astraea-slurm-apt.log)"
fi
command -v go >/dev/null 2>&1 || unavailable "go is not on PATH"

# ---------------------------------------------------------------- layout
stop_daemons
rm -rf "$WORK"
mkdir -p "$WORK"/{etc,run,log,state,spool,db,munge,out,bin,dev}
# four stand-in GPU device files: slurmd counts them (it logs that they are
# not device nodes, which is harmless); no job opens them
touch "$WORK"/dev/nvidia{0,1,2,3}
chmod 700 "$WORK/munge"
trap 'stop_daemons' EXIT
# A watchdog bounds everything after the install (about a minute when all
# goes well): on expiry the script fails and the trap stops the daemons.
LIMIT=${ASTRAEA_SLURM_LIMIT:-150}
( trap 'kill $sp 2>/dev/null; exit 0' TERM; sleep "$LIMIT" & sp=$!; wait $sp && kill -TERM $$ ) 2>/dev/null &
WATCHDOG=$!
trap 'fail "timed out after $LIMIT s"' TERM

DBPORT=${ASTRAEA_SLURM_DBPORT:-33061}
NODE=localhost
export SLURM_CONF=$WORK/etc/slurm.conf

say "building astraea-slurm"
(cd "$REPO" && go build -o "$WORK/bin/astraea-slurm" ./examples/slurm/cmd/astraea-slurm) ||
  fail "go build of astraea-slurm failed"

# ---------------------------------------------------------------- munge
# Slurm's clients talk to munged on its default socket, so a munged already
# serving there (the machine's own) is used as it is; otherwise ours is
# started on that socket with a key of our own.
SOCK=/run/munge/munge.socket.2
if ! (munge -n -S "$SOCK" | unmunge -S "$SOCK") >/dev/null 2>&1; then
  mkdir -p /run/munge
  dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1 count=128 status=none
  chmod 400 "$WORK/munge/munge.key"
  munged --force --key-file="$WORK/munge/munge.key" --socket="$SOCK" \
    --pid-file="$WORK/run/munged.pid" --log-file="$WORK/log/munged.log" \
    --seed-file="$WORK/munge/seed" >>"$WORK/log/munged.log" 2>&1 ||
    unavailable "munged does not start"
  TIMEOUT=10 wait_for sh -c "munge -n -S '$SOCK' | unmunge -S '$SOCK'" || unavailable "munged does not answer"
fi

# ---------------------------------------------------------------- MariaDB
mariadb-install-db --no-defaults --auth-root-authentication-method=normal --user=root \
  --datadir="$WORK/db" >"$WORK/log/mariadb-install.log" 2>&1 ||
  unavailable "mariadb-install-db failed"
mariadbd --no-defaults --user=root --datadir="$WORK/db" --socket="$WORK/run/mysqld.sock" \
  --port="$DBPORT" --bind-address=127.0.0.1 --pid-file="$WORK/run/mariadb.pid" \
  --innodb-buffer-pool-size=64M --log-error="$WORK/log/mariadb.log" >/dev/null 2>&1 &
TIMEOUT=30 wait_for mariadb --no-defaults -S "$WORK/run/mysqld.sock" -uroot -e 'select 1' ||
  unavailable "MariaDB did not start"
mariadb --no-defaults -S "$WORK/run/mysqld.sock" -uroot <<'SQL' || fail "creating the slurm database user"
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'astraea';
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'astraea';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
SQL

# ---------------------------------------------------------------- Slurm config
cat >"$WORK/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=${ASTRAEA_SLURM_DBDPORT:-16819}
SlurmUser=root
LogFile=$WORK/log/slurmdbd.log
PidFile=$WORK/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DBPORT
StorageUser=slurm
StoragePass=astraea
StorageLoc=slurm_acct_db
EOF
chmod 600 "$WORK/etc/slurmdbd.conf"

cat >"$WORK/etc/slurm.conf" <<EOF
ClusterName=astraea
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=${ASTRAEA_SLURM_CTLDPORT:-16817}
SlurmdPort=${ASTRAEA_SLURM_SLURMDPORT:-16818}
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/run/slurmctld.pid
SlurmdPidFile=$WORK/run/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
PriorityType=priority/multifactor
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=${ASTRAEA_SLURM_DBDPORT:-16819}
AccountingStorageTRES=gres/gpu
AccountingStorageEnforce=associations
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
SlurmdParameters=config_overrides
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=8 RealMemory=1000 Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF

cat >"$WORK/etc/gres.conf" <<EOF
AutoDetect=off
Name=gpu File=$WORK/dev/nvidia[0-3]
EOF

# ---------------------------------------------------------------- daemons
slurmdbd >>"$WORK/log/slurmdbd.log" 2>&1 || unavailable "slurmdbd does not start"
say "slurmdbd started after $(( $(date +%s) - T_START )) s"
TIMEOUT=40 wait_for sacctmgr -n list cluster || unavailable "slurmdbd does not answer"
sacctmgr -i add cluster astraea >/dev/null 2>&1
sacctmgr -i add account team-a Fairshare=3 Description=a Organization=astraea >/dev/null || fail "add account team-a"
sacctmgr -i add account team-b Fairshare=1 Description=b Organization=astraea >/dev/null || fail "add account team-b"
sacctmgr -i add user root Account=team-a,team-b DefaultAccount=team-a >/dev/null || fail "add user root"

say "accounts created after $(( $(date +%s) - T_START )) s"
slurmctld -i >>"$WORK/log/slurmctld.log" 2>&1 || unavailable "slurmctld does not start"
TIMEOUT=40 wait_for scontrol ping || unavailable "slurmctld does not answer"
slurmd -N "$NODE" >>"$WORK/log/slurmd.log" 2>&1 || unavailable "slurmd does not start"
node_idle() { sinfo -h -N -o '%T' | grep -q -E '^(idle|mixed|allocated)'; }
TIMEOUT=40 wait_for node_idle || unavailable "node $NODE did not become idle: $(sinfo -h -N -o '%T %E' 2>&1)"
say "cluster up after $(( $(date +%s) - T_START )) s"

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
TIMEOUT=90 wait_for all_done "$J1" "$J2" "$J3" "$J4" ||
  fail "jobs did not complete: $(squeue -h -o '%i %T %r' 2>&1)"
sleep 1
T1=$(now_local)
say "finished jobs from $T0 to $T1"

# One job still running when the accounting is taken (billed up to -now),
# and two pending ones for the SiteFactor updates.
J5=$(submit -A team-a --gres=gpu:1 --wrap 'sleep 120')
J6=$(submit -A team-a --gres=gpu:1 --begin=now+3600 --wrap 'sleep 1')
J7=$(submit -A team-b --gres=gpu:2 --hold --wrap 'sleep 1')
TIMEOUT=30 wait_for accounted "$J5" RUNNING || fail "job $J5 did not start"
sleep 3

OUT=$WORK/out
timeout 60 sacct -a -X -D -P -o JobIDRaw,Account,AllocTRES,ReqTRES,Submit,Start,End,State -S "$T0" >"$OUT/sacct.txt" || fail sacct
NOW=$(now_local)
timeout 60 sshare -a -P >"$OUT/sshare.txt" || fail sshare
timeout 60 squeue -h -t PD -o '%i|%a|%b' >"$OUT/squeue.txt" || fail squeue
timeout 60 sinfo -h -N -o '%n|%G' >"$OUT/sinfo.txt" || fail sinfo
printf 'T0=%s\nT1=%s\nNOW=%s\nTZ=%s\nJOBS=%s\n' "$T0" "$T1" "$NOW" "$(date +%Z)" "$J1 $J2 $J3 $J4 $J5 $J6 $J7" >"$OUT/times.txt"
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
field() { awk -F, -v a="$2" -v c="$3" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR>1&&$1==a{print $(h[c])}' "$1"; }
# check NAME VALUE LOW HIGH
check() {
  if awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN{exit !(v>=lo-1e-9 && v<=hi+1e-9)}'; then
    say "ok   $1 = $2 (expected $3 .. $4)"
  else
    fail "$1 = $2, expected $3 .. $4"
  fi
}
ua=$(field "$OUT/window.csv" team-a used_gpu_seconds)
ub=$(field "$OUT/window.csv" team-b used_gpu_seconds)
oa=$(field "$OUT/window.csv" team-a owed_gpu_seconds)
ob=$(field "$OUT/window.csv" team-b owed_gpu_seconds)
ra=$(field "$OUT/window.csv" team-a rho)
rb=$(field "$OUT/window.csv" team-b rho)
# Submitted: team-a 2×5 + 1×3 = 13 GPU·s; team-b 1×4 + 1×6 (+ the requeued
# run's first seconds) = 10. Slurm rounds times to seconds: allow −1 s and
# +2 s per job and GPU, and 3 s more for the run cut short by the requeue.
check "team-a GPU-seconds" "$ua" $(( 13 - 3 )) $(( 13 + 6 ))
check "team-b GPU-seconds" "$ub" $(( 10 - 2 )) $(( 10 + 4 + 3 ))
# Quota mode (Eq. 16), shares 3:1 on 4 GPUs: owed = 3 and 1 GPUs × window.
check "team-a owed" "$oa" $(( 3 * W )) $(( 3 * W ))
check "team-b owed" "$ob" "$W" "$W"
check "team-a rho" "$ra" "$(awk -v u="$ua" -v o="$oa" 'BEGIN{printf "%.4f", u/o - 0.0001}')" "$(awk -v u="$ua" -v o="$oa" 'BEGIN{printf "%.4f", u/o + 0.0001}')"
check "team-b rho" "$rb" "$(awk -v u="$ub" -v o="$ob" 'BEGIN{printf "%.4f", u/o - 0.0001}')" "$(awk -v u="$ub" -v o="$ob" 'BEGIN{printf "%.4f", u/o + 0.0001}')"
# Demand mode (Eq. 8): owed = ∫ min(demand, quota), so 0 < owed <= quota owed,
# and the GPU-seconds used do not depend on the mode.
timeout 60 "$AS" "${COMMON[@]}" -mode demand -from "$T0" -to "$T1" -format csv >"$OUT/demand.csv" ||
  fail "astraea-slurm (demand)"
check "team-a owed (demand)" "$(field "$OUT/demand.csv" team-a owed_gpu_seconds)" 1 "$oa"
check "team-b owed (demand)" "$(field "$OUT/demand.csv" team-b owed_gpu_seconds)" 1 "$ob"
check "team-a GPU-seconds (demand)" "$(field "$OUT/demand.csv" team-a used_gpu_seconds)" "$ua" "$ua"
# The running job is billed up to -now: 1 GPU from its start (T1 .. T1+3 s).
ua2=$(field "$OUT/now.csv" team-a used_gpu_seconds)
check "team-a GPU-seconds up to now" "$(awk -v a="$ua2" -v b="$ua" 'BEGIN{print a-b}')" $(( RUN5 - 4 )) "$RUN5"

# SiteFactor: the account with the lower rho gets the maximum, the other 0.
timeout 60 "$AS" "${COMMON[@]}" -mode quota -squeue "$OUT/squeue.txt" -sitefactor-max 1000 >"$OUT/sitefactor.txt" ||
  fail "astraea-slurm -squeue"
cat "$OUT/sitefactor.txt"
first=$(awk -F, 'NR>1&&$9==1{print $1}' "$OUT/now.csv")
if [ "$first" = team-a ]; then fa=1000 fb=0; else fa=0 fb=1000; fi
grep -qx "scontrol update JobId=$J6 SiteFactor=$fa" "$OUT/sitefactor.txt" || fail "SiteFactor line of job $J6 (team-a)"
grep -qx "scontrol update JobId=$J7 SiteFactor=$fb" "$OUT/sitefactor.txt" || fail "SiteFactor line of job $J7 (team-b)"
say "ok   SiteFactor lines"
timeout 60 "$AS" "${COMMON[@]}" -mode quota -squeue "$OUT/squeue.txt" -sitefactor-max 1000 -apply >/dev/null ||
  fail "astraea-slurm -apply"
# With every other priority weight at 0, the site factor is the priority.
prio=$(squeue -h -j "$J6" -o '%Q')
check "priority of job $J6 after -apply" "$prio" 1000 1000
scancel "$J6" "$J7" 2>/dev/null

kill "$WATCHDOG" 2>/dev/null
stop_daemons
rm -rf "$WORK/db" "$WORK/state" "$WORK/spool"
say "PASS in $(( $(date +%s) - T_START )) s"
