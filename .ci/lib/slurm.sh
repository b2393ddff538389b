# shellcheck shell=bash
# A real one-node Slurm for integration tests, to be sourced.
#
# slurm_start installs Debian's Slurm (slurmctld, slurmd, slurmdbd with
# MariaDB for accounting, munge) when it is missing, configures a one-node
# cluster "astraea" on 127.0.0.1 with four counted `gpu` GRES and starts
# the daemons directly (no init system needed) on their own ports; the
# caller adds the accounts it needs (slurm_account, slurm_user) in a
# function slurm_accounts and then submits jobs.
# Everything lives under one work directory (configuration, MariaDB data,
# munge key, spool, logs, pid files), and the daemons are stopped on exit,
# also after a failure. A munged already serving the default socket is
# reused (Slurm's clients only talk to that socket). Every wait has a
# timeout, and a watchdog fails the run after $LIMIT seconds past the
# install. Starting again starts afresh.
#
# If Slurm cannot be installed or started, unavailable says so loudly and
# exits 1 under CI=true, 0 otherwise.
#
# The caller sets, before sourcing:
#   NAME   the prefix of the messages (slurm-it)
#   WORK   the work directory
#   LIMIT  the watchdog in seconds
# and may set the ports ASTRAEA_SLURM_{CTLD,SLURMD,DBD,DB}PORT (16817,
# 16818, 16819, 33061). After slurm_start, SLURM_CONF names the cluster's
# configuration and NODE its node.

T_START=$(date +%s)

say() { echo "$NAME: $*"; }

unavailable() {
  echo "############################################################" >&2
  echo "## $NAME integration test NOT RUN: $*" >&2
  echo "############################################################" >&2
  stop_daemons
  [ -n "${WATCHDOG:-}" ] && kill "$WATCHDOG" 2>/dev/null
  if [ "${CI:-}" = true ]; then exit 1; fi
  exit 0
}

fail() {
  echo "$NAME: FAIL: $*" >&2
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

# slurm_install installs Slurm, munge and MariaDB from Debian when one of
# their programs is missing.
slurm_install() {
  local b need_install=0
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
}

# slurm_start installs Slurm if need be and starts the cluster: slurmdbd,
# slurmctld and slurmd, with the cluster known to the accounting. When the
# caller defines a function slurm_accounts, it is called between slurmdbd
# and slurmctld, so that slurmctld starts with the accounts it adds.
slurm_start() {
  slurm_install
  command -v go >/dev/null 2>&1 || unavailable "go is not on PATH"

  # ---------------------------------------------------------------- layout
  stop_daemons
  rm -rf "$WORK"
  mkdir -p "$WORK"/{etc,run,log,state,spool,db,munge,out,bin,dev}
  # four stand-in GPU device files: slurmd counts them (it logs that they
  # are not device nodes, which is harmless); no job opens them
  touch "$WORK"/dev/nvidia{0,1,2,3}
  chmod 700 "$WORK/munge"
  trap 'stop_daemons' EXIT
  # A watchdog bounds everything after the install: on expiry the script
  # fails and the trap stops the daemons.
  ( trap 'kill $sp 2>/dev/null; exit 0' TERM; sleep "$LIMIT" & sp=$!; wait $sp && kill -TERM $$ ) 2>/dev/null &
  WATCHDOG=$!
  trap 'fail "timed out after $LIMIT s"' TERM

  DBPORT=${ASTRAEA_SLURM_DBPORT:-33061}
  NODE=localhost
  export SLURM_CONF=$WORK/etc/slurm.conf

  # ---------------------------------------------------------------- munge
  # Slurm's clients talk to munged on its default socket, so a munged
  # already serving there (the machine's own) is used as it is; otherwise
  # ours is started on that socket with a key of our own.
  local SOCK=/run/munge/munge.socket.2
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
  if declare -F slurm_accounts >/dev/null; then
    slurm_accounts
    say "accounts created after $(( $(date +%s) - T_START )) s"
  fi
  slurmctld -i >>"$WORK/log/slurmctld.log" 2>&1 || unavailable "slurmctld does not start"
  TIMEOUT=40 wait_for scontrol ping || unavailable "slurmctld does not answer"
  slurmd -N "$NODE" >>"$WORK/log/slurmd.log" 2>&1 || unavailable "slurmd does not start"
  TIMEOUT=40 wait_for slurm_node_up || unavailable "node $NODE did not become idle: $(sinfo -h -N -o '%T %E' 2>&1)"
  say "cluster up after $(( $(date +%s) - T_START )) s"
}

slurm_node_up() { sinfo -h -N -o '%T' | grep -q -E '^(idle|mixed|allocated)'; }

# slurm_account NAME FAIRSHARE [PARENT] adds an account with that share
# (a number or "parent"), under PARENT (default root).
slurm_account() {
  sacctmgr -i add account "$1" Fairshare="$2" Parent="${3:-root}" Description="$1" Organization=astraea >/dev/null ||
    fail "add account $1"
}

# slurm_user ACCOUNT,... lets root submit to those accounts, the first by
# default.
slurm_user() {
  sacctmgr -i add user root Account="$1" DefaultAccount="${1%%,*}" >/dev/null || fail "add user root"
}

# slurm_finish stops the watchdog and the daemons and removes the bulky
# state, keeping the logs and outputs.
slurm_finish() {
  kill "$WATCHDOG" 2>/dev/null
  stop_daemons
  rm -rf "$WORK/db" "$WORK/state" "$WORK/spool"
  say "PASS in $(( $(date +%s) - T_START )) s"
}
