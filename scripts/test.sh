#!/usr/bin/env bash
# Builds the Debug configuration (AddressSanitizer + UndefinedBehaviorSanitizer, warnings as
# errors) in build-debug/ and runs the test suite through CTest: every test but the heavy
# property runs (label `heavy`: the full-length conformance and queueing runs, which .ci/run
# adds). No test has a wall-clock limit; a hung one is stopped by the watchdog (tests/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-debug -DCMAKE_BUILD_TYPE=Debug
cmake --build build-debug -j"$(nproc)"
ctest --test-dir build-debug --output-on-failure -j"$(nproc)" -LE heavy
