#!/usr/bin/env bash
# Builds the Debug configuration (AddressSanitizer + UndefinedBehaviorSanitizer, warnings as
# errors) in build-debug/ and runs the whole test suite through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-debug -DCMAKE_BUILD_TYPE=Debug
cmake --build build-debug -j"$(nproc)"
ctest --test-dir build-debug --output-on-failure -j"$(nproc)"
