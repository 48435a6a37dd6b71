#!/usr/bin/env bash
# Installs what llmsim needs from Debian's packages (when run as root; otherwise prints the
# exact apt-get line), configures and builds a Release build in build/, and runs the demo
# scenario. Usage: scripts/setup.sh [--deps-only]
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium: test_report renders `llmsim report` pages in it, and the README's report picture
# is its screenshot
pkgs=(build-essential cmake pkg-config libgsl-dev libsqlite3-dev libyaml-dev libcmocka-dev
      libopenblas-dev gnuplot-nox chromium)
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
# ...a small run under memory pressure: requests preempted, waiting, resumed
rm -f out/gantt.db*
./build/llmsim run scenarios/demo.yaml --db out/gantt.db --quiet --set scheduler.name=vllm \
  --set memory.gpu_utilization=0.22 --set workload.arrival.rate=6 --set workload.num_requests=50
./build/llmsim plot gantt --run 1 --db out/gantt.db -o docs/gantt.png
# ...and the sweep's report, as a browser shows it
./build/llmsim report --sweep 1 --db out/curve.db -o out/report-sweep.html
rm -rf out/chromium-profile
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$PWD/out/chromium-profile" --hide-scrollbars --window-size=1100,1500 \
  --screenshot="$PWD/docs/report.png" "file://$PWD/out/report-sweep.html" 2>/dev/null
rm -rf out/chromium-profile
# ...and the fidelity pictures: predicted against measured on the shipped validation sets
# (they read ../shared/data in place; without it they are left as they are)
if [ -r ../shared/data/validation/aic-silicon-h100.csv ]; then
  rm -f out/validate.db*
  ./build/llmsim validate aic-silicon-h100 --db out/validate.db --quiet -o docs/validation.png >out/validate-aic.txt
  ./build/llmsim validate --ops --db out/validate.db --quiet -o docs/validation-ops.png >out/validate-ops.txt
fi
