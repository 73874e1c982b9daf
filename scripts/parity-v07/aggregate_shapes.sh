#!/usr/bin/env bash
# More oracle fixtures for `gym eval aggregate` (issue 58, item 9): shards from fan-out runs,
# environment-server labels, 20+ shards, shards with and without `_failures.jsonl` sidecars,
# counted zeros beside masked rows. Recorded from NeMo Gym v0.7.0 on a live stack with two agents
# on one resources server (and, for the label cases, a second environment server in front of the
# first agent):
#
#   gym07-stack.sh start S -- --config second_agent.yaml                  # stack "fan"
#   scripts/parity-v07/aggregate_shapes.sh fan tests/fixtures/aggregate-v07
#   gym07-stack.sh stop S; gym07-stack.sh start S -- --config second_agent.yaml --config twin_server.yaml
#   scripts/parity-v07/aggregate_shapes.sh twin tests/fixtures/aggregate-v07
#
# (gym07-stack.sh is the outside oracle's stack script; `configs` below prints the two YAML files.)
# Cases have the layout of aggregate_cases.sh's (shards/, args, expected/), plus `stack.json`: the
# stack's agents (with their resources server) and environment servers (with the agent each
# fronts), so the replay (tests/collect/aggregate_v07.rs) starts a stand-in of the same shape.
# Env: V07 (the venv, default ~/.cache/gym07), HEAD (default 127.0.0.1:11000).
set -euo pipefail
mode=${1:?usage: aggregate_shapes.sh fan|twin|configs OUT_DIR}
A=example_single_tool_call_simple_agent
B=example_single_tool_call_second_agent
R=example_single_tool_call
EA=example_single_tool_call_environment_server
EB=example_single_tool_call_second_environment_server
ET=example_single_tool_call_twin_environment_server
if [ "$mode" = configs ]; then
  cat <<EOF
# second_agent.yaml
$B:
  responses_api_agents:
    simple_agent:
      entrypoint: app.py
      resources_server: {type: resources_servers, name: $R}
      model_server: {type: responses_api_models, name: policy_model}
# twin_server.yaml
$ET:
  environment_servers:
    legacy_agent:
      entrypoint: app.py
      agent_server: {type: responses_api_agents, name: $A}
EOF
  exit 0
fi
out=${2:?usage: aggregate_shapes.sh fan|twin OUT_DIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
. "$(dirname "$0")/stack_env.sh"

stack_json() { # case: the stand-in's shape for this mode
  if [ "$mode" = fan ]; then
    echo "{\"agents\": {\"$A\": \"$R\", \"$B\": \"$R\"}, \"environment_servers\": {\"$EA\": \"$A\", \"$EB\": \"$B\"}}"
  else
    echo "{\"agents\": {\"$A\": \"$R\", \"$B\": \"$R\"}, \"environment_servers\": {\"$EA\": \"$A\", \"$EB\": \"$B\", \"$ET\": \"$A\"}}"
  fi > "$out/$1/stack.json"
}

# make_input FILE N FIRST FAIL...: N rows cycling the wheel's example, only `task_source` naming
# where they go, numbered from task FIRST; rows listed in FAIL (0-based) fail their model call.
make_input() {
  "$py" - "$example" "$@" <<'PY'
import json, sys
ex = [json.loads(l) for l in open(sys.argv[1])]
path, n, first, fail = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), {int(x) for x in sys.argv[5:]}
with open(path, "w") as f:
    for i in range(n):
        r = json.loads(json.dumps(ex[i % len(ex)]))
        r.pop("agent_ref", None)
        r["task_source"] = "example_single_tool_call"
        r["_ng_task_index"] = first + i
        if i in fail:
            r["responses_create_params"]["input"][-1]["content"] += " [[http=400]]"
        f.write(json.dumps(r) + "\n")
PY
}

collect() { # shards_dir name input extra...
  local dir=$1 name=$2 input=$3; shift 3
  (cd "$work" && "$gym" eval run --no-serve -i "$input" -o "$dir/$name" +disable_aggregation=true \
    +disable_health_check=true +route_failures_to_sidecar=true "$head_arg" "$@" > /dev/null 2>&1) || true
}

