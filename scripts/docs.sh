#!/usr/bin/env bash
# scripts/docs.sh: every figure the docs quote comes from here, produced by the build.
#
# README.md and docs/*.md hold generated fragments between markers:
#
#   <!-- BEGIN docs.sh:NAME -->
#   ...what gen_NAME below printed...
#   <!-- END docs.sh:NAME -->
#
# gen_NAME runs llmsim (build/llmsim, the Release build, unless LLMSIM names another binary) in a
# scratch folder where scenarios/ and validation/ are the tree's, so the commands it shows are
# the ones a reader types at the root of the tree (`llmsim.db` is a fresh database each time).
# Output holds no host-dependent text: wall-clock lines are dropped, and the tree's path
# becomes relative.
#
#   scripts/docs.sh                 rewrite every checked fragment (classes cheap and slow)
#   scripts/docs.sh --check         compare them with what the build prints; exit 1 naming each
#                                   stale fragment (with a diff), 0 when all match
#
#   scripts/docs.sh NAME...         only these fragments (either mode)
#   --class cheap|slow|bench|all    only fragments of one class (default: cheap and slow)
#   --pictures                      also draw the pictures in docs/ (*.png); never checked
#   --list                          list the fragments: name, class, what they need, where
#
# Either mode also checks the pages' structure: README.md within 20,000 bytes, every relative
# link of README.md and docs/*.md to an existing file and heading, and every
# `docs/PAGE.md, "Heading"` the tree's code and scripts cite naming an existing one.
#
# Classes: `cheap` fragments take seconds even in the Debug build (help, catalogs, sizes, one
# request): CTest's test_docs checks them in every build (`scripts/test.sh`). `slow` ones
# simulate whole workloads, which the Debug build's invariant checks make take minutes: CTest's
# test_docs_slow (label docs-slow) checks them in a Release build, as .ci/run does. `bench`
# fragments are wall-clock figures of this machine: written only with `--class bench` (or by
# name), never checked. A fragment that needs ../shared/data is skipped, named, when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LLMSIM=${LLMSIM:-build/llmsim}
case "$LLMSIM" in /*) ;; *) LLMSIM="$ROOT/$LLMSIM" ;; esac
DATA="$ROOT/../shared/data"
SHOWN="build/llmsim" # how commands are shown

# ---- the fragments: name, class, needs (data: ../shared/data; sqlite3: the sqlite3 program),
# and for a generated file, its path (the generator prints the whole file) ----
FRAGMENTS=(
  "keys cheap - docs/keys.md"
  "quickstart slow -"
  "commands cheap -"
  "scenario-check cheap -"
  "run-demo slow -"
  "scenario-list cheap -"
  "list-schedulers cheap -"
  "list-engines cheap -"
  "list-routers cheap -"
  "list-models cheap -"
  "list-gpus cheap -"
  "layouts cheap -"
  "roofline-one-request cheap -"
  "moe-placement cheap -"
  "hybrid-align slow sqlite3"
  "shared-prefix slow sqlite3"
  "prefix-mooncake slow data,sqlite3"
  "offload-h200 slow data,sqlite3"
  "offload-mooncake slow data"
  "pipeline-405b slow -"
  "routers slow sqlite3"
  "mixed-pool slow sqlite3"
  "speculative-run slow data"
  "pd-llama70b slow -"
  "pd-deepseek-v3 slow -"
  "pd-mixed slow sqlite3"
  "capacity-sweep slow -"
  "capacity-schedulers slow -"
  "capacity-pd-compare slow -"
  "capacity-pd-target slow -"
  "sweep-demo slow -"
  "schema cheap sqlite3"
  "validate-list cheap -"
  "validated-error slow -"
  "readme-fidelity slow data"
  "fidelity-aic slow data"
  "validation-errors slow data validation/errors.csv"
  "fidelity-512 slow data"
  "fidelity-residuals slow data"
  "fidelity-ops slow data"
  "fidelity-h100-ops cheap -"
  "fleet-cost slow sqlite3"
  "fleet-admission slow sqlite3"
  "fleet-diurnal slow sqlite3"
  "fleet-burst slow sqlite3"
  "fleet-faults slow sqlite3"
  "fleet-routers slow sqlite3"
  "fleet-pd slow sqlite3"
  "priority-run slow -"
  "priority-classes slow sqlite3"
  "fleet-timeline slow sqlite3"
  "bench bench -"
)

# ---- helpers for generators ----

# An argument as a reader would type it.
quote() {
  local a=$1
  if [[ $a =~ ^[A-Za-z0-9_./=:,@%+^-]+$ ]]; then
    printf '%s' "$a"
  elif [[ $a != *\'* ]]; then
    printf "'%s'" "$a"
  else
    printf '"%s"' "$a"
  fi
}

# Drops what depends on the host or the checkout: wall-clock lines, the tree's path, the scratch
# folder's path.
clean() {
  sed -e "s|$ROOT/||g" -e "s|$SCRATCH/||g" -e "s|$SCRATCH|.|g" \
      -e '/simulated in [0-9.]* s/d' -e '/^llmsim[a-z ]*: [0-9.]* s$/d'
}

# show [--err|--silent] PROGRAM ARGS...: one `$ command` line and its output (stdout; with --err,
# stderr too, for a refusal; with --silent, none). PROGRAM llmsim is the build's binary. A
# failure fails the fragment unless --err is given.
show() {
  local err=0 silent=0
  [ "$1" = --err ] && { err=1; shift; }
  [ "$1" = --silent ] && { silent=1; shift; }
  local prog=$1 shown=$1
  shift
  [ "$prog" = llmsim ] && { prog=$LLMSIM; shown=$SHOWN; }
  local line="\$ $shown" a
  for a in "$@"; do line+=" $(quote "$a")"; done
  printf '%s\n' "$line"
  if [ $err = 1 ]; then
    "$prog" "$@" 2>&1 | clean || true
  elif [ $silent = 1 ]; then
    "$prog" "$@" >/dev/null 2>"$SCRATCH/.stderr" || {
      echo "docs.sh: '$line' failed:" >&2
      sed 's/^/  /' "$SCRATCH/.stderr" >&2
      return 1
    }
  else
    "$prog" "$@" 2>"$SCRATCH/.stderr" | clean || {
      echo "docs.sh: '$line' failed:" >&2
      sed 's/^/  /' "$SCRATCH/.stderr" >&2
      return 1
    }
  fi
}

# A fenced block around `show`s.
fence_open() { printf '```console\n'; }
fence_close() { printf '```\n'; }

# The fragment's runs as the query $1 tables them (sqlite3 on llmsim.db), then the fence's end.
show_table() {
  show sqlite3 -header -column llmsim.db "$1"
  fence_close
}

# ---- generators: each prints its fragment's markdown ----

gen_quickstart() {
  fence_open
  show llmsim scenario check scenarios/capacity.yaml
  echo
  show llmsim capacity scenarios/capacity.yaml --slo ttft_p99=1s,tpot_p99=50ms --target-rate 40 \
    --compare gpu=h100-sxm,a100-80gb,h200
  fence_close
}

gen_commands() {
  echo "Generated from each command's \`--help\` by \`scripts/docs.sh\`."
  echo
  echo '```text'
  "$LLMSIM" --help | clean
  echo '```'
  local cmd sub
  for cmd in $("$LLMSIM" --help | awk '/^  [a-z]/ {print $1}'); do
    help_section "$cmd"
    # a group (usage: llmsim CMD SUBCOMMAND) lists its subcommands; a command may name one more
    # in its help (`llmsim calibrate validate --help`)
    for sub in $("$LLMSIM" "$cmd" --help |
      awk -v c="$cmd" '/^usage: llmsim [a-z]+ SUBCOMMAND/ {g = 1; next}
                       g && /^  [a-z]/ {print $1}
                       {while (match($0, "`llmsim " c " [a-z-]+ --help`")) {
                          s = substr($0, RSTART, RLENGTH); split(s, w, " "); print w[3]
                          $0 = substr($0, RSTART + RLENGTH)}}' | awk '!seen[$0]++'); do
      help_section "$cmd $sub"
    done
  done
}

help_section() {
  echo
  echo "## llmsim $1"
  echo
  echo '```text'
  # shellcheck disable=SC2086
  "$LLMSIM" $1 --help | clean
  echo '```'
}

gen_scenario_check() {
  fence_open
  show llmsim scenario check scenarios/demo.yaml
  fence_close
}

# Each shipped scenario with the first sentence of its header comment.
gen_scenario_list() {
  local f
  for f in scenarios/*.yaml; do
    awk -v f="$f" '/^#/ {sub(/^# ?/, ""); text = text (text == "" ? "" : " ") $0; next}
                   {exit}
                   END {if (match(text, /[.] [A-Z(]/)) text = substr(text, 1, RSTART)
                        printf "- `%s`: %s\n", f, text}' "$f"
  done
}

gen_run_demo() {
  fence_open
  show llmsim run scenarios/demo.yaml
  fence_close
}

# docs/keys.md, whole: every scenario key from the settings tables (test_keys checks it too).
gen_keys() { "$LLMSIM" list keys --markdown; }

gen_list_schedulers() { fence_open; show llmsim list schedulers; fence_close; }
gen_list_engines() { fence_open; show llmsim list engines; fence_close; }
gen_list_routers() { fence_open; show llmsim list routers; fence_close; }
gen_list_models() { fence_open; show llmsim list models; fence_close; }
gen_list_gpus() { fence_open; show llmsim list gpus; fence_close; }

gen_layouts() {
  local dsv3=(--set model=deepseek-v3 --set gpu=h200 --set dtype=fp8)
  fence_open
  show llmsim scenario check scenarios/capacity.yaml "${dsv3[@]}" --set tensor_parallel=8
  echo
  show llmsim scenario check scenarios/capacity.yaml "${dsv3[@]}" --set data_parallel_attention=8 \
    --set expert_parallel=8
  echo
  show --err llmsim scenario check scenarios/capacity.yaml --set model=deepseek-v3 --set gpu=h100-sxm
  echo
  show --err llmsim scenario check scenarios/capacity.yaml --set model=mixtral-8x7b \
    --set gpu=a100-40gb
  fence_close
}

gen_roofline_one_request() {
  fence_open
  show llmsim run scenarios/demo.yaml --no-db --set workload.num_requests=1 \
    --set workload.arrival=burst --set workload.prompt_tokens=2048 --set workload.output_tokens=128
  fence_close
}

# One 16k-token prompt on DeepSeek-V3 with expert parallelism: balanced routing, skewed routing
# on static placement, the same skew with EPLB's redundant experts (the run's label and TTFT).
gen_moe_placement() {
  local dsv3=(scenarios/capacity.yaml --no-db --set model=deepseek-v3 --set gpu=h200
    --set dtype=fp8 --set data_parallel_attention=8 --set expert_parallel=8
    --set workload.num_requests=1 --set workload.arrival=burst
    --set workload.prompt_tokens=16384 --set workload.output_tokens=64)
  local keep='^(\$|llmsim run|TTFT  |TPOT  )'
  fence_open
  show llmsim run "${dsv3[@]}" | grep -E "$keep"
  show llmsim run "${dsv3[@]}" --set moe.skew=1.2 | grep -E "$keep"
  show llmsim run "${dsv3[@]}" --set moe.skew=1.2 --set moe.placement=eplb \
    --set moe.redundant_experts=32 | grep -E "$keep"
  fence_close
}

# docs/models.md: a hybrid model's shared prefixes with and without vLLM's opt-in prefix cache
gen_hybrid_align() {
  local q="SELECT id, round(prefix_hit_rate, 3) AS prefix_hit_rate, CAST(prefix_hit_tokens AS
    INTEGER) AS prefix_hit_tokens, round(mean_ttft_ms, 1) AS mean_ttft_ms FROM run_summary"
  local m
  fence_open
  for m in none align; do
    show --silent llmsim run scenarios/shared_prefix.yaml \
      --set model=../../shared/data/models/qwen3.5-397b-a17b/config.json --set gpu=h200 \
      --set tensor_parallel=8 --set workload.num_requests=200 --set workload.arrival.rate=2 \
      --set seed=3 --set memory.mamba_cache_mode=$m
  done
  show_table "$q"
}

gen_shared_prefix() {
  local q="SELECT id, round(prefix_hit_rate, 3) AS prefix_hit_rate, round(mean_ttft_ms, 1) AS
    mean_ttft_ms, round(p99_ttft_ms, 1) AS p99_ttft_ms FROM run_summary"
  fence_open
  show --silent llmsim run scenarios/shared_prefix.yaml
  show --silent llmsim run scenarios/shared_prefix.yaml \
    --set scheduler.enable_prefix_caching=false
  show_table "$q"
}

gen_prefix_mooncake() {
  local q="SELECT round(prefix_hit_rate, 4) AS prefix_hit_rate, CAST(prefix_hit_tokens AS INTEGER)
    AS prefix_hit_tokens, CAST(prefix_evicted_blocks AS INTEGER) AS prefix_evicted_blocks
    FROM run_summary"
  fence_open
  show --silent llmsim run scenarios/mooncake_conv.yaml --store summary
  show_table "$q"
}

gen_offload_h200() {
  local q="SELECT round(prefix_hit_rate, 4) AS prefix_hit_rate,
    round(kv_offload_cpu_hit_rate, 4) AS from_host, round(mean_ttft_ms) AS mean_ttft_ms FROM
    run_summary ORDER BY id"
  local s=(--set replicas=1 --set gpu=h200 --set memory.block_size=256 --store summary)
  fence_open
  show --silent llmsim run scenarios/mooncake_conv.yaml "${s[@]}"
  show --silent llmsim run scenarios/mooncake_conv.yaml "${s[@]}" \
    --set 'kv_offload.tiers=[{kind: cpu}]'
  show_table "$q"
}

gen_routers() {
  local q="SELECT id, round(request_throughput, 2) AS req_per_s, round(prefix_hit_rate, 3) AS
    prefix_hit_rate, round(mean_ttft_ms, 1) AS mean_ttft_ms, round(p99_ttft_ms, 1) AS p99_ttft_ms
    FROM run_summary"
  local r
  fence_open
  for r in round_robin least_outstanding prefix_affinity weighted precise_prefix kv_router \
    session_affinity; do
    show --silent llmsim run scenarios/routers.yaml --store summary --set router=$r
  done
  show_table "$q"
}

gen_mixed_pool() {
  local q="SELECT id, gpu, round(request_throughput, 2) AS req_per_s, round(p99_ttft_ms, 1) AS
    p99_ttft_ms, round(gpu_hours, 4) AS gpu_hours, round(cost_usd, 4) AS cost_usd FROM run_summary"
  local m=scenarios/mixed_pool.yaml s=(--store summary) r
  local equal='replicas=[{gpu: a100-80gb, count: 4, weight: 1}, {gpu: h200, count: 2, weight: 1}]'
  fence_open
  for r in round_robin least_outstanding least_tokens kv_router; do
    show --silent llmsim run $m "${s[@]}" --set router=$r
  done
  show --silent llmsim run $m "${s[@]}" --set "$equal"
  for r in '{gpu: a100-80gb, count: 6}' '{gpu: a100-80gb, count: 4}, {gpu: h200, count: 2}' \
    '{gpu: h200, count: 6}'; do
    show --silent llmsim run $m "${s[@]}" --set workload.arrival.rate=80 --set "replicas=[$r]"
  done
  show_table "$q"
}

gen_offload_mooncake() { fence_open; show llmsim run scenarios/mooncake_offload.yaml; fence_close; }

gen_pipeline_405b() {
  fence_open
  show llmsim run scenarios/llama405b_pp2.yaml
  show llmsim run scenarios/llama405b_pp2.yaml --set pipeline_batches=1
  fence_close
}

gen_speculative_run() {
  fence_open
  show llmsim run scenarios/speculative.yaml
  fence_close
}

gen_pd_llama70b() { fence_open; show llmsim run scenarios/pd_llama70b.yaml; fence_close; }
gen_pd_deepseek_v3() { fence_open; show llmsim run scenarios/pd_deepseek_v3.yaml; fence_close; }

gen_pd_mixed() {
  local q="SELECT id, gpu, round(request_throughput, 2) AS req_per_s, round(mean_tpot_ms, 2) AS
    mean_tpot_ms, round(p99_tpot_ms, 2) AS p99_tpot_ms, round(cost_usd, 4) AS cost_usd FROM run_summary"
  local m=scenarios/pd_mixed.yaml s=(--store summary) r
  fence_open
  for r in round_robin least_tokens; do
    show --silent llmsim run $m "${s[@]}" --set decode.router=$r
  done
  for r in '{gpu: h100-sxm, count: 3}' '{gpu: b200, count: 3}'; do
    show --silent llmsim run $m "${s[@]}" --set "decode.replicas=[$r]"
  done
  show_table "$q"
}

gen_capacity_sweep() {
  fence_open
  show llmsim sweep scenarios/capacity.yaml --vary workload.arrival.rate=2,4,6,8,10 --store summary
  fence_close
}

gen_capacity_schedulers() {
  fence_open
  show llmsim capacity scenarios/capacity.yaml --slo ttft_p99=1000ms,tpot_p99=50ms \
    --compare scheduler=vllm-v0,vllm,chunked
  fence_close
}

gen_capacity_pd_compare() {
  fence_open
  show llmsim capacity scenarios/pd_llama70b.yaml --slo ttft_p99=1000ms,tpot_p99=50ms \
    --compare pd=1:1,1:2,2:3
  fence_close
}

gen_capacity_pd_target() {
  fence_open
  show llmsim capacity scenarios/pd_llama70b.yaml --slo ttft_p99=1000ms,tpot_p99=50ms \
    --target-rate 20
  fence_close
}

gen_sweep_demo() {
  fence_open
  show llmsim sweep scenarios/demo.yaml --vary scheduler.name=orca,chunked \
    --vary workload.arrival.rate=2:10:4 --reps 3 --set workload.num_requests=600 --store summary
  fence_close
}

gen_schema() {
  "$LLMSIM" run scenarios/demo.yaml --quiet --set workload.num_requests=5 >/dev/null
  local t
  echo '| table or view | columns |'
  echo '|---|---|'
  for t in $(sqlite3 llmsim.db "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')
                                 AND name NOT LIKE 'sqlite_%' ORDER BY type, name"); do
    printf '| `%s`%s | %s |\n' "$t" \
      "$(sqlite3 llmsim.db "SELECT CASE type WHEN 'view' THEN ' (view)' ELSE '' END
                            FROM sqlite_master WHERE name = '$t'")" \
      "$(sqlite3 llmsim.db "SELECT group_concat(name, ', ') FROM pragma_table_info('$t')")"
  done
  echo
  echo "Schema version $(sqlite3 llmsim.db "SELECT max(version) FROM schema_version"), application id" \
    "$(printf '0x%X' "$(sqlite3 llmsim.db 'PRAGMA application_id')")."
}

gen_validate_list() { fence_open; show llmsim validate --list; fence_close; }

# A validation's summary: the header, the table by group, the approximations and the reasons
# rows cannot be expressed, without the per-row lists (--rows and --json give them).
validate_summary() {
  awk '/^TTFT |^time / {skip = 1}
       /^error by group/ {skip = 0}
       /^ *rows:/ {rows = 1; next}
       rows && /^                / {next}
       {rows = 0}
       /^stored as validation/ {next}
       skip {next}
       /^$/ {blank++; next}
       {for (; blank > 0; blank--) print ""; print}'
}

# The heading of two runs: a validated group, and none (the first two lines of each).
gen_validated_error() {
  local f
  fence_open
  for f in shared_prefix demo; do
    show llmsim run "scenarios/$f.yaml" --no-db >"$SCRATCH/.out"
    head -3 "$SCRATCH/.out"
    [ $f = demo ] || echo
  done
  fence_close
}

# README's Fidelity table: the development set per engine (the rows whose id names it) and per
# regime, now, beside the figures of main at 071b4f2 (the set as it stood when the first-token
# work began: the engines' stock limits, 803 aggregated rows, the same command), then the rows
# the set cannot express, by reason.
gen_readme_fidelity() {
  local v="$SCRATCH/.fid" e
  "$LLMSIM" validate aic-silicon-h100 --jobs 2 --quiet >"$v.all"
  for e in vllm sglang trtllm; do
    "$LLMSIM" validate aic-silicon-h100 --jobs 2 --quiet --match "_${e}_" >"$v.$e"
  done
  echo '| rows | before: n | TTFT median / p90 / signed | TPOT median | now: n | TTFT median / p90 / signed | TPOT median / signed |'
  echo '|---|---|---|---|---|---|---|'
  # label, file, the line's first word, the figures before
  while IFS='|' read -r label file key before; do
    awk -v label="$label" -v key="$key" -v before="$before" '
      $1 == key && $2 == "TTFT" && !t {t = $3 " | " $4 " / " $5 " / " $7}
      $1 == key && $2 == "TPOT" && !p {p = $4 " / " $7}
      END {if (!t) exit 1; printf "| %s | %s | %s | %s |\n", label, before, t, p}' "$v.$file"
  done <<'ROWS'
all|all|all|803 | 52.0% / 177.6% / +27.8% | 9.2%
vLLM|vllm|all|237 | 65.3% / 246.5% / +48.8% | 9.6%
SGLang|sglang|all|84 | 35.4% / 75.5% / +33.6% | 8.4%
TensorRT-LLM|trtllm|all|482 | 54.0% / 138.8% / +13.5% | 9.3%
regime engine-staggered|all|engine-staggered|502 | 67.2% / 207.8% / +66.0% | 8.0%
regime slot-bound|all|slot-bound|102 | 34.7% / 94.4% / +6.1% | 13.8%
regime long-prompt|all|long-prompt|199 | 33.8% / 83.9% / -23.3% | 10.7%
regime disaggregated|all|disaggregated|- | - | -
ROWS
  echo
  awk '/^measurements:/ {sub(/^measurements: /, ""); sub(/:/, " distinct measurements:");
                         print $0 "; those that cannot:"}
       /^cannot be expressed/ {on = 1; next}
       on && /^$/ {exit}
       on && /^ +[0-9]+  / {n = $1; sub(/^ +[0-9]+  /, ""); print "- " n ": " $0 "."}' "$v.all"
}

gen_fidelity_aic() {
  fence_open
  echo "\$ $SHOWN validate aic-silicon-h100 --jobs 2"
  "$LLMSIM" validate aic-silicon-h100 --jobs 2 --quiet --errors "$WORK/aic-errors.csv" | clean |
    validate_summary
  fence_close
}

# validation/errors.csv, whole: the development set's error per validated group, which `run`,
# `capacity` and `report` quote (written by the fidelity-aic fragment's run when it ran).
gen_validation_errors() {
  [ -f "$WORK/aic-errors.csv" ] ||
    "$LLMSIM" validate aic-silicon-h100 --jobs 2 --quiet --errors "$WORK/aic-errors.csv" >/dev/null
  cat "$WORK/aic-errors.csv"
}

# The rows of one selection, without the summary.
gen_fidelity_512() {
  fence_open
  echo "\$ $SHOWN validate aic-silicon-h100 --match _c512_"
  "$LLMSIM" validate aic-silicon-h100 --match _c512_ --quiet | clean |
    awk '/^TTFT / {on = 1} on && /^$/ {exit} on'
  fence_close
}

# The TTFT residual per group at each output length of the aggregated rows: in decode steps it
# would stay put if the harness counted a later token as the first; in closed-loop gaps it stays
# put if clients wait for another request's completion.
gen_fidelity_residuals() {
  local o
  fence_open
  # by output length, then TensorRT-LLM's and SGLang's aggregated rows together (their `mixed`,
  # `decode` and `rest` columns pair rows that differ only in output length)
  for o in x128_c x256_c x512_c trtllm_agg sglang_agg; do
    [ "$o" = x128_c ] || echo
    echo "\$ $SHOWN validate aic-silicon-h100 --match $o --residuals"
    "$LLMSIM" validate aic-silicon-h100 --match "$o" --residuals --quiet | clean |
      awk '/^TTFT residual/ {on = 1} /^(approximations|cannot be|failed|repeated|stored)/ {on = 0}
           on' | sed -e '${/^$/d}'
  done
  fence_close
}

gen_fidelity_ops() {
  fence_open
  echo "\$ $SHOWN validate --ops"
  "$LLMSIM" validate --ops --quiet | clean | validate_summary
  fence_close
}

# docs/fleet.md: a run's cost and energy, the catalog's and a scenario's price and power
gen_fleet_cost() {
  local q="SELECT id, round(gpu_hours, 4) AS gpu_hours, round(energy_kwh, 4) AS energy_kwh,
    round(joules_per_output_token, 3) AS j_per_out_tok, round(cost_usd, 4) AS cost_usd,
    round(cost_per_mtok_usd, 4) AS usd_per_mtok FROM run_summary"
  fence_open
  show --silent llmsim run scenarios/demo.yaml
  show --silent llmsim run scenarios/demo.yaml --set price.per_gpu_hour_usd=2.0 \
    --set 'power={idle_w: 70, max_w: 700}'
  show_table "$q"
}

# docs/fleet.md: admission control on an overloaded replica
gen_fleet_admission() {
  local over=(--set gpu=l40s --set workload.num_requests=1500 --set workload.arrival.rate=8
    --set 'workload.prompt_tokens={dist: uniform, min: 200, max: 2000}'
    --set 'workload.output_tokens={dist: uniform, min: 50, max: 400}')
  local q="SELECT id, CAST(completed AS INTEGER) AS completed, CAST(rejected AS INTEGER) AS
    rejected, round(p99_ttft_ms) AS p99_ttft_ms FROM run_summary"
  fence_open
  show --silent llmsim run scenarios/demo.yaml "${over[@]}"
  show --silent llmsim run scenarios/demo.yaml "${over[@]}" --set 'admission={queue_depth: 5}'
  show_table "$q"
}

# docs/priorities.md: the shipped two-class scenario, its per-class lines
gen_priority_run() { fence_open; show llmsim run scenarios/priority_classes.yaml; fence_close; }

# docs/priorities.md: the two classes under vLLM's priority and fcfs orders, SGLang's, and
# shedding the batch class at admission
gen_priority_classes() {
  local m="(SELECT round(value, 3) FROM metrics WHERE run_id = id AND name"
  local t="(SELECT round(value) FROM metrics WHERE run_id = id AND name"
  local q="SELECT id, $t = 'class.interactive.p99_ttft_ms') AS inter_p99_ttft,
    $m = 'class.interactive.slo_attainment') AS inter_slo, $t = 'class.batch.p99_ttft_ms')
    AS batch_p99_ttft, $m = 'class.batch.slo_attainment') AS batch_slo,
    $t = 'class.batch.rejected') AS batch_shed FROM run_summary"
  fence_open
  show --silent llmsim run scenarios/priority_classes.yaml
  show --silent llmsim run scenarios/priority_classes.yaml --set scheduler.scheduling_policy=fcfs
  show --silent llmsim run scenarios/priority_classes.yaml --set engine=sglang \
    --set 'scheduler={name: sglang, enable_priority_scheduling: true, schedule_low_priority_values_first: true}'
  show --silent llmsim run scenarios/priority_classes.yaml --set engine=sglang \
    --set 'scheduler={name: sglang}'
  show --silent llmsim run scenarios/priority_classes.yaml --set 'admission={queue_depth: 5}'
  show_table "$q"
}

# docs/fleet.md: the ServeGen day, autoscaled, on fixed fleets, with a long cold start
gen_fleet_diurnal() {
  local m="(SELECT round(value, 2) FROM metrics WHERE run_id = id AND name"
  local q="SELECT id, round(gpu_hours, 2) AS gpu_hours, round(cost_usd, 2) AS cost_usd,
    round(energy_kwh, 2) AS kwh, round(p99_ttft_ms) AS p99_ttft_ms,
    round(request_goodput / request_throughput, 4) AS within_slo,
    $m = 'replicas_mean') AS replicas_mean, $m = 'replicas_max') AS replicas_max FROM run_summary"
  local n
  fence_open
  show --silent llmsim run scenarios/fleet_diurnal.yaml --store summary
  for n in 4 5; do
    show --silent llmsim run scenarios/fleet_diurnal.yaml --store summary --set replicas=$n \
      --set autoscale.min_replicas=$n --set autoscale.max_replicas=$n
  done
  show --silent llmsim run scenarios/fleet_diurnal.yaml --store summary \
    --set autoscale.startup_s=600
  show_table "$q"
}

# docs/fleet.md: the compressed day on prefill and decode pools, each autoscaled by the planner,
# against fixed pools and a decode pool allowed down to one replica
gen_fleet_pd() {
  local m="(SELECT round(value, 2) FROM metrics WHERE run_id = id AND name"
  local q="SELECT id, round(gpu_hours, 2) AS gpu_hours, round(p99_ttft_ms) AS p99_ttft_ms,
    round(p99_tpot_ms, 1) AS p99_tpot_ms, round(request_goodput / request_throughput, 4) AS within_slo,
    $m = 'prefill_replicas_mean') AS prefill_mean, $m = 'decode_replicas_mean') AS decode_mean,
    $m = 'prefill_scale_ups') AS prefill_ups, $m = 'decode_scale_ups') AS decode_ups FROM run_summary"
  local p="role = 'prefill'" d="role = 'decode'" h="serving_ns + starting_ns + draining_ns"
  local t="SELECT win / 10 AS hour,
    round(sum(CASE WHEN $p THEN serving_ns END) / 300e9, 2) AS prefill_serving,
    round(max(CASE WHEN $p THEN $h END) / 30e9, 2) AS prefill_held_max,
    round(sum(CASE WHEN $d THEN serving_ns END) / 300e9, 2) AS decode_serving,
    round(max(CASE WHEN $d THEN $h END) / 30e9, 2) AS decode_held_max
    FROM fleet_pools WHERE run_id = 1 AND win < 240 GROUP BY hour"
  local n
  fence_open
  show --silent llmsim run scenarios/fleet_pd_diurnal.yaml --store summary
  for n in 2 3; do
    show --silent llmsim run scenarios/fleet_pd_diurnal.yaml --store summary \
      --set prefill.replicas=$n --set prefill.autoscale.min_replicas=$n \
      --set prefill.autoscale.max_replicas=$n --set decode.replicas=$n \
      --set decode.autoscale.min_replicas=$n --set decode.autoscale.max_replicas=$n
  done
  show --silent llmsim run scenarios/fleet_pd_diurnal.yaml --store summary \
    --set decode.autoscale.min_replicas=1
  show sqlite3 -header -column llmsim.db "$q"
  show sqlite3 -header -column llmsim.db "$t"
  fence_close
}

# docs/fleet.md: a burst under Kubernetes' default scale-up policies, a cautious one, none
gen_fleet_burst() {
  local m="(SELECT round(value, 2) FROM metrics WHERE run_id = id AND name"
  local q="SELECT id, round(gpu_hours, 2) AS gpu_hours, round(p99_ttft_ms) AS p99_ttft_ms,
    round(request_goodput / request_throughput, 4) AS within_slo,
    $m = 'replicas_mean') AS replicas_mean, $m = 'replicas_max') AS replicas_max FROM run_summary"
  fence_open
  show --silent llmsim run scenarios/fleet_burst.yaml
  show --silent llmsim run scenarios/fleet_burst.yaml \
    --set 'autoscale.behavior.scale_up={policies: [{type: pods, value: 1, period_s: 60}]}'
  show --silent llmsim run scenarios/fleet_burst.yaml --set 'autoscale.behavior={}'
  show_table "$q"
}

# docs/fleet.md: a crash and a slowdown in a fleet of four, without them, without retries, with a
# spare replica
gen_fleet_faults() {
  local m="(SELECT CAST(value AS INTEGER) FROM metrics WHERE run_id = id AND name"
  local q="SELECT id, CAST(completed AS INTEGER) AS completed, CAST(rejected AS INTEGER) AS lost,
    $m = 'fault_retried') AS retried, round(p99_ttft_ms) AS p99_ttft_ms,
    round(request_goodput / request_throughput, 4) AS within_slo, round(gpu_hours, 3) AS gpu_hours
    FROM run_summary"
  fence_open
  show --silent llmsim run scenarios/fleet_faults.yaml
  show --silent llmsim run scenarios/fleet_faults.yaml --set 'faults=[]'
  show --silent llmsim run scenarios/fleet_faults.yaml --set fault_retries.enabled=false
  show --silent llmsim run scenarios/fleet_faults.yaml --set replicas=5
  show_table "$q"
}

# docs/fleet.md: the multi-turn chat of sessions.yaml on an autoscaled fleet with a crash, behind
# a stateless router and three that keep state per replica slot
gen_fleet_routers() {
  local m="(SELECT round(value, 2) FROM metrics WHERE run_id = id AND name"
  local q="SELECT id, CAST(completed AS INTEGER) AS completed,
    (SELECT CAST(value AS INTEGER) FROM metrics WHERE run_id = id AND name = 'fault_retried') AS retried,
    round(prefix_hit_rate, 3) AS prefix_hit, round(mean_ttft_ms, 1) AS mean_ttft_ms,
    round(p99_ttft_ms, 1) AS p99_ttft_ms, $m = 'replicas_mean') AS replicas_mean,
    round(gpu_hours, 3) AS gpu_hours FROM run_summary"
  local fleet=(--set replicas=2 --set 'autoscale={metric: concurrency, target: 16, max_replicas: 6, interval_s: 15, scale_down_delay_s: 60}' --set 'faults=[{at_s: 120, replica: 0, kind: crash}]')
  fence_open
  for r in least_outstanding prefix_affinity session_affinity kv_router; do
    show --silent llmsim run scenarios/sessions.yaml --set router=$r "${fleet[@]}"
  done
  show_table "$q"
}

# docs/fleet.md: the ServeGen day's fleet timeline, hour by hour, and its replica time against the
# run's GPU-hours
gen_fleet_timeline() {
  local q="SELECT CAST(start_s / 3600 AS INTEGER) AS hour, round(avg(offered_rate), 2) AS offered,
    round(avg(serving), 2) AS serving, round(max(serving + starting + draining), 2) AS held_max,
    round(max(p99_ttft_ms)) AS worst_p99_ttft, round(min(slo_attainment), 3) AS worst_within_slo
    FROM fleet_timeline WHERE run_id = 1 GROUP BY hour"
  local g="SELECT count(*) AS windows, round(sum(gpu_hours), 6) AS timeline_gpu_hours,
    (SELECT round(gpu_hours, 6) FROM run_summary WHERE id = 1) AS run_gpu_hours
    FROM fleet_timeline WHERE run_id = 1"
  fence_open
  show --silent llmsim run scenarios/fleet_diurnal.yaml --store summary
  show sqlite3 -header -column llmsim.db "$q"
  show sqlite3 -header -column llmsim.db "$g"
  fence_close
}

gen_bench() {
  echo "Measured by \`scripts/docs.sh --class bench\` on $(nproc) cores of" \
    "$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), load average" \
    "$(cut -d' ' -f1 /proc/loadavg) when it started; wall-clock figures vary with the machine" \
    "and its load."
  echo
  fence_open
  show llmsim bench
  fence_close
}

gen_fidelity_h100_ops() {
  fence_open
  echo "\$ $SHOWN validate vidur-h100-ops"
  "$LLMSIM" validate vidur-h100-ops --quiet | clean | validate_summary
  fence_close
}

# ---- pictures (docs/*.png): drawn with --pictures, never checked ----

pictures() {
  local out="$ROOT/docs"
  echo "docs.sh: drawing the pictures in docs/" >&2
  "$LLMSIM" sweep scenarios/demo.yaml --db curve.db --store summary --quiet \
    --vary scheduler.name=static,orca,vllm,chunked --vary workload.arrival.rate=1:11:2 \
    --set workload.num_requests=600 >/dev/null
  "$LLMSIM" plot curve --sweep 1 --db curve.db --metric ttft --pct p99 -o "$out/curve.png"
  "$LLMSIM" run scenarios/timeline.yaml --db timeline.db --quiet --set scheduler.name=static >/dev/null
  "$LLMSIM" run scenarios/timeline.yaml --db timeline.db --quiet --set scheduler.name=orca >/dev/null
  "$LLMSIM" plot timeline --run 1,2 --db timeline.db -o "$out/timeline.png"
  "$LLMSIM" run scenarios/demo.yaml --db gantt.db --quiet --set scheduler.name=vllm \
    --set memory.gpu_utilization=0.22 --set workload.arrival.rate=6 --set workload.num_requests=50 \
    >/dev/null
  "$LLMSIM" plot gantt --run 1 --db gantt.db -o "$out/gantt.png"
  "$LLMSIM" run scenarios/fleet_diurnal.yaml --db fleet.db --store summary --quiet >/dev/null
  "$LLMSIM" run scenarios/fleet_diurnal.yaml --db fleet.db --store summary --quiet --set replicas=5 \
    --set autoscale.min_replicas=5 --set autoscale.max_replicas=5 >/dev/null
  "$LLMSIM" plot fleet --run 1,2 --db fleet.db -o "$out/fleet.png"
  "$LLMSIM" sweep scenarios/speculative_k.yaml --db spec.db --store summary --quiet \
    --vary speculative.num_speculative_tokens=0,1,2,3,5,7 --vary workload.arrival.rate=2:22:5 >/dev/null
  "$LLMSIM" plot curve --sweep 1 --db spec.db --metric tpot --pct mean \
    --by speculative.num_speculative_tokens -o "$out/speculative.png"
  "$LLMSIM" report --sweep 1 --db curve.db -o report-sweep.html
  if command -v chromium >/dev/null 2>&1; then
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$PWD/chromium-profile" --hide-scrollbars --window-size=1100,1500 \
      --screenshot="$out/report.png" "file://$PWD/report-sweep.html" 2>/dev/null
  else
    echo "docs.sh: no chromium: docs/report.png left as it is" >&2
  fi
  if [ -r "$DATA/validation/aic-silicon-h100.csv" ]; then
    "$LLMSIM" validate aic-silicon-h100 --db validate.db --quiet -o "$out/validation.png" >/dev/null
    "$LLMSIM" validate --ops --db validate.db --quiet -o "$out/validation-ops.png" >/dev/null
  else
    echo "docs.sh: no ../shared/data: the validation pictures left as they are" >&2
  fi
  rm -f "$out"/*.dat "$out"/*.gp
}

# ---- the pages' structure: checked with the fragments, in every class ----

README_MAX=20000 # bytes: the README says what llmsim is and points into docs/

# Prints each heading and link of the pages outside code fences: "H FILE SLUG" (GitHub's anchor:
# lower case, punctuation dropped, spaces as hyphens) and "L FILE LINE TARGET" for each relative
# link.
outline() {
  awk '/^ *```/ { fence = !fence; next }
       fence { next }
       /^#+ / { h = $0; sub(/^#+ +/, "", h); h = tolower(h); gsub(/[^a-z0-9 _-]/, "", h)
                gsub(/ /, "-", h); print "H", FILENAME, h; next }
       { l = $0
         while (match(l, /\]\([^) ]+\)/)) {
           t = substr(l, RSTART + 2, RLENGTH - 3); l = substr(l, RSTART + RLENGTH)
           if (t !~ /^[a-z]+:/) print "L", FILENAME, FNR, t } }' "${FILES[@]}"
}

# The README's size, every link between the pages (file and heading), and every
# `docs/PAGE.md, "Heading"` the tree's code and scripts point readers to. Prints each defect;
# returns 1 if any.
structure() {
  local bad=0 kind file line target path anchor size
  declare -A heads=()
  size=$(wc -c <README.md)
  if [ "$size" -gt $README_MAX ]; then
    echo "docs.sh: README.md is $size bytes, over $README_MAX: move sections into the docs/ pages" \
      "its table lists"
    bad=1
  fi
  while read -r kind file line target; do
    [ "$kind" = H ] && heads["$file#$line"]=1
  done < <(outline)
  while read -r kind file line target; do
    [ "$kind" = L ] || continue
    path=${target%%#*} anchor=
    [[ $target == *#* ]] && anchor=${target#*#}
    if [ -z "$path" ]; then
      path=$file
    else
      path=$(realpath -m --relative-to="$ROOT" "$(dirname "$file")/$path")
    fi
    if [ ! -e "$path" ]; then
      echo "docs.sh: $file:$line: link to $target: no $path"
      bad=1
    elif [ -n "$anchor" ] && [ -z "${heads["$path#$anchor"]:-}" ]; then
      echo "docs.sh: $file:$line: link to $target: $path has no heading '#$anchor'"
      bad=1
    fi
  done < <(outline)
  if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    while IFS=: read -r file line target; do
      path=${target%%,*} anchor=${target#*\"}
      anchor=$(printf '%s' "${anchor%\"}" | tr 'A-Z' 'a-z' | tr -cd 'a-z0-9 _-' | tr ' ' '-')
      if [ ! -e "$path" ]; then
        echo "docs.sh: $file:$line: points to $path, which does not exist"
        bad=1
      elif [[ $target == *'"'* ]] && [ -z "${heads["$path#$anchor"]:-}" ]; then
        echo "docs.sh: $file:$line: points to ${target#*, } in $path, which has no such heading"
        bad=1
      fi
    done < <(git -C "$ROOT" grep -noE 'docs/[a-z0-9-]+\.md(, "[^"]+")?' -- ':!docs/' ':!README.md')
  fi
  return $bad
}

# ---- the machinery ----

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }

check=0 pics=0 list=0 class="cheap slow"
names=()
while [ $# -gt 0 ]; do
  case "$1" in
  --check) check=1 ;;
  --pictures) pics=1 ;;
  --list) list=1 ;;
  --class)
    shift
    case "${1:-}" in
    cheap | slow | bench) class=$1 ;;
    all) class="cheap slow bench" ;;
    *) echo "docs.sh: --class takes cheap, slow, bench or all" >&2; exit 2 ;;
    esac
    ;;
  -h | --help) usage; exit 0 ;;
  -*) echo "docs.sh: unknown option $1 (scripts/docs.sh --help)" >&2; exit 2 ;;
  *) names+=("$1") ;;
  esac
  shift
done

FILES=(README.md docs/*.md)
declare -A CLASS NEEDS WHERE WHOLE
for f in "${FRAGMENTS[@]}"; do
  read -r n c d w <<<"$f"
  CLASS[$n]=$c NEEDS[$n]=$d WHOLE[$n]=${w:-}
  [ -z "${w:-}" ] || WHERE[$n]=$w
done

# Every marker pairs with its END and names a fragment listed above.
bad=0
for file in "${FILES[@]}"; do
  while IFS= read -r n; do
    if [ -z "${CLASS[$n]:-}" ]; then
      echo "docs.sh: $file: fragment '$n' has no generator in scripts/docs.sh" >&2
      bad=1
    fi
    WHERE[$n]="${WHERE[$n]:-}${WHERE[$n]:+ }$file"
  done < <(sed -n 's/^<!-- BEGIN docs.sh:\([a-z0-9-]*\) -->$/\1/p' "$file")
  awk -v f="$file" '
    /^<!-- BEGIN docs.sh:/ { if (open != "") { print f ":" NR ": BEGIN inside " open; bad = 1 }
                             open = $3; sub(/^docs.sh:/, "", open) }
    /^<!-- END docs.sh:/   { n = $3; sub(/^docs.sh:/, "", n)
                             if (n != open) { print f ":" NR ": END " n " without its BEGIN"; bad = 1 }
                             open = "" }
    END { if (open != "") { print f ": " open " has no END"; bad = 1 } exit bad }' "$file" >&2 ||
    bad=1
done
[ $bad = 0 ] || exit 1

if [ $list = 1 ]; then
  for f in "${FRAGMENTS[@]}"; do
    read -r n c d _ <<<"$f"
    printf '%-22s %-6s %-14s %s%s\n' "$n" "$c" "$d" "${WHERE[$n]:-(not used)}" \
      "${WHOLE[$n]:+ (the whole file)}"
  done
  exit 0
fi

[ -x "$LLMSIM" ] || {
  echo "docs.sh: no llmsim at $LLMSIM: build it (scripts/setup.sh) or set LLMSIM" >&2
  exit 1
}

# the fragments to make: named, or those of the chosen classes that the docs use
todo=()
if [ ${#names[@]} -gt 0 ]; then
  for n in "${names[@]}"; do
    [ -n "${CLASS[$n]:-}" ] || { echo "docs.sh: no fragment '$n' (scripts/docs.sh --list)" >&2; exit 2; }
    [ -n "${WHERE[$n]:-}" ] || { echo "docs.sh: fragment '$n' is in no page" >&2; exit 2; }
    todo+=("$n")
  done
else
  for f in "${FRAGMENTS[@]}"; do
    read -r n c _ <<<"$f"
    [[ " $class " == *" $c "* ]] && [ -n "${WHERE[$n]:-}" ] && todo+=("$n")
  done
fi
if [ $check = 1 ]; then
  for i in "${!todo[@]}"; do
    if [ "${CLASS[${todo[$i]}]}" = bench ]; then
      echo "docs.sh: ${todo[$i]}: wall-clock figures, not checked" >&2
      unset 'todo[i]'
    fi
  done
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/llmsim-docs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
made=() skipped=()
for n in "${todo[@]}"; do
  missing=""
  for need in ${NEEDS[$n]//,/ }; do
    case "$need" in
    data) [ -d "$DATA" ] || missing+=" ../shared/data" ;;
    sqlite3) command -v sqlite3 >/dev/null 2>&1 || missing+=" sqlite3 (apt-get install sqlite3)" ;;
    esac
  done
  if [ -n "$missing" ]; then
    echo "docs.sh: $n: skipped, needs$missing" >&2
    skipped+=("$n")
    continue
  fi
  SCRATCH="$WORK/$n"
  mkdir -p "$SCRATCH"
  ln -s "$ROOT/scenarios" "$SCRATCH/scenarios"
  ln -s "$ROOT/validation" "$SCRATCH/validation"
  [ $check = 1 ] || echo "docs.sh: $n (${CLASS[$n]})" >&2
  if ! (cd "$SCRATCH" && "gen_${n//-/_}") >"$WORK/$n.md"; then
    echo "docs.sh: fragment '$n' failed; nothing written" >&2
    exit 1
  fi
  made+=("$n")
done

# Prints file's text with fragment n's body replaced by $WORK/n.md for each n made.
splice() {
  awk -v dir="$WORK" -v made=" ${made[*]} " '
    /^<!-- BEGIN docs.sh:/ { print; n = $3; sub(/^docs.sh:/, "", n)
                             if (index(made, " " n " ")) {
                               while ((getline l < (dir "/" n ".md")) > 0) print l
                               close(dir "/" n ".md"); skip = 1 }
                             next }
    /^<!-- END docs.sh:/   { skip = 0 }
    !skip' "$1"
}

# Prints the body of fragment n in file.
body() {
  awk -v n="$2" '$0 == "<!-- END docs.sh:" n " -->" {on = 0}
                 on
                 $0 == "<!-- BEGIN docs.sh:" n " -->" {on = 1}' "$1"
}

stale=0
if [ $check = 1 ]; then
  for n in "${made[@]}"; do
    if [ -n "${WHOLE[$n]}" ]; then
      if ! cmp -s "${WHOLE[$n]}" "$WORK/$n.md"; then
        echo "docs.sh: STALE: ${WHOLE[$n]}, generated whole by '$n' (regenerate: scripts/docs.sh $n)"
        diff -u --label "${WHOLE[$n]}" --label "what the build prints" "${WHOLE[$n]}" \
          "$WORK/$n.md" | head -40 || true
        stale=1
      fi
      continue
    fi
    for file in ${WHERE[$n]}; do
      if ! body "$file" "$n" | cmp -s - "$WORK/$n.md"; then
        echo "docs.sh: STALE: $file, fragment '$n' (regenerate: scripts/docs.sh $n)"
        body "$file" "$n" | diff -u --label "$file ($n)" --label "what the build prints" - \
          "$WORK/$n.md" | head -40 || true
        stale=1
      fi
    done
  done
  structure || stale=1
  if [ $stale = 0 ]; then
    echo "docs.sh: ${#made[@]} fragments match the build${skipped:+; skipped: ${skipped[*]}};" \
      "links and the README's size are sound"
  fi
  exit $stale
fi

for n in "${made[@]}"; do
  w=${WHOLE[$n]}
  if [ -n "$w" ] && ! cmp -s "$WORK/$n.md" "$w"; then
    cat "$WORK/$n.md" >"$w"
    echo "docs.sh: rewrote $w" >&2
  fi
done
for file in "${FILES[@]}"; do
  splice "$file" >"$WORK/.new"
  cmp -s "$WORK/.new" "$file" || { cat "$WORK/.new" >"$file"; echo "docs.sh: rewrote $file" >&2; }
done
if [ $pics = 1 ]; then
  SCRATCH="$WORK/pictures"
  mkdir -p "$SCRATCH"
  ln -s "$ROOT/scenarios" "$SCRATCH/scenarios"
  (cd "$SCRATCH" && pictures)
fi
structure || exit 1
