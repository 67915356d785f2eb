#!/usr/bin/env bash
# Bring up (start) or tear down (stop) a single-node SLURM cluster bound to loopback.
# Needs root and Debian's slurm-wlm, slurmctld, slurmd, slurm-client and munge packages.
# The config must live at /etc/slurm/slurm.conf: the executor plugin's job-step helper clears
# SLURM_* variables, so a custom SLURM_CONF would not reach the nested srun.
set -euo pipefail
state=/tmp/histres-slurm
action=${1:?usage: cluster.sh start|stop}

stop() {
    for name in slurmd slurmctld munged; do
        if [ -f "$state/$name.pid" ]; then
            kill "$(cat "$state/$name.pid")" 2>/dev/null || true
        fi
    done
    sleep 1
    for name in slurmd slurmctld munged; do
        if [ -f "$state/$name.pid" ]; then
            kill -9 "$(cat "$state/$name.pid")" 2>/dev/null || true
            rm -f "$state/$name.pid"
        fi
    done
}

if [ "$action" = stop ]; then
    stop
    exit 0
fi

stop
# A fresh cluster each time: no jobs left queued by an earlier, interrupted run.
rm -rf "$state"
mkdir -p "$state"/{spool,ctld,log} /etc/slurm /run/munge /var/lib/munge /var/log/munge /etc/munge
chown -R munge:munge /run/munge /var/lib/munge /var/log/munge /etc/munge 2>/dev/null || true
if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    chown munge:munge /etc/munge/munge.key
    chmod 400 /etc/munge/munge.key
fi
timeout -k 5 30 runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
cp /run/munge/munged.pid "$state/munged.pid"

cpus=$(nproc)
memory=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=histres
SlurmctldHost=localhost(127.0.0.1)
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MinJobAge=600
ReturnToService=2
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

timeout -k 5 30 /usr/sbin/slurmctld -i
timeout -k 5 30 /usr/sbin/slurmd
for _ in $(seq 60); do
    if timeout -k 2 5 sinfo -h -o %T 2>/dev/null | grep -qx idle; then
        exit 0
    fi
    sleep 1
done
echo "SLURM did not come up; logs in $state/log" >&2
exit 1
