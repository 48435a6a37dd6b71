#!/usr/bin/env bash
# Installs what llmsim needs from Debian's packages (when run as root; otherwise prints the
# exact apt-get line), configures and builds a Release build in build/, and runs the demo
# scenario. Usage: scripts/setup.sh [--deps-only]
set -euo pipefail
cd "$(dirname "$0")/.."

# parallel: the sharded-sweep test drives shards with GNU parallel (README, "Sweeps on many
# machines"); clang and libclang-rt-dev: the fuzz harnesses (clang alone lacks libFuzzer's
# runtime, libclang_rt.fuzzer-x86_64.a, which is in libclang-rt-14-dev)
pkgs=(build-essential cmake pkg-config libgsl-dev libsqlite3-dev libyaml-dev libcmocka-dev
      libopenblas-dev gnuplot-nox parallel clang libclang-rt-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "llmsim setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}"
  else
    echo "llmsim setup: missing packages; run as root:"
    echo "  apt-get install -y ${missing[*]}"
    exit 1
  fi
fi
[ "${1:-}" = "--deps-only" ] && exit 0

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
mkdir -p out docs
# the demo: one run, stored in out/demo.db, and its summary
./build/llmsim run scenarios/demo.yaml --db out/demo.db
# the README's pictures: a latency-throughput sweep over four schedulers...
rm -f out/curve.db*
./build/llmsim sweep scenarios/demo.yaml --db out/curve.db --store summary \
  --vary scheduler.name=static,orca,vllm,chunked --vary workload.arrival.rate=1:11:2 \
  --set workload.num_requests=600
./build/llmsim plot curve --sweep 1 --db out/curve.db --metric ttft --pct p99 -o docs/curve.png
# ...and static against continuous batching, iteration by iteration
rm -f out/timeline.db*
./build/llmsim run scenarios/timeline.yaml --db out/timeline.db --set scheduler.name=static
./build/llmsim run scenarios/timeline.yaml --db out/timeline.db --set scheduler.name=orca
./build/llmsim plot timeline --run 1,2 --db out/timeline.db -o docs/timeline.png
