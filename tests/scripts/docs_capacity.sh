#!/usr/bin/env bash
# docs/capacity.md's blocks come out of the tool: the cheap ones (a run, and the unreachable
# capacity question) are run again and compared byte for byte with the page, so a change to what
# run or capacity prints fails here until `scripts/docs-capacity.sh` refills the page.
# `scripts/docs-capacity.sh --check build` checks every block (minutes, a Release build).
# Usage: docs_capacity.sh BUILD_DIR SOURCE_DIR [--all]: with --all every block (test_docs_capacity_slow,
# a Release build), skipped (exit 77) where ../shared/data, whose ShareGPT table the searches
# read, is absent.
set -eu
build=$(cd "$1" && pwd)
if [ "${3:-}" = --all ]; then
  if [ ! -d "$2/../shared/data" ]; then
    echo "docs_capacity.sh: every block reads ../shared/data's ShareGPT table, absent here: skipped"
    exit 77
  fi
  exec bash "$2/scripts/docs-capacity.sh" --check "$build"
fi
exec bash "$2/scripts/docs-capacity.sh" --check "$build" quick-run unreachable
