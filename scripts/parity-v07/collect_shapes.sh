#!/usr/bin/env bash
# Oracle fixtures for issue 58's collect differences (item 10), recorded from NeMo Gym v0.7.0's
# `gym eval run --no-serve` on a live stack with two agents on one resources server:
#
#   gym07-stack.sh start S -- --config second_agent.yaml    # (aggregate_shapes.sh configs prints it)
#   scripts/parity-v07/collect_shapes.sh tests/fixtures/collect-v07 [GYMSCOPE_BIN]
#
# Each case OUT/<case>/ has collect_cases.sh's layout (input.jsonl, args, expected/ with stdout,
# exit_code, error, warnings and r_materialized_inputs.jsonl) plus `stack.json` (the stack's agents
# and environment servers, for the stand-in the replay starts) and `expected/summary.json`: what
# else the run left, made comparable across stacks (rollout rows written, the sidecar's
# `_ng_failure_*` fields, the 🚨 lines and the aggregate entries' labels and servers, a server's
# URL written `http://HOST`). `signal` (when present) holds the signal sent to the run once its
# first rollout row is written, with that signal ignored from the start (a background job of a
# script).
# Given GYMSCOPE_BIN, each case is also run through `gymscope collect` on the same stack and the
# two summaries are compared (printed: equal or the difference).
# The export case of item 10 (`gym eval export` without --agent-version) is recorded by
# atif_cases.py (tests/fixtures/atif-v07/agent_version_missing).
# Env: V07 (the venv, default ~/.cache/gym07), HEAD (default 127.0.0.1:11000).
# Tests and CI never run this: tests/collect/collect_v07.rs replays the cases on a stand-in.
set -euo pipefail
out=${1:?usage: collect_shapes.sh OUT_DIR [GYMSCOPE_BIN]}
mkdir -p "$out"; out=$(cd "$out" && pwd)
gymscope=${2:-}
. "$(dirname "$0")/stack_env.sh"
A=example_single_tool_call_simple_agent
B=example_single_tool_call_second_agent
R=example_single_tool_call

make_input() { # case kind
  "$py" - "$example" "$out/$1/input.jsonl" "$2" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
kind = sys.argv[3]
if kind == "task_source":
    rows = rows[:4]
    for r in rows:
        r.pop("agent_ref", None)
        r["task_source"] = "example_single_tool_call"
elif kind == "unprocessable":
    rows = rows[:3]
    # The agent's request model refuses it: FastAPI answers 422 (Python 3.13 words it
    # "Unprocessable Content").
    rows[2]["responses_create_params"]["temperature"] = "hot"
elif kind == "slow":
    rows = [json.loads(json.dumps(rows[i % len(rows)])) for i in range(8)]
    for r in rows:
        r["responses_create_params"]["input"][-1]["content"] += " [[sleep=1]]"
with open(sys.argv[2], "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
PY
}

# summary DIR: the comparable part of a run's outputs, as JSON on stdout.
summary() {
  "$py" - "$1" <<'PY'
import json, os, re, sys
d = sys.argv[1]
def url(s):
    return re.sub(r"http://[0-9.]+:[0-9]+", "http://HOST", s)
def rows(name):
    p = os.path.join(d, name)
    return [json.loads(l) for l in open(p)] if os.path.exists(p) else []
fails = [{k: url(v) if isinstance(v, str) else v for k, v in r.items() if k.startswith("_ng_failure_")}
         for r in rows("r_failures.jsonl")]
alerts = sorted(url(l.rstrip("\n")) for l in open(os.path.join(d, "stdout")) if l.startswith("\U0001f6a8"))
agg = []
p = os.path.join(d, "r_aggregate_metrics.json")
if os.path.exists(p):
    agg = sorted([e["agent_ref"]["name"], e.get("_ng_environment_server")] for e in json.load(open(p)))
# Sorted by compact JSON text, as the replay (serde_json's `to_string`) sorts them.
compact = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)
print(json.dumps({"rows": len(rows("r.jsonl")), "failures": sorted(fails, key=compact), "alerts": alerts,
                  "aggregate": agg}, indent=1, ensure_ascii=False))
PY
}

