#!/usr/bin/env bash
# docs-capacity.sh [BUILD_DIR] [OUT_DIR]: runs every command docs/capacity.md quotes and writes
# each one's output to OUT_DIR/<name>.txt (stdout, then the command itself as the first line),
# and fills the blocks of docs/capacity.md from them, so the page's figures come out of the
# tool. A fragment of scripts/docs.sh: it sources this file and calls docs_capacity, or it runs
# on its own.
# docs-capacity.sh --check [BUILD_DIR] [NAME...]: runs the named blocks' commands (every block
# when none is named) and compares each output with its block of the page, byte for byte; exit
# 1 naming the blocks that differ, with their diff (test_docs_capacity checks the cheap ones).
# Defaults: BUILD_DIR=build (a Release build), OUT_DIR a scratch folder (removed after).
set -euo pipefail

# docs_capacity_run BUILD OUT [NAME...]: the page's commands (only the named ones, when any are
# named), each one's output in OUT/NAME.txt.
docs_capacity_run() {
  local b=$1 out=$2 db
  shift 2
  local only=" $* "
  mkdir -p "$out"
  db=$(mktemp -u /tmp/llmsim-docs-capacity-XXXXXX.db)
  shown() { # an argument as a shell would need it typed: quoted when it has to be
    case $1 in
      *[!A-Za-z0-9_./:=,@+%-]*) printf " '%s'" "$1" ;;
      *) printf ' %s' "$1" ;;
    esac
  }
  run() { # run NAME ARGS...: the command's stdout into OUT/NAME.txt
    local name=$1; shift
    [ "$only" = "  " ] || [[ $only == *" $name "* ]] || return 0
    { printf '$ llmsim'; for a in "$@"; do shown "$a"; done; echo
      "$b/llmsim" "$@" --db "$db" --quiet; } > "$out/$name.txt"
  }
  # "How many GPUs?": a question in three commands, no scenario file
  run quick-run run --model meta-llama/Llama-3.1-70B-Instruct --gpu h100 --tp 8 \
      --lengths sharegpt --rate 2
  run quick-capacity capacity --model meta-llama/Llama-3.1-70B-Instruct --gpu h100 --tp 8 \
      --lengths sharegpt --slo ttft_p99=2s,tpot_p99=50ms --target-rate 10
  run quick-recommend recommend --model meta-llama/Llama-3.1-70B-Instruct --gpu h100 \
      --target-rate 10 --lengths sharegpt --slo ttft_p99=2s,tpot_p99=50ms
  # rejections are failures; an unreachable SLO stops at the unloaded case
  run engines capacity --model meta-llama/Llama-3.1-70B-Instruct --gpu h100 --tp 8 \
      --lengths sharegpt --slo ttft_p99=2s,tpot_p99=100ms --target-rate 10 \
      --compare engine=vllm,tgi
  run unreachable capacity --model meta-llama/Llama-3.1-70B-Instruct --gpu h100 --tp 2 \
      --lengths sharegpt --slo ttft_p99=950ms --target-rate 10
  # layouts compared by name, crossed with engines
  run layouts capacity --model deepseek-ai/DeepSeek-V3 --gpu h200 --isl 1000 --osl 500 \
      --slo ttft_p99=2s,tpot_p99=50ms \
      --compare 'tp8: tensor_parallel=8; tp8ep8: tensor_parallel=8,expert_parallel=8; dp8ep8: tensor_parallel=1,data_parallel_attention=8,expert_parallel=8' \
      --compare engine=vllm,sglang,trtllm
  # a recommendation on a GPU budget
  run recommend-dsv3 recommend --model deepseek-ai/DeepSeek-V3 --gpu h200 --gpus 8 \
      --isl 1000 --osl 500 --slo ttft_p99=2s,tpot_p99=50ms
  # how far the screened search is from an exhaustive one, on a small grid
  run screened recommend --model meta-llama/Llama-3.1-8B-Instruct --gpu h100 --gpus 2 \
      --isl 1000 --osl 200 --slo ttft_p99=1s,tpot_p99=30ms
  run exhaustive recommend --model meta-llama/Llama-3.1-8B-Instruct --gpu h100 --gpus 2 \
      --isl 1000 --osl 200 --slo ttft_p99=1s,tpot_p99=30ms --exhaustive
  # minimising cost: one H100 is the fewest GPUs for 10 req/s, two L40S the cheapest
  run cost-capacity capacity --model llama-3-8b --gpu h100 --isl 1000 --osl 200 \
      --slo ttft_p99=2s,tpot_p99=100ms --target-rate 10 --compare gpu=h100-sxm,l40s \
      --minimise cost
  run cost-recommend recommend --model llama-3-8b --gpu h100-sxm,l40s --isl 1000 --osl 200 \
      --slo ttft_p99=2s,tpot_p99=100ms --target-rate 10 --engines vllm --no-disagg --no-knobs \
      --minimise cost
  # a model no node holds: pipelines of TP 8 a node
  run pp-recommend recommend --model meta-llama/Llama-3.1-405B-Instruct --gpu h100 \
      --isl 1000 --osl 200 --slo ttft_p99=5s,tpot_p99=200ms --target-rate 2 --engines vllm \
      --no-disagg --no-knobs
  rm -f "$db" "$db"-*
  # the size of a 1,000,000-request run's report
  if [ "$only" = "  " ] || [[ $only == *" report-size "* ]]; then
    local rdb html args=(--model llama-3-8b --gpu h100 --rate 20 --isl 512 --osl 128
                         --requests 1000000)
    rdb=$(mktemp -u /tmp/llmsim-docs-capacity-XXXXXX.db)
    html=$(mktemp -u /tmp/llmsim-docs-capacity-XXXXXX.html)
    "$b/llmsim" run "${args[@]}" --db "$rdb" --quiet > /dev/null
    "$b/llmsim" report --run 1 --db "$rdb" -o "$html" --quiet
    { printf '$ llmsim run'; for a in "${args[@]}"; do shown "$a"; done; echo
      echo '$ llmsim report --run 1 -o report-run1.html'
      echo '$ wc -c report-run1.html'
      echo "$(clean_size "$html") report-run1.html"; } > "$out/report-size.txt"
    rm -f "$rdb" "$rdb"-* "$html"
  fi
}

