#!/usr/bin/env bash
# End-to-end check of the documented Slurm job array (docs/slurm/sweep.sbatch) on a one-node
# Slurm cluster started here from Debian's packages: the sharded sweep, merged with
# `dcsim merge`, must equal the same sweep run in one go. Needs root (it configures and starts
# munged, slurmctld and slurmd) and a release build of dcsim in target/release.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
HOST=$(hostname -s)
CPUS=$(nproc)

mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=dcsim-ci
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$HOST CPUs=$CPUS State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

chown munge:munge /run/munge
if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 400 /etc/munge/munge.key
pgrep -x munged > /dev/null || runuser -u munge -- /usr/sbin/munged
pgrep -x slurmctld > /dev/null || slurmctld
pgrep -x slurmd > /dev/null || slurmd

for _ in $(seq 60); do
    if sinfo -h -o %T 2>/dev/null | grep -qE '^idle'; then break; fi
    sleep 1
done
sinfo

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/sweep.toml" <<CONF
name = "slurm-e2e"
schemes = ["TCP", "DCTCP"]
seeds = 2
[workload]
kind = "poisson"
load = 0.5
flows = 200
[sweep]
axes = [{ key = "workload.load", values = [0.3, 0.7] }]
[[plot]]
file = "fct.svg"
title = "avg FCT"
x = "workload.load"
y = "avg_fct_us"
CONF
cd "$WORK"
ln -s "$ROOT/target" target
# The documented script, as a 3-task array on this 2-core node (one core per task).
sbatch --wait --array=1-3 --cpus-per-task=1 --output="$WORK/task-%a.log" \
    "$ROOT/docs/slurm/sweep.sbatch" sweep.toml
test -z "$(ls results/slurm-e2e/summary.csv 2>/dev/null)"  # shards do not write the summary
ls results/slurm-e2e/summary.shard-{1,2,3}-of-3.csv > /dev/null
"$ROOT/target/release/dcsim" merge sweep.toml
"$ROOT/target/release/dcsim" run sweep.toml -q --output-dir whole > /dev/null
cmp results/slurm-e2e/summary.csv whole/slurm-e2e/summary.csv
echo "slurm job array: 3 shards merged = one run ($(($(wc -l < results/slurm-e2e/summary.csv) - 1)) summary rows)"
