#!/bin/sh
# A sweep run as shards by GNU parallel, as on many machines over ssh (here `-S :`, the local
# machine through the same remote-execution path), a failed shard finished with
# --resume-failed from the job log, the shards merged, and the result compared with the sweep
# run whole: the same table, byte for byte. The recipe of docs/sweeps.md, "Sweeps on many machines".
# Usage: sweep_parallel.sh LLMSIM. Exit 77 (skipped) when GNU parallel is not installed.
set -eu
llmsim=$1
if ! command -v parallel >/dev/null 2>&1; then
    echo "skipped: GNU parallel is not installed (apt-get install parallel)"
    exit 77
fi
dir=$(mktemp -d /tmp/llmsim-parallel-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
cat > p.yaml <<'YAML'
name: p
seed: 11
model: llama-3-8b
gpu: h100-sxm
scheduler: {name: orca}
workload:
  num_requests: 40
  arrival: {process: poisson, rate: 4.0}
  prompt_tokens: {dist: uniform, min: 100, max: 900}
  output_tokens: {dist: uniform, min: 10, max: 90}
YAML
args="--vary scheduler.name=orca,vllm --vary workload.arrival.rate=2,6 --reps 2 --jobs 1 --quiet"

"$llmsim" sweep p.yaml --db whole.db $args --json > whole.json

# shard I's database goes to out/I/; out/3 is missing, so shard 3 fails the first time
mkdir -p out/1 out/2
if parallel --will-cite -S : --joblog shards.log \
    "cd $dir && $llmsim sweep p.yaml --db out/{}/shard.db $args --shard {}/3" ::: 1 2 3; then
    echo "FAIL: shard 3 should have failed (out/3 is missing)"
    exit 1
fi
mkdir -p out/3
parallel --will-cite -S : --joblog shards.log --resume-failed \
    "cd $dir && $llmsim sweep p.yaml --db out/{}/shard.db $args --shard {}/3" ::: 1 2 3
# the job log: three first attempts and one retry, of shard 3, which succeeded
runs=$(tail -n +2 shards.log | wc -l)
retried=$(tail -n +2 shards.log | awk -F'\t' '$7 == 0 && $9 ~ /--shard 3\/3/' | wc -l)
if [ "$runs" -ne 4 ] || [ "$retried" -ne 1 ]; then
    echo "FAIL: job log has $runs entries and $retried successful shard-3 runs (want 4 and 1)"
    cat shards.log
    exit 1
fi

"$llmsim" merge merged.db out/1/shard.db out/2/shard.db out/3/shard.db > merge.txt
grep -q "8 of 8 runs, complete" merge.txt || { echo "FAIL: merge:"; cat merge.txt; exit 1; }
"$llmsim" sweep p.yaml --db merged.db $args --json > merged.json
if ! cmp -s whole.json merged.json; then
    echo "FAIL: the merged shards differ from the whole sweep"
    diff whole.json merged.json || true
    exit 1
fi
echo "ok: 3 shards by GNU parallel (one resumed) merge to the whole sweep's table"
