#!/usr/bin/env bash
# A real single-node Slurm cluster (Debian's slurm-wlm and munge, started here in a folder of
# their own: proctrack/linuxproc, task/none, select/cons_tres) runs
# examples/nightly/rooftune-nightly.slurm on a job of eight small problems on the model device: an
# array of 4 shard tasks, then the merge task that depends on them.  The merged database's
# winners must equal an unsharded run's, each shard must have done its own quarter, and the
# report must be written.  Skipped with the reason where Slurm or munge is not installed or
# cannot start (not root, no free port); .ci/deps.sh installs them when run as root.
set -u
bin=${ROOFTUNE_BIN:?}
src=${ROOFTUNE_SOURCE_DIR:?}
skip() { echo "SKIP: $*"; exit 77; }
for c in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$c" >/dev/null || skip "$c is not installed (as root, .ci/deps.sh installs Debian's slurm-wlm and munge)"
done
[ "$(id -u)" = 0 ] || skip "starting slurmctld and slurmd needs root"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.5
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

# munge with a key and socket of its own
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$tmp/munge.key"
munged -F --force -S "$tmp/munge.sock" --key-file="$tmp/munge.key" --log-file="$tmp/munged.log" \
  --pid-file="$tmp/munged.pid" --seed-file="$tmp/munged.seed" >"$tmp/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/munge.sock" ] && break; sleep 0.1; done
[ -S "$tmp/munge.sock" ] || skip "munged did not start: $(tail -3 "$tmp/munged.out")"

# one node, this machine
host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/logs"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=rooftune-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=rooftune Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -D -c -i >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$host" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
up=0
for _ in $(seq 150); do
  sinfo -h -o %T 2>/dev/null | grep -q idle && { up=1; break; }
  sleep 0.2
done
[ $up = 1 ] || skip "Slurm did not come up: $(tail -3 "$tmp/slurmctld.log" "$tmp/slurmd.log" 2>/dev/null | tr '\n' ' ')"

# the job: eight small problems, each shard writing its own database
cat >"$tmp/night.json" <<'EOF'
{"rooftune_job": 1, "name": "night", "database": "night.db", "device": "model:h200",
 "shard_database": "shards/{name}-{i}-of-{n}.db",
 "defaults": {"dtype": "f32", "budget": 2, "seed": 3},
 "problems": [{"target": "gemm", "shape": "128x128x128"}, {"target": "gemm", "shape": "64x256x128:nt"},
              {"target": "gemm", "shape": "256x128x64"}, {"target": "gemm", "shape": "32x64x128"},
              {"target": "gemm", "shape": "48x48x48"}, {"target": "gemm", "shape": "96x96x96"},
              {"target": "gemm", "shape": "160x32x64:nt"}, {"target": "gemm_simt", "shape": "64x64x64"}]}
EOF
out=$(cd "$tmp" && ROOFTUNE="$bin" ROOFTUNE_GRES="" ROOFTUNE_LOGS="$tmp/logs" \
      bash "$src/examples/nightly/rooftune-nightly.slurm" "$tmp/night.json" 4 2>&1) || die "submitting: $out"
echo "$out"
arr=$(echo "$out" | sed -n 's/^submitted shards \([0-9]*\) .* merge \([0-9]*\)$/\1/p')
merge=$(echo "$out" | sed -n 's/^submitted shards \([0-9]*\) .* merge \([0-9]*\)$/\2/p')
[ -n "$arr" ] && [ -n "$merge" ] || { echo "FAIL: no job ids in: $out"; exit 1; }
# meanwhile, the same job unsharded, for comparison
"$bin" job run "$tmp/night.json" --db "$tmp/one.db" --no-report >/dev/null 2>&1 || die "the unsharded run"
done_=0
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$arr,$merge" 2>/dev/null)" ] && { done_=1; break; }
  sleep 0.5
done
[ $done_ = 1 ] || die "the jobs did not finish in 300 s: $(squeue 2>&1)"
for i in 0 1 2 3; do
  st=$(scontrol show job "${arr}_$i" 2>/dev/null | grep -o 'JobState=[A-Z]*' | head -1)
  [ "$st" = JobState=COMPLETED ] || die "shard task $i: $st: $(cat "$tmp"/logs/rooftune-"${arr}_$i".log 2>/dev/null)"
done
st=$(scontrol show job "$merge" 2>/dev/null | grep -o 'JobState=[A-Z]*' | head -1)
[ "$st" = JobState=COMPLETED ] || die "merge task: $st: $(cat "$tmp"/logs/rooftune-"$arr"-merge.log 2>/dev/null)"
grep -q "^merged 4 databases into $tmp/night.db" "$tmp/logs/rooftune-$arr-merge.log" ||
  die "merge log: $(cat "$tmp/logs/rooftune-$arr-merge.log")"
[ -s "$tmp/night-out/report.html" ] || die "no report after the merge"
python3 - "$tmp" <<'PY' || die "the merged winners"
import json, sqlite3, sys
t = sys.argv[1]
def winners(p):
    c = sqlite3.connect(p)
    return sorted(c.execute("SELECT p.shape, t.name, r.config, r.time_ms FROM winners w JOIN results r ON r.id=w.result_id "
                            "JOIN problems p ON p.id=w.problem_id JOIN templates t ON t.id=w.template_id").fetchall())
one, merged = winners(t + "/one.db"), winners(t + "/night.db")
assert len(one) >= 8 and merged == one, (merged, one)
owned = [[p["shape"] for p in json.load(open("%s/night-out/summary-shard-%d-of-4.json" % (t, i)))["problems"]] for i in range(4)]
assert sorted(sum(owned, [])) == sorted(set(sum(owned, []))) and len(sum(owned, [])) == 8, owned
print("slurm: 4 array tasks owned", [len(o) for o in owned], "problems; the merged winners equal the unsharded run's (%d)" % len(one))
PY
[ $fail = 0 ] && echo "slurm: $(sinfo -V) ran the array and the merge"
exit $fail