record() { # case args...
  local case=$1; shift
  local run=$work/run-$case
  rm -rf "$run" "$out/$case/expected"; mkdir -p "$run" "$out/$case/expected"
  cp -r "$out/$case/shards/." "$run/"
  printf '%s\n' "$@" > "$out/$case/args"
  stack_json "$case"
  (cd "$run" && "$gym" eval aggregate "$@" "$head_arg" > stdout 2> stderr; echo $? > exit_code) || true
  for f in stdout exit_code; do cp "$run/$f" "$out/$case/expected/$f"; done
  # An exception: its last line, as collect_cases.sh keeps it.
  grep -E '^[A-Za-z.]*(Error|Exception): ' "$run/stderr" | tail -1 | sed -E 's/^[A-Za-z.]*(Error|Exception): //' \
    > "$out/$case/expected/error" || true
  [ -s "$out/$case/expected/error" ] || rm "$out/$case/expected/error"
  # The outputs sit beside -o's file (OUT_SUB: its folder inside the run).
  for f in r.jsonl r_aggregate_metrics.json quality_summary.json rollout_verdicts.jsonl; do
    [ -f "$run/${OUT_SUB:-.}/$f" ] && cp "$run/${OUT_SUB:-.}/$f" "$out/$case/expected/$f"
  done
  echo "$case: exit $(cat "$run/exit_code")"
}

fan="+fan_out={$R: [$A, $B]}"
# ONLY="9 10" records those cases alone (a later case may copy an earlier one's shards).
want() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }

if [ "$mode" = fan ]; then
  if want 1; then
    # 1. Two shards of one fan-out run (rows name only their resources server; both agents run
    #    each), the second with a failed task in its sidecar; entries per environment server.
    c=$out/fan_out_shards; rm -rf "$c"; mkdir -p "$c/shards"
    make_input "$work/in0.jsonl" 3 0
    make_input "$work/in1.jsonl" 3 3 1
    collect "$c/shards" r-shard0.jsonl "$work/in0.jsonl" "$fan" +num_repeats=2
    collect "$c/shards" r-shard1.jsonl "$work/in1.jsonl" "$fan" +num_repeats=2
    record fan_out_shards -i 'r-shard*.jsonl' -o r.jsonl
  fi

  if want 2; then
    # 2. One fan-out run of 11 tasks cut into 22 shards (one per task and agent, numbered without
    #    padding so the glob's order is not the shards' order); only the failed tasks' shards have
    #    a sidecar.
    make_input "$work/in22.jsonl" 11 0 2 7
    collect "$work/whole" r.jsonl "$work/in22.jsonl" "$fan" +num_repeats=2
    c=$out/twenty_two_shards; rm -rf "$c"; mkdir -p "$c/shards"
    "$py" - "$work/whole" "$c/shards" "$A" <<'PY'
import json, sys
src, dst, a = sys.argv[1], sys.argv[2], sys.argv[3]
def shard(row):
    return 2 * row["_ng_task_index"] + (0 if row["agent_ref"]["name"] == a else 1)
for part in ("", "_failures", "_materialized_inputs"):
    # Every shard has its rollouts file (empty when each of its rollouts failed).
    by = {k: [] for k in range(22)} if part == "" else {}
    for line in open(f"{src}/r{part}.jsonl"):
        by.setdefault(shard(json.loads(line)), []).append(line)
    for k, lines in by.items():
        open(f"{dst}/r-shard{k}{part}.jsonl", "w").writelines(lines)
PY
    record twenty_two_shards -i 'r-shard*.jsonl' -o r.jsonl
  fi

  if want 3; then
    # 3. The 22 shards with counted zeros and masked rows: the failed rollouts counted as zeros,
    #    two rollouts that left no row imputed, and some of the rows that scored masked (every row
    #    of task 4, and one rollout of task 5 on the second agent).
    c=$out/twenty_two_shards_counted_zeros_masked; rm -rf "$c"; mkdir -p "$c/shards"
    cp "$out/twenty_two_shards/shards/"* "$c/shards/"
    "$py" - "$c/shards" "$B" <<'PY'