# run_tool DIR SIGNAL CMD...: runs CMD in DIR (stdout, stderr, exit_code); with SIGNAL, started with
# it ignored and sent it once r.jsonl has a row.
run_tool() {
  local dir=$1 sig=$2; shift 2
  if [ -n "$sig" ]; then
    (cd "$dir" && trap '' "$sig" && { "$@" > stdout 2> stderr & pid=$!
      for _ in $(seq 1 600); do [ -s r.jsonl ] && break; sleep 0.1; done
      kill -s "$sig" "$pid"; wait "$pid"; echo $? > exit_code; }) || true
  else
    (cd "$dir" && "$@" > stdout 2> stderr; echo $? > exit_code) || true
  fi
}

record() { # case kind signal args...
  local case=$1 kind=$2 sig=$3; shift 3
  rm -rf "${out:?}/$case"; mkdir -p "$out/$case/expected"
  make_input "$case" "$kind"
  printf '%s\n' "$@" > "$out/$case/args"
  [ -n "$sig" ] && echo "$sig" > "$out/$case/signal"
  echo "{\"agents\": {\"$A\": \"$R\", \"$B\": \"$R\"}, \"environment_servers\": {\"${R}_environment_server\": \"$A\", \"${R}_second_environment_server\": \"$B\"}}" \
    > "$out/$case/stack.json"
  local run=$work/$case; rm -rf "$run"; mkdir -p "$run"; cp "$out/$case/input.jsonl" "$run/"
  run_tool "$run" "$sig" "$gym" eval run --no-serve -i input.jsonl -o r.jsonl "$@" +disable_health_check=true "$head_arg"
  cp "$run/stdout" "$run/exit_code" "$out/$case/expected/"
  { grep -E '^[A-Za-z.]*(Error|Exception): ' "$run/stderr" | tail -1 | sed -E 's/^[A-Za-z.]*(Error|Exception): //'
    grep -o 'Value error, .*)\.$' "$run/stderr" | sed -E 's/^Value error, //; s/\)\.$//'; } > "$out/$case/expected/error" || true
  grep -o 'UserWarning: .*' "$run/stderr" | sed 's/^UserWarning: //' > "$out/$case/expected/warnings" || true
  [ -f "$run/r_materialized_inputs.jsonl" ] && cp "$run/r_materialized_inputs.jsonl" "$out/$case/expected/"
  summary "$run" > "$out/$case/expected/summary.json"
  echo "$case: v0.7.0 exit $(cat "$run/exit_code")"
  if [ -n "$gymscope" ]; then
    local mine=$work/$case-gymscope; rm -rf "$mine"; mkdir -p "$mine"; cp "$out/$case/input.jsonl" "$mine/"
    run_tool "$mine" "$sig" "$gymscope" collect -i input.jsonl -o r.jsonl "$@" --no-health-check --no-progress \
      --head-server "$HEAD"
    summary "$mine" > "$mine/summary.json"
    local same=differs
    cmp -s "$run/r_materialized_inputs.jsonl" "$mine/r_materialized_inputs.jsonl" 2>/dev/null && same=equal
    echo "  gymscope exit $(cat "$mine/exit_code"); materialized file $same; summary:" \
      "$(diff -q "$out/$case/expected/summary.json" "$mine/summary.json" > /dev/null && echo equal || diff "$out/$case/expected/summary.json" "$mine/summary.json")"
  fi
}

record fan_out_task_source_rows task_source "" "+fan_out={$R: [$A, $B]}"
record null_optional_keys plain "" -a "$A" +limit=null +num_samples_in_parallel=null \
  +max_resident_rollout_tasks=null +health_check_workers=null +dispatch_budget_s=null +drain_margin_s=null \
  +prompt_config=null +skills=null +rollout_collection_driver=null
record failure_reason_phrase unprocessable "" -a "$A" +route_failures_to_sidecar=true
record inherited_ignored_sigint slow INT -a "$A" +num_samples_in_parallel=2
