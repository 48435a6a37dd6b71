#!/bin/sh
# The test runner's hang detection is by progress, never by the wall clock:
#  - a test waiting forever (no CPU time) is stopped after --stall seconds, exit 124;
#  - a test looping (CPU time past --cpu) is stopped, exit 124;
#  - a test using CPU time for longer than --stall, as a slow or loaded one does, runs to its end;
#  - a test's exit status (77: skipped) and a signal (128 + N) come through unchanged;
#  - every CTest test runs under the watchdog with CTest's TIMEOUT 0 (no wall-clock limit).
# Usage: watchdog.sh WATCHDOG BUILD_DIR.
set -eu
wd=$1
build=$2
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d /tmp/llmsim-watchdog-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
set +e
"$wd" --stall 2 -- sleep 1000 2>err.txt; rc=$?
set -e
[ "$rc" = 124 ] || fail "a sleeping test: status $rc, expected 124"
grep -q "used no CPU time" err.txt || fail "no reason given: $(cat err.txt)"
set +e
"$wd" --stall 100 --cpu 1 -- sh -c 'while :; do :; done' 2>err.txt; rc=$?
set -e
[ "$rc" = 124 ] || fail "a looping test: status $rc, expected 124"
grep -q "more CPU time than its limit" err.txt || fail "no reason given: $(cat err.txt)"
# 3 s of work under a 2 s stall limit: progress, so it finishes
"$wd" --stall 2 -- sh -c 'i=0; end=$(($(date +%s) + 3)); while [ "$(date +%s)" -lt $end ]; do i=$((i+1)); done' ||
    fail "a test making progress was stopped"
set +e
"$wd" -- sh -c 'exit 77'; rc=$?
"$wd" -- sh -c 'kill -TERM $$'; rc2=$?
set -e
[ "$rc" = 77 ] || fail "exit status 77 came back as $rc"
[ "$rc2" = 143 ] || fail "SIGTERM came back as $rc2, expected 143"
# every test of the build under the watchdog, with no CTest timeout
ctest --test-dir "$build" --show-only=json-v1 > tests.json
python3 - tests.json <<'PY' || fail "a test without the watchdog or with a wall-clock timeout"
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
bad = []
for t in tests:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if "llmsim_watchdog" not in t["command"][0] or float(props.get("TIMEOUT", -1)) != 0:
        bad.append(t["name"])
print(len(tests), "tests;", "without the watchdog or with a timeout:", bad or "none")
sys.exit(1 if bad else 0)
PY
echo "ok"