import json, sys
d, b = sys.argv[1], sys.argv[2]
def edit(name, fn):
    rows = [json.loads(l) for l in open(f"{d}/{name}")]
    rows = [r for r in (fn(r) for r in rows) if r is not None]
    open(f"{d}/{name}", "w").writelines(json.dumps(r) + "\n" for r in rows)
def mask_all(r):
    r["mask_sample"] = True
    return r
edit("r-shard8.jsonl", mask_all)
edit("r-shard9.jsonl", mask_all)
edit("r-shard11.jsonl", lambda r: dict(r, mask_sample=True) if r["_ng_rollout_index"] == 3 else r)
edit("r-shard0.jsonl", lambda r: None if r["_ng_rollout_index"] == 1 else r)
edit("r-shard13.jsonl", lambda r: None if r["_ng_rollout_index"] == 3 else r)
PY
    record twenty_two_shards_counted_zeros_masked -i 'r-shard*.jsonl' -o r.jsonl \
      "+count_failure_classes_as_zero=[agent_run_error]" +count_missing_rollouts_as_zero=true
  fi

  if want 4; then
    # 4. Shards with and without sidecars: one whose every rollout failed (an empty rollouts file and
    #    a sidecar), one plain run by the second agent alone (-a), the fan-out shards beside them.
    c=$out/sidecar_only_shard; rm -rf "$c"; mkdir -p "$c/shards"
    make_input "$work/in_fail.jsonl" 2 20 0 1
    make_input "$work/in_b.jsonl" 2 30
    collect "$c/shards" r-failed.jsonl "$work/in_fail.jsonl" "$fan"
    collect "$c/shards" r-second.jsonl "$work/in_b.jsonl" -a "$B" +num_repeats=3
    cp "$out/fan_out_shards/shards/r-shard0"* "$c/shards/"
    rm "$c/shards/r-second_failures.jsonl"
    record sidecar_only_shard -i "'r-failed.jsonl,r-second.jsonl,r-shard0.jsonl'" -o r.jsonl \
      "+count_failure_classes_as_zero=[agent_run_error]"
  fi

  if want 5; then
    # 5. Every row of one environment server masked: its entry holds coverage only.
    c=$out/one_server_all_masked; rm -rf "$c"; mkdir -p "$c/shards"
    cp "$out/fan_out_shards/shards/"* "$c/shards/"
    "$py" - "$c/shards" "$B" <<'PY'
import json, sys
d, b = sys.argv[1], sys.argv[2]
for name in ("r-shard0.jsonl", "r-shard1.jsonl"):
    rows = [json.loads(l) for l in open(f"{d}/{name}")]
    for r in rows:
        if r["agent_ref"]["name"] == b:
            r["mask_sample"] = True
    open(f"{d}/{name}", "w").writelines(json.dumps(r) + "\n" for r in rows)
PY
    record one_server_all_masked -i 'r-shard*.jsonl' -o r.jsonl
  fi

  if want 9; then
    # 9. The fan-out shards scored without merging, -o in a folder of its own, with counted zeros.
    c=$out/fan_out_not_merged; rm -rf "$c"; mkdir -p "$c/shards"
    cp "$out/fan_out_shards/shards/"* "$c/shards/"
    OUT_SUB=out record fan_out_not_merged -i 'r-shard*.jsonl' -o out/r.jsonl +merge_shards=false \
      "+count_failure_classes_as_zero=[agent_run_error]" +count_missing_rollouts_as_zero=true
  fi

  if want 10; then
    # 10. The 22 shards without the rollouts files of the four whose every rollout failed: their
    #     sidecars and materialized inputs lie beside the others, but the glob finds no shard there.
    c=$out/sidecars_without_rollouts_file; rm -rf "$c"; mkdir -p "$c/shards"
    cp "$out/twenty_two_shards/shards/"* "$c/shards/"
    rm "$c/shards/r-shard4.jsonl" "$c/shards/r-shard5.jsonl" "$c/shards/r-shard14.jsonl" "$c/shards/r-shard15.jsonl"
    record sidecars_without_rollouts_file -i 'r-shard*.jsonl' -o r.jsonl \
      "+count_failure_classes_as_zero=[agent_run_error]" +count_missing_rollouts_as_zero=true
  fi

  if want 11; then
    # 11. Rollouts that cannot be imputed: the second fan-out shard's materialized rows stripped of
    #     their agent (two of its rows gone), and the second agent's plain shard without its
    #     materialized file; v0.7.0 warns per shard, after the merge and the counted-failures line.
    c=$out/unroutable_and_missing_inventory; rm -rf "$c"; mkdir -p "$c/shards"
    cp "$out/fan_out_shards/shards/"* "$c/shards/"
    cp "$out/sidecar_only_shard/shards/r-second.jsonl" "$c/shards/r-shard2.jsonl"
    "$py" - "$c/shards" <<'PY'