# A report's size as a build from a clean tree writes it: a build with uncommitted changes names
# itself "+g<sha>.dirty" in the version the report carries, 6 bytes more each time.
clean_size() {
  local n d
  n=$(wc -c < "$1")
  d=$(grep -o '+g[0-9a-f]*\.dirty' "$1" | wc -l || true)
  echo $((n - 6 * d))
}

docs_capacity() {
  local b=${1:-build} out=${2:-} scratch=
  if [ -z "$out" ]; then
    out=$(mktemp -d /tmp/llmsim-docs-capacity-XXXXXX)
    scratch=$out
  fi
  docs_capacity_run "$b" "$out"
  docs_capacity_fill "$out" docs/capacity.md
  [ -z "$scratch" ] || rm -rf "$scratch"
}

# docs_capacity_block PAGE NAME: the fenced block under "<!-- docs-capacity: NAME -->" of PAGE.
docs_capacity_block() {
  awk -v name="$2" '
    $0 == "<!-- docs-capacity: " name " -->" { want = 1; next }
    want && /^```$/ && !inside { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }' "$1"
}

# docs_capacity_check BUILD PAGE [NAME...]: 0 when each named block (every block when none is
# named) is what its command prints now; 1 naming those that are not, with the differences.
docs_capacity_check() {
  local b=$1 page=$2 out rc=0 n names
  shift 2
  names=("$@")
  [ ${#names[@]} -gt 0 ] ||
    mapfile -t names < <(sed -n 's/^<!-- docs-capacity: \([a-z0-9-]*\) -->$/\1/p' "$page")
  out=$(mktemp -d /tmp/llmsim-docs-capacity-XXXXXX)
  docs_capacity_run "$b" "$out" "${names[@]}"
  for n in "${names[@]}"; do
    if [ ! -f "$out/$n.txt" ]; then
      echo "$page: no command makes block '$n'"; rc=1
    elif ! docs_capacity_block "$page" "$n" | diff -u - "$out/$n.txt" > "$out/$n.diff"; then
      echo "$page: block '$n' is not what its command prints now (scripts/docs-capacity.sh refills it):"
      cat "$out/$n.diff"; rc=1
    else
      echo "$page: block '$n' matches"
    fi
  done
  rm -rf "$out"
  return $rc
}

# docs_capacity_fill OUT PAGE: the fenced block under each "<!-- docs-capacity: NAME -->" line
# of PAGE becomes OUT/NAME.txt.
docs_capacity_fill() {
  local out=$1 page=$2 tmp
  tmp=$(mktemp)
  awk -v dir="$out" '
    /^<!-- docs-capacity: [a-z0-9-]+ -->$/ { name = $3; print; want = 1; next }
    want && /^```$/ && !inside { print; while ((getline l < (dir "/" name ".txt")) > 0) print l;
                                 close(dir "/" name ".txt"); inside = 1; next }
    inside && /^```$/ { print; inside = 0; want = 0; next }
    inside { next }
    { print }' "$page" > "$tmp"
  mv "$tmp" "$page"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  cd "$(dirname "$0")/.."
  if [ "${1:-}" = --check ]; then
    shift
    docs_capacity_check "${1:-build}" docs/capacity.md "${@:2}"
  else
    docs_capacity "$@"
  fi
fi
