#!/usr/bin/env bash
# Oracle fixtures for `gym eval run --no-serve` materialization and routing, recorded from NeMo Gym
# v0.7.0 on a live stack.
#
#   ../shared/oracle/gym07-stack.sh start        # v0.7.0 servers on 127.0.0.1:11000 (about 25 s)
#   scripts/parity-v07/collect_cases.sh tests/fixtures/collect-v07
#
# Each case OUT/<case>/ holds `input.jsonl` (rows made from the wheel's example data), `args` (the
# flags after `-i input.jsonl -o r.jsonl`, one per line, as both tools take them) and `expected/`:
# v0.7.0's `r_materialized_inputs.jsonl` (absent when it stopped first), `stdout`, the last line of
# its stderr (`error`, the exception's message), its warnings (`warnings`) and `exit_code`. The stack's agent is
# `example_single_tool_call_simple_agent` (resources server `example_single_tool_call`, environment
# server `example_single_tool_call_environment_server`).
# Env: V07 (the venv, default ~/.cache/gym07), HEAD (default 127.0.0.1:11000).
# Tests and CI never run this: `tests/collect/collect_v07.rs` replays the cases against gymscope's
# stand-in stack, which has the same agent, resources server and environment server names.
set -euo pipefail
out=${1:?usage: collect_cases.sh OUT_DIR}
. "$(dirname "$0")/stack_env.sh"
A=example_single_tool_call_simple_agent
R=example_single_tool_call

# make_input CASE KIND: the example's rows, reshaped.
make_input() {
  "$V07/bin/python" - "$example" "$out/$1/input.jsonl" "$2" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
kind = sys.argv[3]
A, R = "example_single_tool_call_simple_agent", "example_single_tool_call"
if kind == "foreign_agent_ref":
    for i, r in enumerate(rows):
        r["agent_ref"] = {"type": "responses_api_agents", "name": "old_agent" if i % 2 else A}
elif kind == "task_source":
    for r in rows:
        r["task_source"] = R
elif kind == "mixed":
    rows = rows[:3]
    rows[0]["agent_ref"] = {"type": "responses_api_agents", "name": A}
    rows[1]["task_source"] = R
elif kind == "bad_task_source":
    rows[2]["task_source"] = R + "_typo"
elif kind == "typo_task_source":
    for r in rows:
        r["task_source"] = R + "_typo"
elif kind == "unknown_agent":
    rows[1]["agent_ref"] = {"name": A.replace("simple", "simpel")}
    for r in rows:
        r.setdefault("agent_ref", {"name": A})
elif kind == "dup_lines":
    rows = [rows[0], rows[1], rows[0]]
with open(sys.argv[2], "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
PY
}

record() { # case kind args...
  local case=$1 kind=$2; shift 2
  rm -rf "${out:?}/$case"; mkdir -p "$out/$case/expected"
  make_input "$case" "$kind"
  printf '%s\n' "$@" > "$out/$case/args"
  local run=$work/$case; rm -rf "$run"; mkdir -p "$run"; cp "$out/$case/input.jsonl" "$run/"
  (cd "$run" && "$gym" eval run --no-serve -i input.jsonl -o r.jsonl "$@" +disable_health_check=true "$head_arg" \
      > stdout 2> stderr; echo $? > exit_code) || true
  cp "$run/stdout" "$run/exit_code" "$out/$case/expected/"
  # The exception's message, or the one inside argparse's `invalid configuration: … (Value error, M).`
  { grep -E '^[A-Za-z.]*(Error|Exception): ' "$run/stderr" | tail -1 | sed -E 's/^[A-Za-z.]*(Error|Exception): //'
    grep -o 'Value error, .*)\.$' "$run/stderr" | sed -E 's/^Value error, //; s/\)\.$//'; } > "$out/$case/expected/error" || true
  grep -o 'UserWarning: .*' "$run/stderr" | sed 's/^UserWarning: //' > "$out/$case/expected/warnings" || true
  [ -f "$run/r_materialized_inputs.jsonl" ] && cp "$run/r_materialized_inputs.jsonl" "$out/$case/expected/"
  echo "$case: exit $(cat "$run/exit_code")"
}

record agent_reroutes_every_row foreign_agent_ref -a "$A" +num_repeats=2
record interleaved_repeats plain -a "$A" +num_repeats=3 +interleave_repeats=true
record task_source_rows task_source +num_repeats=2
record task_source_mapped task_source "+agent_map={$R: $A}" "+num_repeats={$R: 2}"
record mixed_rows_default_map mixed "+agent_map={_default: $A}"
record mixed_rows_no_agent mixed
record repeats_by_routing_key task_source "+num_repeats={$A: 3}"
record repeats_missing_key task_source "+num_repeats={other: 3}"
record bad_task_source bad_task_source -a "$A" "+agent_map={$R: $A}"
record rows_without_agent_beside_task_source bad_task_source
record unresolvable_task_source typo_task_source
record unknown_agent unknown_agent
record agent_name_conflicts_with_map plain -a "$A" "+agent_map={_default: other_agent}"
record duplicate_lines_share_a_task dup_lines -a "$A" +num_repeats=2 +interleave_repeats=true
record limit_and_seed plain -a "$A" +limit=3 +num_repeats=2 +num_repeats_add_seed=true
