#!/usr/bin/env bash
# Oracle fixtures for `gym eval aggregate`, recorded from NeMo Gym v0.7.0 on a live stack.
#
#   ../shared/oracle/gym07-stack.sh start        # v0.7.0 servers on 127.0.0.1:11000 (about 25 s)
#   scripts/parity-v07/aggregate_cases.sh tests/fixtures/aggregate-v07
#
# For each case OUT/<case>/ holds `shards/` (the rollouts files, their sidecars and materialized
# inputs: made by `gym eval run --no-serve +disable_aggregation=true` against the stack, or
# written by hand), `args` (the flags after `gym eval aggregate`, one per line) and `expected/`:
# what v0.7.0 wrote, run in a copy of `shards/` (stdout, exit code and, from -o's folder, the merged file, `*_aggregate_metrics.json`,
# `quality_summary.json`, `rollout_verdicts.jsonl`).
# The stack's agent is `example_single_tool_call_simple_agent` behind
# `example_single_tool_call_environment_server`; the stand-in model fails a call whose text holds
# `[[http=400]]`. Env: V07 (the venv, default ~/.cache/gym07), HEAD (default 127.0.0.1:11000).
# Tests and CI never run this: they replay `expected/` against gymscope's stand-in stack.
set -euo pipefail
out=${1:?usage: aggregate_cases.sh OUT_DIR}
. "$(dirname "$0")/stack_env.sh"
agent=example_single_tool_call_simple_agent

# Input rows: the wheel's example, split in two; the second half numbered from task 3 (shards of
# one run must not share keys) and its first row failing its model call.
"$V07/bin/python" - "$example" "$work" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
a, b = rows[:3], rows[3:]
for i, r in enumerate(b):
    r["_ng_task_index"] = 3 + i
b[0]["responses_create_params"]["input"][-1]["content"] += " [[http=400]]"
for name, part in (("in0.jsonl", a), ("in1.jsonl", b)):
    with open(f"{sys.argv[2]}/{name}", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in part)
PY

collect() { # shards_dir name input extra...
  local dir=$1 name=$2 input=$3; shift 3
  "$gym" eval run --no-serve -a "$agent" -i "$input" -o "$dir/$name" +num_repeats=2 \
    +disable_aggregation=true +no_health_check=true "$head_arg" "$@" > /dev/null 2>&1 || true
}

record() { # case args...
  local case=$1; shift
  local run=$work/run-$case
  rm -rf "$run" "$out/$case/expected"; mkdir -p "$run" "$out/$case/expected"
  cp -r "$out/$case/shards/." "$run/"
  printf '%s\n' "$@" > "$out/$case/args"
  (cd "$run" && "$gym" eval aggregate "$@" "$head_arg" > stdout 2> stderr; echo $? > exit_code) || true
  # The outputs sit beside -o's file (OUT_SUB: its folder inside the run).
  for f in stdout exit_code; do cp "$run/$f" "$out/$case/expected/$f"; done
  for f in "${OUT_STEM:-r}.jsonl" "${OUT_STEM:-r}_aggregate_metrics.json" quality_summary.json rollout_verdicts.jsonl; do
    [ -f "$run/${OUT_SUB:-.}/$f" ] && cp "$run/${OUT_SUB:-.}/$f" "$out/$case/expected/$f"
  done
  echo "$case: exit $(cat "$run/exit_code")"
}

# 1. Two shards of one run, the second with two failed rollouts in its sidecar.
c=$out/two_shards_with_failures; rm -rf "$c"; mkdir -p "$c/shards"
collect "$c/shards" r-shard0.jsonl "$work/in0.jsonl"
collect "$c/shards" r-shard1.jsonl "$work/in1.jsonl" +route_failures_to_sidecar=true
record two_shards_with_failures -i 'r-shard*.jsonl' -o r.jsonl

# 2. The same shards scored without merging (`+merge_shards=false`; gymscope: --no-merge-shards).
c=$out/not_merged; rm -rf "$c"; mkdir -p "$c/shards"
cp "$out/two_shards_with_failures/shards/"* "$c/shards/"
# A comma in a flag's value needs Hydra's quotes upstream (`-i "'a,b'"`); gymscope takes both.
record not_merged -i "'r-shard1.jsonl, r-shard0.jsonl,r-shard1.jsonl'" -o r.jsonl +merge_shards=false

# 3. Rows written by hand from shard 0's: spaces, escapes, a float >= 1e16, keys reordered, rows
#    out of order, stamped and unstamped rows; a sidecar whose rows name a landed rollout, a lost
#    one without a class and one re-tried (the last attempt stands).
c=$out/hand_made_rows; rm -rf "$c"; mkdir -p "$c/shards"
"$V07/bin/python" - "$out/two_shards_with_failures/shards" "$c/shards" <<'PY'
import json, sys
src, dst = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(f"{src}/r-shard0.jsonl")]
out = []
for i, r in enumerate(reversed(rows)):
    # Nested: a top-level number this size breaks the resources server's histogram.
    r["extra"] = {"big": 1e16 if i % 2 else 12345678901234567.0, "neg": -0.0}
    r["note"] = "caf\u00e9 \u2603"
    if i % 3 == 0:
        r.pop("_ng_environment_server", None)
        r.pop("_ng_result_type", None)
    items = list(r.items())
    if i % 2:
        items.reverse()
    out.append(json.dumps(dict(items), ensure_ascii=(i % 2 == 0)))
with open(f"{dst}/r-hand.jsonl", "w") as f:
    f.writelines(l + "\n" for l in out)
mat = open(f"{src}/r-shard0_materialized_inputs.jsonl").read()
open(f"{dst}/r-hand_materialized_inputs.jsonl", "w").write(mat)
side = [
    {"_ng_failure_class": "transient", "_ng_task_index": 0, "_ng_rollout_index": 0, "agent_ref": {"name": "example_single_tool_call_simple_agent"}},
    {"_ng_task_index": 7, "_ng_rollout_index": 0, "agent_ref": {"name": "example_single_tool_call_simple_agent"}},
    {"_ng_failure_class": "transient", "_ng_task_index": 8, "_ng_rollout_index": 1, "agent_ref": {"name": "example_single_tool_call_simple_agent"}},
    {"_ng_failure_class": "timeout_exceeded", "_ng_task_index": 8, "_ng_rollout_index": 1, "agent_ref": {"name": "example_single_tool_call_simple_agent"}, "_ng_environment_server": "example_single_tool_call_environment_server"},
]
with open(f"{dst}/r-hand_failures.jsonl", "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in side)
PY
OUT_SUB=out OUT_STEM=merged record hand_made_rows -i 'r-hand.jsonl' -o out/merged.jsonl

# 4. Counted zeros: shard 1's failed rollouts (agent_run_error) and a rollout of shard 0 that left
#    no row at all (its line removed) join the score as zeros.
c=$out/counted_zeros; rm -rf "$c"; mkdir -p "$c/shards"
cp "$out/two_shards_with_failures/shards/"* "$c/shards/"
sed -i '$d' "$c/shards/r-shard0.jsonl"
record counted_zeros -i 'r-shard*.jsonl' -o r.jsonl "+count_failure_classes_as_zero=[agent_run_error]" \
  +count_missing_rollouts_as_zero=true

# 5. Nothing matches: upstream's error, nothing written.
c=$out/no_match; rm -rf "$c"; mkdir -p "$c/shards"
record no_match -i 'nothing-*.jsonl' -o r.jsonl