import json, sys
d = sys.argv[1]
rows = [json.loads(l) for l in open(f"{d}/r-shard1_materialized_inputs.jsonl")]
for r in rows:
    r.pop("agent_ref", None)
    r.pop("_ng_environment_server", None)
open(f"{d}/r-shard1_materialized_inputs.jsonl", "w").writelines(json.dumps(r) + "\n" for r in rows)
lines = open(f"{d}/r-shard1.jsonl").readlines()
open(f"{d}/r-shard1.jsonl", "w").writelines(lines[2:])
PY
    record unroutable_and_missing_inventory -i 'r-shard*.jsonl' -o r.jsonl \
      "+count_failure_classes_as_zero=[agent_run_error]" +count_missing_rollouts_as_zero=true
  fi

  if want 12; then
    # 12. Only counted zeros: the shard whose every rollout failed, alone; its failures are scored.
    c=$out/only_counted_zeros; rm -rf "$c"; mkdir -p "$c/shards"
    cp "$out/sidecar_only_shard/shards/r-failed"* "$c/shards/"
    record only_counted_zeros -i 'r-*.jsonl' -o r.jsonl "+count_failure_classes_as_zero=[agent_run_error]"
  fi
else
  if want 6; then
    # 6. Two environment servers in front of one agent: shards routed to each by name (legacy
    #    routing), and the second agent's; the first agent's entries are labelled by server.
    c=$out/environment_server_labels; rm -rf "$c"; mkdir -p "$c/shards"
    make_input "$work/in_ea.jsonl" 3 0 1
    make_input "$work/in_et.jsonl" 2 3
    make_input "$work/in_eb.jsonl" 2 5
    collect "$c/shards" r-ea.jsonl "$work/in_ea.jsonl" -a "$A" +environment_routing_mode=legacy "+environment_server_name=$EA"
    collect "$c/shards" r-et.jsonl "$work/in_et.jsonl" -a "$A" +environment_routing_mode=legacy "+environment_server_name=$ET"
    collect "$c/shards" r-eb.jsonl "$work/in_eb.jsonl" -a "$B" +num_repeats=2
    record environment_server_labels -i 'r-e*.jsonl' -o r.jsonl "+count_failure_classes_as_zero=[agent_run_error]"
  fi

  if want 7; then
    # 7. The same shards with the stamps taken off the first agent's rows: they cannot choose between
    #    its two servers.
    c=$out/unstamped_rows_two_servers; rm -rf "$c"; mkdir -p "$c/shards"
    cp "$out/environment_server_labels/shards/"* "$c/shards/"
    sed -i -E 's/, "_ng_environment_server": "[a-z_]+"|"_ng_environment_server":"[a-z_]+",?//' "$c/shards/r-ea.jsonl"
    record unstamped_rows_two_servers -i 'r-e*.jsonl' -o r.jsonl
  fi

  if want 8; then
    # 8. Rows stamped with a server the running config does not have.
    c=$out/stamp_not_in_config; rm -rf "$c"; mkdir -p "$c/shards"
    cp "$out/environment_server_labels/shards/r-eb"* "$c/shards/"
    sed -i "s/$EB/retired_environment_server/" "$c/shards/r-eb.jsonl"
    record stamp_not_in_config -i r-eb.jsonl -o r.jsonl
  fi
fi
