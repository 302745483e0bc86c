#!/bin/bash
# A sharded dump whose rank 1 is killed (kill -9) after rank 0 has written its shard: rank 0 waited
# in the ranks' agreement under the dump's own stop handler (a flag), so the launcher's SIGTERM did
# nothing and its SIGKILL a second later left rank 0's finished staged shard and the dump's .lock
# beside --out (docs/scaling.md: a job that fails or is stopped leaves nothing of its own). Now the
# wait for the other ranks' shards ends at a signal through main's handler, which removes both.
# Found by a probe in session 36; adapted from its repro.
#   dump_killed_rank.sh ROUTESCOPE_CLI MPIEXEC SOURCE_DIR WORKDIR      exit 77: skipped (no mpirun)
CLI=$1; MPIEXEC=$2; SRC=$3; W=$4
command -v "$MPIEXEC" >/dev/null 2>&1 || { echo "SKIPPED: no mpirun ($MPIEXEC)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$W"; mkdir -p "$W"; cd "$W" || exit 1
"$CLI" train --config "$SRC/resources/configs/bigs-tiny.json" --out run --set model.d_model=32 \
  --set data.seq_len=32 --set model.max_len=32 --set train.steps=1 --set train.threads=1 >/dev/null 2>&1 \
  || { echo "FAIL: setup: train failed"; exit 1; }
/usr/bin/python3 -c "
import random; random.seed(3)
open('big.txt','w').write('\n'.join(' '.join(random.choice(['the','cat','sat','on','mat','dog']) for _ in range(random.randint(3,12))) for i in range(20000))+'\n')"
"$MPIEXEC" --oversubscribe -np 2 "$CLI" dump --checkpoint run/model.ckpt.h5 --data big.txt --out y.dump.h5 --threads 1 --batch 1 --layers 1 >out.txt 2>err.txt &
MP=$!
R1=""
for i in $(seq 500); do
  for p in $(pgrep -P $MP); do
    if tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then R1=$p; fi
  done
  [ -n "$R1" ] && ls -A | grep -q "^\.\.y\.rank1\.dump\.h5\.staged\.tmp-" && break; sleep 0.01
done
[ -z "$R1" ] && { kill $MP; echo "FAIL: setup: rank 1 not found"; exit 1; }
kill -STOP $R1
for i in $(seq 600); do [ -e .y.rank0.dump.h5.staged ] && break; sleep 0.1; done
[ -e .y.rank0.dump.h5.staged ] || { kill -9 $R1; wait $MP; echo "FAIL: setup: rank 0 never staged its shard"; exit 1; }
kill -9 $R1; kill -CONT $R1 2>/dev/null
wait $MP; rc=$?
sleep 2
left=$(ls -A | grep -v "\.tmp-$R1\$" | grep '^\.y\|^\.\.y\|^y' | tr '\n' ' ')
if [ -z "$left" ]; then echo PASS; else echo "FAIL: mpirun exit $rc after kill -9 of rank 1; left beside --out: $left"; exit 1; fi
