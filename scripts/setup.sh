#!/usr/bin/env bash
# Installs what llmsim needs from Debian's packages (when run as root; otherwise prints the
# exact apt-get line), configures and builds a Release build in build/, and runs the demo
# scenario into out/demo.db. It writes nothing the tree tracks: the pictures in docs/ are drawn
# by scripts/docs.sh --pictures. Usage: scripts/setup.sh [--deps-only]
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium: test_report renders `llmsim report` pages in it, and docs/report.png is its
# screenshot; parallel: the sharded-sweep test drives shards with GNU parallel (docs/sweeps.md,
# "Sweeps on many machines"); clang and libclang-rt-dev: the fuzz harnesses (clang alone lacks
# libFuzzer's runtime, libclang_rt.fuzzer-x86_64.a, which is in libclang-rt-14-dev); sqlite3:
# scripts/docs.sh reads the store's schema and views with it (docs/results.md)
pkgs=(build-essential cmake pkg-config libgsl-dev libsqlite3-dev libyaml-dev libcmocka-dev
      libopenblas-dev gnuplot-nox chromium parallel clang libclang-rt-dev sqlite3)
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
mkdir -p out
# the demo: one run, stored in out/demo.db, and its summary
./build/llmsim run scenarios/demo.yaml --db out/demo.db
