#!/usr/bin/env python3
"""Oracle fixtures for `gymscope health-check` recorded from NeMo Gym v0.7.0's `gym eval health-check`.

Writes one run dir per case and records what upstream writes and prints for it:

    OUT_DIR/<case>/rollouts.jsonl          the input (written here, never touched by upstream)
    OUT_DIR/<case>/args                    optional: extra CLI args, one argv token per line
                                           (`--ignore-checks` / `a,b` / `--json`), same spelling upstream
    OUT_DIR/<case>/expected/quality_summary.json, rollout_verdicts.jsonl   upstream's files, byte for byte
    OUT_DIR/<case>/expected/stdout         upstream's stdout bytes
    OUT_DIR/<case>/expected/exit_code      its exit status, e.g. `0`
    OUT_DIR/<case>/expected/stderr         only when the exit status is not 0

Upstream runs as `gym eval health-check <tmp>/<case> [args]` (nemo_gym/cli/main.py `_eval_health_check` ->
nemo_gym/cli/eval.py `health_check_rollouts` -> nemo_gym/rollout_health.py `health_check_run_dir`) on a
temporary copy of the run dir; that copy's absolute path is written as `<dir>` in every expected file
(stdout's `Quality summary:` line, `record_unreadable` locators' `source_file`).

    ~/.cache/gym07/bin/python scripts/parity-v07/health_cases.py OUT_DIR [case ...]
    ~/.cache/gym07/bin/python scripts/parity-v07/health_cases.py OUT_DIR --fuzz N --seed S

The generator is standard library only and deterministic. GYM names the CLI (default
~/.cache/gym07/bin/gym). Hand cases state the issue counts they are built to produce; a case whose
recorded counts differ is reported as MISMATCH (exit 1). Tests and CI never run this.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

GYM = os.environ.get("GYM", str(Path.home() / ".cache/gym07/bin/gym"))

CHECKS = (
    "check_execution_error",
    "record_unreadable",
    "rollout_duplicate_identity",
    "rollout_missing_agent_turns",
    "rollout_ended_on_failed_model_call",
    "agent_turn_hollow",
    "model_call_zero_completion_tokens",
    "model_call_missing_token_counts",
    "trajectory_capture_mismatch",
    "model_call_failed",
    "rollout_token_count_mismatch",
    "model_call_runaway_generation",
    "task_consistently_unhealthy",
    "task_no_successful_model_calls",
)
SHORT = {
    "check_execution_error": "exec_err",
    "record_unreadable": "unreadable",
    "rollout_duplicate_identity": "dup",
    "rollout_missing_agent_turns": "no_turns",
    "rollout_ended_on_failed_model_call": "ended_fail",
    "agent_turn_hollow": "hollow",
    "model_call_zero_completion_tokens": "zero_tok",
    "model_call_missing_token_counts": "miss_tok",
    "trajectory_capture_mismatch": "capture",
    "model_call_failed": "failed",
    "rollout_token_count_mismatch": "tok_mismatch",
    "model_call_runaway_generation": "runaway",
    "task_consistently_unhealthy": "task_unhealthy",
    "task_no_successful_model_calls": "task_no_success",
}

# ---------------------------------------------------------------------------------------------
# Builders for rows and `ng_trajectory` v1.0 records (nemo_gym/rollout_observability.py models)
# ---------------------------------------------------------------------------------------------


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


AUTO = _Marker("AUTO")  # let the builder fill the value in
OMIT = _Marker("OMIT")  # leave the key out
NOSTART = _Marker("NOSTART")  # a call without `started_at`

POLICY = {"type": "responses_api_models", "name": "policy"}
JUDGE = {"type": "responses_api_models", "name": "judge"}


def text_response(text: str = "done") -> Dict[str, Any]:
    return {"output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}]}


def tool_response() -> Dict[str, Any]:
    return {"output": [{"type": "function_call", "call_id": "fc1", "name": "lookup", "arguments": "{}"}]}


def mcall(
    cid: Optional[str] = None,
    *,
    rid: Any = AUTO,
    ref: Any = POLICY,
    status: Any = 200,
    rstatus: Any = None,
    finish: Any = "stop",
    err: Any = None,
    start: Any = AUTO,
    tin: Any = 10,
    tout: Any = 5,
    response: Any = AUTO,
    meta: Optional[Dict[str, Any]] = None,
    raw: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """One `TrajectoryModelCall`. None-valued metadata/token fields are left out (same as null)."""
    call: Dict[str, Any] = {}
    if cid is not None:
        call["model_call_id"] = cid
    if start is NOSTART:
        call["_nostart"] = True
    elif start is not AUTO:
        call["started_at"] = start
    call["response"] = {"output_text": f"answer {cid}"} if response is AUTO else response
    md: Dict[str, Any] = {}
    if rid is AUTO:
        rid = f"resp-{cid}" if cid is not None else None
    for key, value in (
        ("response_id", rid),
        ("model_ref", ref),
        ("status_code", status),
        ("response_status", rstatus),
        ("finish_reason", finish),
        ("error_category", err),
    ):
        if value is not None:
            md[key] = value
    md.update(meta or {})
    call["response_metadata"] = md
    ts: Dict[str, Any] = {}
    if tin is not None:
        ts["prompt_tokens"] = tin
    if tout is not None:
        ts["completion_tokens"] = tout
    call["token_stats"] = ts
    call.update(raw or {})
    return call


RefSpec = Union[str, Tuple[Any, str], Dict[str, Any]]


def ref(spec: RefSpec) -> Dict[str, Any]:
    """A `ModelCallRef`: "c1" -> by model_call_id, (model_ref, response_id) -> by response, dict -> as is."""
    if isinstance(spec, str):
        return {"model_call_id": spec}
    if isinstance(spec, tuple):
        return {"model_ref": spec[0], "response_id": spec[1]}
    return dict(spec)


def turn(n: int, refs: Sequence[RefSpec] = (), answer: Any = AUTO, **extra: Any) -> Dict[str, Any]:
    t: Dict[str, Any] = {"turn_no": n}
    t["answer"] = f"step {n}" if answer is AUTO else answer
    if refs:
        t["model_calls"] = [ref(r) for r in refs]
    t.update(extra)
    return t


def call_refspec(call: Dict[str, Any]) -> Optional[RefSpec]:
    md = call.get("response_metadata") or {}
    if call.get("model_call_id"):
        return call["model_call_id"]
    if isinstance(md.get("model_ref"), dict) and md.get("response_id"):
        return (md["model_ref"], md["response_id"])
    return None


def traj(
    task: Any,
    rollout: Any,
    calls: Sequence[Dict[str, Any]],
    turns: Any = AUTO,
    inv: Any = AUTO,
    gaps: Sequence[Any] = (),
    rid: Optional[str] = None,
    tool_calls: Sequence[Dict[str, Any]] = (),
    extra: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """A `TrajectoryRecord`. turns AUTO: one turn per referencable call; inv AUTO: one invocation
    referencing what the turns reference; inv a list: one invocation with those refs; inv None: none."""
    rollout_id = rid if rid is not None else f"{task}-{rollout}"
    task_id = str(task)
    calls = copy.deepcopy(list(calls))
    for i, c in enumerate(calls):
        if c.pop("_nostart", False):
            continue
        if "started_at" not in c:
            c["started_at"] = 1000.0 + 10 * i
    if turns is AUTO:
        specs = [s for s in (call_refspec(c) for c in calls) if s is not None]
        turns = [turn(i + 1, [s]) for i, s in enumerate(specs)]
    out_turns = []
    for t in copy.deepcopy(list(turns)):
        full = {"invocation_id": "inv-0", "task_id": task_id, "rollout_id": rollout_id, "timestamp": 2000.0}
        full.update(t)
        if "timestamp" not in t:
            full["timestamp"] = 2000.0 + t["turn_no"]
        full.setdefault("step_count", t["turn_no"])
        out_turns.append(full)
    if inv is AUTO:
        inv_refs: List[Dict[str, Any]] = []
        for t in out_turns:
            for r in t.get("model_calls", []):
                if r not in inv_refs:
                    inv_refs.append(r)
        invocations = [{"kind": "agent_invocation", "invocation_id": "inv-0", "status": "completed", "model_calls": inv_refs}]
    elif inv is None:
        invocations = []
    else:
        invocations = [
            {"kind": "agent_invocation", "invocation_id": "inv-0", "status": "completed", "model_calls": [ref(r) for r in inv]}
        ]
    record: Dict[str, Any] = {
        "schema_version": "1.0",
        "task_id": task_id,
        "rollout_id": rollout_id,
        "invocations": invocations,
        "turns": out_turns,
        "model_calls": calls,
    }
    if tool_calls:
        record["tool_calls"] = list(tool_calls)
    record["gaps"] = [gap(g) if isinstance(g, str) else g for g in gaps]
    record.update(extra or {})
    return record


def gap(code: str, detail: Optional[str] = None, invocation_id: Optional[str] = None) -> Dict[str, Any]:
    g: Dict[str, Any] = {"code": code}
    if invocation_id is not None:
        g["invocation_id"] = invocation_id
    if detail is not None:
        g["detail"] = detail
    return g


def _matches(r: Dict[str, Any], calls: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    out = []
    for c in calls:
        md = c.get("response_metadata") or {}
        if r.get("model_call_id"):
            if (
                c.get("model_call_id") == r["model_call_id"]
                and (r.get("model_ref") is None or r.get("model_ref") == md.get("model_ref"))
                and (r.get("response_id") is None or r.get("response_id") == md.get("response_id"))
            ):
                out.append(c)
        elif md.get("model_ref") == r.get("model_ref") and md.get("response_id") == r.get("response_id"):
            out.append(c)
    return out


def turn_bound_tokens(tr: Dict[str, Any]) -> Tuple[int, int]:
    """Token sums over the calls the turns reference uniquely (what upstream compares usage with)."""
    seen: List[Dict[str, Any]] = []
    bound: List[int] = []
    for t in tr.get("turns", []):
        for r in t.get("model_calls", []):
            if r in seen:
                continue
            seen.append(r)
            m = _matches(r, tr["model_calls"])
            if len(m) == 1 and id(m[0]) not in bound:
                bound.append(id(m[0]))
    p = c = 0
    for call in tr["model_calls"]:
        if id(call) in bound:
            ts = call.get("token_stats") or {}
            p += ts.get("prompt_tokens") if isinstance(ts.get("prompt_tokens"), int) else 0
            c += ts.get("completion_tokens") if isinstance(ts.get("completion_tokens"), int) else 0
    return p, c


def row(
    task: Any,
    rollout: Any,
    tr: Any = OMIT,
    *,
    usage: Any = AUTO,
    stage: Any = OMIT,
    rid: Any = OMIT,
    reward: float = 1.0,
    **extra: Any,
) -> Dict[str, Any]:
    """A rollout result row. task/rollout OMIT leave the index keys out; tr OMIT leaves
    `ng_trajectory` out; usage AUTO = the turn-bound capture sums, None = no usage, (p, c), or a dict."""
    r: Dict[str, Any] = {}
    if task is not OMIT:
        r["_ng_task_index"] = task
    if rollout is not OMIT:
        r["_ng_rollout_index"] = rollout
    if rid is not OMIT:
        r["_ng_rollout_id"] = rid
    if stage is not OMIT:
        r["stage_index"] = stage
    response: Dict[str, Any] = {"output_text": "final"}
    if usage is AUTO:
        usage = turn_bound_tokens(tr) if isinstance(tr, dict) else None
    if isinstance(usage, tuple):
        usage = {"input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": usage[0] + usage[1]}
    if usage is not None:
        response["usage"] = usage
    r["response"] = response
    r["reward"] = reward
    if tr is not OMIT:
        r["ng_trajectory"] = tr
    r.update(extra)
    return r


def simple(task: Any, rollout: Any, calls: Optional[Sequence[Dict[str, Any]]] = None, **kw: Any) -> Dict[str, Any]:
    """A row whose trajectory has one turn per call (default: two healthy policy calls)."""
    row_kw = {k: kw.pop(k) for k in ("usage", "stage", "rid", "reward") if k in kw}
    if calls is None:
        calls = [mcall("c0", tin=10, tout=5), mcall("c1", tin=12, tout=6)]
    return row(task, rollout, traj(task, rollout, calls, **kw), **row_kw)


Line = Union[Dict[str, Any], str]


class Case:
    def __init__(
        self,
        name: str,
        lines: Sequence[Line],
        want: Optional[Dict[str, int]] = None,
        args: Sequence[str] = (),
        verdicts: Optional[Tuple[int, int, int]] = None,
        exit_code: int = 0,
        trailing_newline: bool = True,
    ) -> None:
        self.name = name
        self.lines = list(lines)
        self.want = want  # nonzero issue counts the case is built to produce (None: not checked)
        self.args = list(args)
        self.verdicts = verdicts  # (healthy, unhealthy, unobserved) when checked
        self.exit_code = exit_code
        self.trailing_newline = trailing_newline

    def rollouts_bytes(self) -> bytes:
        text = "\n".join(l if isinstance(l, str) else json.dumps(l, separators=(",", ":")) for l in self.lines)
        if self.lines and self.trailing_newline:
            text += "\n"
        return text.encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Hand cases
# ---------------------------------------------------------------------------------------------

EI = "rollout_ended_on_failed_model_call"


def hand_cases() -> List[Case]:
    cases: List[Case] = []
    add = cases.append

    # -- healthy ---------------------------------------------------------------------------
    tool = {"kind": "tool_call", "invocation_id": "inv-0", "tool_call_id": "fc1", "tool_name": "lookup",
            "started_at": 1001.0, "completed_at": 1002.0, "status": "completed", "output": "42"}
    add(Case("healthy", [
        row(0, 0, traj(0, 0, [mcall("c0", tin=10, tout=5, rstatus="completed", response=text_response("hi"),
                                    raw={"completed_at": 1001.5, "duration_ms": 1500.0}),
                              mcall("c1", tin=12, tout=6, rstatus="completed")], tool_calls=[tool]),
            response={"id": "resp-final", "output": text_response("final")["output"],
                      "usage": {"input_tokens": 22, "output_tokens": 11, "total_tokens": 33}}),
        simple(0, 1),
        simple(1, 0, [mcall("c0", tin=3, tout=4, finish="tool_calls", response=tool_response())],
               turns=[turn(1, ["c0"], answer={"type": "function_call", "name": "lookup", "arguments": "{}"})]),
        simple(1, 1, [mcall(None, rid="r-a", tin=1, tout=1), mcall(None, rid="r-b", ref=JUDGE, tin=2, tout=2)]),
    ], want={}, verdicts=(4, 0, 0)))

    # -- record_unreadable -----------------------------------------------------------------
    add(Case("record_unreadable_json", [
        simple(0, 0),
        '{"_ng_task_index": 1, "_ng_rollout_index": 0, "reward": ',
        "",
        "[1, 2]",
        "   ",
        "null",
        '"just a string"',
        simple(2, 0),
        '{"_ng_task_index": 3, "_ng_rollout_index": 0, "reward": NaN}',
        '{"_ng_task_index": 4, "_ng_rollout_index": 0',
    ], want={"record_unreadable": 6}, trailing_newline=False))

    good = traj(0, 0, [mcall("c0")])
    extra_key = dict(good, surprise=1)
    bad_model_ref = traj(1, 0, [mcall("c0", ref={"type": "resources_servers", "name": "x"})])
    turn_mismatch = traj(2, 0, [mcall("c0")], turns=[turn(1, ["c0"], task_id="other")])
    dup_ids = traj(3, 0, [mcall("c0"), mcall("c0", rid="resp-other")])
    bad_version = dict(traj(6, 0, [mcall("c0")]), schema_version="2.0")
    neg_tokens = traj(7, 0, [mcall("c0", tout=-1)])
    add(Case("record_unreadable_trajectory", [
        row(0, 0, extra_key),
        row(1, 0, bad_model_ref),
        row(2, 0, turn_mismatch),
        row(3, 0, dup_ids),
        row(4, 0, "not an object"),
        row(5, 0, None),
        row(6, 0, bad_version),
        row(7, 0, neg_tokens),
        simple(8, 0),
    ], want={"record_unreadable": 7}, verdicts=(1, 7, 1)))

    # -- rollout_duplicate_identity ---------------------------------------------------------
    add(Case("rollout_duplicate_identity", [
        simple(0, 0), simple(1, 0), simple(0, 0), simple(1, 1), simple(1, 0), simple(1, 0),
        simple(2, 0), simple(2, 0, stage=0),
    ], want={"rollout_duplicate_identity": 5}))

    # -- rollout_missing_agent_turns / agent_turn_hollow -------------------------------------
    add(Case("rollout_missing_agent_turns", [
        simple(0, 0, turns=[]),
        simple(1, 0, turns=[turn(1, answer=None), turn(2, answer="  ")]),
        simple(2, 0, turns=[turn(1, ["c0"], answer=""), turn(2, ["c1"])]),
        simple(3, 0, calls=[], turns=[]),
    ], want={"rollout_missing_agent_turns": 3, "agent_turn_hollow": 3}))

    hollow_calls = [mcall(f"c{i}", tin=1, tout=1) for i in range(9)]
    add(Case("agent_turn_hollow", [
        simple(0, 0, hollow_calls, turns=[
            turn(1, ["c0"], answer=""),
            turn(2, ["c1"], answer="   "),
            turn(3, ["c2"], answer={"content": []}),
            turn(4, ["c3"], answer={"type": "function_call", "name": "f", "arguments": "{}"}),
            turn(5, ["c4"], answer=None, reasoning_content="thinking"),
            turn(6, ["c5"], answer=[{"type": "message", "content": [{"type": "output_text", "text": "x"}]}]),
            turn(7, ["c6"], answer={"tool_calls": [{"id": "t1"}]}),
            turn(8, ["c7"], answer=42),
            turn(9, ["c8"], answer={"reasoning": " ", "summary": [{"text": "s"}]}),
        ]),
        simple(1, 0, turns=[turn(1, ["c0"], answer=None), turn(1, ["c1"], answer=None, invocation_id="inv-1")]),
    ], want={"agent_turn_hollow": 6}))

    # -- model_call_zero_completion_tokens / model_call_missing_token_counts -----------------
    add(Case("model_call_zero_completion_tokens", [
        simple(0, 0, [mcall("c0", tout=0), mcall("c1", tout=0), mcall("c2", tout=0), mcall("c3")],
               turns=[turn(1, ["c0"]), turn(2, ["c3"])], inv=["c0", "c3", "c2"]),
        simple(1, 0, [mcall("c0", tin=0, tout=3)]),
    ], want={"model_call_zero_completion_tokens": 2}))

    add(Case("model_call_missing_token_counts", [
        simple(0, 0, [mcall("c0", tin=None), mcall("c1", tout=None), mcall("c2", tin=None, tout=None), mcall("c3")]),
        simple(1, 0, [mcall("c0"), mcall("c1", tin=None, tout=None)], turns=[turn(1, ["c0"])]),
    ], want={"model_call_missing_token_counts": 3}))

    # -- trajectory_capture_mismatch --------------------------------------------------------
    cm_calls = [mcall("c0"), mcall("c1", rid="resp-dup"), mcall("c2", rid="resp-dup")]
    add(Case("trajectory_capture_mismatch", [
        simple(0, 0, cm_calls, turns=[
            turn(1, ["c0", "ghost"]),
            turn(2, [(POLICY, "resp-dup")]),
            turn(3, [(POLICY, "ghost"), {"model_call_id": "c0", "model_ref": JUDGE}]),
            turn(4, [(POLICY, "resp-dup")]),
        ]),
        simple(1, 0, [mcall("c0"), mcall("c1")], turns=[turn(1, ["c0", "x3"]), turn(2, ["c1"])], gaps=[
            gap("model_call_reference_unmatched", "x1", "inv-0"),
            gap("model_call_reference_unmatched", "x1", "inv-0"),
            gap("model_call_reference_ambiguous", "model_calls:x2", "inv-0"),
            gap("model_call_reference_conflict"),
            gap("model_call_reference_unmatched", "model_calls:x3", "inv-0"),
        ]),
        simple(2, 0, [mcall("c0")], turns=[turn(1)], inv=[], gaps=[gap("model_call_reference_ambiguous", "c9")]),
        simple(3, 0, [mcall("c0")], turns=[turn(1)], inv=[]),
    ], want={"trajectory_capture_mismatch": 9}))

    # -- model_call_failed (incl. terminal) ------------------------------------------------
    add(Case("model_call_failed", [
        simple(0, 0, [
            mcall("c0", status=500), mcall("c1"), mcall("c2", status=None, err="timeout"),
            mcall("c3", rstatus="failed"), mcall("c4", rstatus="error"), mcall("c5", rstatus="cancelled"),
            mcall("c6", rstatus="incomplete"), mcall("c7", status=400),
        ]),
        simple(1, 0, [mcall("c0", status=503), mcall("c1")], turns=[turn(1, ["c0", "ghost"]), turn(2, ["c1"])]),
        simple(2, 0, [mcall("c0"), mcall("c1", status=429, err="rate_limit")], turns=[turn(1, ["c0"])], inv=["c0", "c1"]),
    ], want={"model_call_failed": 8, EI: 2, "trajectory_capture_mismatch": 1}))

    # -- rollout_token_count_mismatch -------------------------------------------------------
    add(Case("rollout_token_count_mismatch", [
        simple(0, 0, usage=(100, 50)),
        simple(1, 0, usage={"prompt_tokens": 22, "completion_tokens": 11}),
        simple(2, 0, usage=None),
        simple(3, 0, usage={"input_tokens": None, "prompt_tokens": 22, "output_tokens": 11}),
        simple(4, 0, usage=(22, 12)),
        simple(5, 0, [mcall("c0"), mcall("c1", tin=40, tout=40)], turns=[turn(1, ["c0"])], inv=["c0", "c1"]),
        simple(6, 0, usage={"input_tokens": True, "output_tokens": 11}),
        simple(7, 0, usage={"input_tokens": -1, "output_tokens": 11}),
    ], want={"rollout_token_count_mismatch": 2}))

    # -- model_call_runaway_generation ------------------------------------------------------
    add(Case("model_call_runaway_generation", [
        simple(0, 0, [
            mcall("c0", finish="length", response={"output": []}),
            mcall("c1", finish="max_output_tokens"),
            mcall("c2", finish="max_tokens", response=tool_response()),
            mcall("c3"),
        ]),
        simple(1, 0, [mcall("c0", finish="length", response=None), mcall("c1", finish="length", response={})]),
        simple(2, 0, [mcall("c0", response=None),
                      mcall("c1", finish="length", response={"choices": [{"message": {"content": ""}}]})]),
        simple(3, 0, [mcall("c0", finish="length", response=None),
                      mcall("c1", finish="max_tokens", response={"output_text": " "})],
               turns=[turn(1, ["c1"])]),
        simple(4, 0, [mcall("c0", finish="length", response={"choices": [{"text": "partial"}]}),
                      mcall("c1", finish="length", response={"output": [{"type": "reasoning", "summary": [{"text": "r"}]}]})]),
    ], want={"model_call_runaway_generation": 4}))

    # -- check_execution_error ---------------------------------------------------------------
    boom = [mcall("c0", finish="length", response={"choices": 5}), mcall("c1")]
    add(Case("check_execution_error", [simple(0, 0, boom), simple(1, 0)],
             want={"check_execution_error": 1}))
    add(Case("check_execution_error_ignored", [simple(0, 0, boom), simple(1, 0)],
             args=["--ignore-checks", "check_execution_error"], want={}, verdicts=(1, 0, 1)))

    # -- task-level checks -----------------------------------------------------------------
    zero = [mcall("c0", tout=0)]
    add(Case("task_consistently_unhealthy", [
        simple(0, 0, zero), simple(0, 1, zero), simple(0, 2, zero),
        simple(1, 0, zero), simple(1, 1, zero), row(1, 2),
        simple(2, 0, zero), row(2, 1),
        simple(3, 0, zero), simple(3, 1),
    ], want={"model_call_zero_completion_tokens": 7, "task_consistently_unhealthy": 2}))

    fail = [mcall("c0", status=500)]
    add(Case("task_no_successful_model_calls", [
        simple(0, 0, fail), simple(0, 1, fail),
        simple(1, 0, fail), simple(1, 1),
        simple(2, 0, fail), row(2, 1),
        simple(3, 0, [mcall("c0", status=100)]),
        simple(4, 0, [mcall("c0")], turns=[turn(1)], inv=["c0"]),
    ], want={"model_call_failed": 4, EI: 4, "task_consistently_unhealthy": 1, "task_no_successful_model_calls": 2}))

    # -- rollout_ended_on_failed_model_call -------------------------------------------------
    add(Case("ended_on_failed_chains", [
        simple(0, 0, [mcall("c0"), mcall("c1", status=500), mcall("c2", ref=JUDGE)]),
        simple(1, 0, [mcall("c0"), mcall("c1", ref=JUDGE, status=429, err="rate_limit")]),
        simple(2, 0, [mcall("c0", ref=JUDGE, status=502), mcall("c1"), mcall("c2", status=500),
                      mcall("c3", ref=None, err="connection", status=None)]),
    ], want={EI: 5, "model_call_failed": 5}))

    add(Case("ended_on_failed_started_at_order", [
        simple(0, 0, [mcall("c0", start=2000.0), mcall("c1", status=500, start=1000.0)]),
        simple(1, 0, [mcall("c0", status=500, start=2000.0), mcall("c1", start=1000.0)]),
        simple(2, 0, [mcall("c0", status=500, start=1000.0), mcall("c1", start=1000.0)]),
        simple(3, 0, [mcall("c0", start=1000), mcall("c1", status=500, start=1000)]),
        simple(4, 0, [mcall("c0", start=-5.0), mcall("c1", status=500, start=0.0)]),
        simple(5, 0, [mcall("c0", status=500, start=3.5), mcall("c1", start=1.25), mcall("c2", ref=JUDGE, start=9.0)]),
    ], want={EI: 4, "model_call_failed": 6}))

    add(Case("ended_on_failed_missing_started_at", [
        simple(0, 0, [mcall("c0", status=500, start=1000.0), mcall("c1", start=NOSTART)]),
        simple(1, 0, [mcall("c0", start=NOSTART), mcall("c1", status=500, start=1000.0)]),
        simple(2, 0, [mcall("c0", status=500, start=-5.0), mcall("c1", status=500, start=NOSTART),
                      mcall("c2", status=500, start=-1.0)]),
        simple(3, 0, [mcall("c0", status=500, start=NOSTART), mcall("c1", status=503, start=NOSTART)]),
        simple(4, 0, [mcall("c0", status=500, start=0.0), mcall("c1", status=500, start=NOSTART)]),
        simple(5, 0, [mcall(None, status=500, start=NOSTART), mcall(None, status=502, start=NOSTART)], turns=[turn(1)]),
        simple(6, 0, [mcall(None, rid="r-x", status=500, start=NOSTART), mcall(None, rid="r-y", status=500)],
               turns=[turn(1)]),
    ], want={EI: 5, "model_call_failed": 9, "task_no_successful_model_calls": 3}))

    kinds = [
        mcall("c0", status=None, err="timeout"),
        mcall("c0", rstatus="failed"),
        mcall("c0", rstatus="error"),
        mcall("c0", rstatus="cancelled"),
        mcall("c0", status=400),
        mcall("c0", status=503),
        mcall("c0", status=399),
        mcall("c0", rstatus="incomplete"),
        mcall("c0", err=""),
        mcall("c0", err=" "),
        mcall("c0", status=100),
        mcall("c0", meta={"upstream_status_code": 500, "upstream_attempted": True, "response_source": "upstream"}),
        mcall("c0", rstatus="FAILED"),
    ]
    kind_rows = [simple(0, i, [c]) for i, c in enumerate(kinds)]
    kind_rows.append(simple(0, len(kinds), [mcall("c0", status=100), mcall("c1"), mcall("c2", status=500)]))
    kind_rows.append(simple(0, len(kinds) + 1, [mcall("c0", status=500), mcall("c1", status=199), mcall("c2", status=None)]))
    add(Case("ended_on_failed_kinds", kind_rows, want={EI: 8, "model_call_failed": 9}))

    add(Case("ended_on_failed_recovered", [
        simple(0, 0, [mcall("c0", status=500), mcall("c1")]),
        simple(0, 1, [mcall("c0", status=500), mcall("c1", err="timeout", status=None), mcall("c2")]),
        simple(0, 2, [mcall("c0", status=500), mcall("c1"), mcall("c2", ref=JUDGE)]),
    ], want={EI: 0, "model_call_failed": 4, "task_consistently_unhealthy": 1}))

    add(Case("ended_on_failed_unreferenced", [
        simple(0, 0, [mcall("c0", status=500)], turns=[turn(1)], inv=[]),
        simple(1, 0, [mcall("c0", status=500)], turns=[], inv=None),
        simple(2, 0, [mcall(None, rid=None, status=500), mcall(None, rid=None, err="timeout", status=None)],
               turns=[turn(1)]),
        simple(3, 0, [mcall("c0"), mcall("c1", status=500, ref=JUDGE)], turns=[turn(1, ["c0"])]),
    ], want={EI: 4, "rollout_missing_agent_turns": 1}))

    fcalls = [mcall("c0"), mcall("c1", status=500)]
    add(Case("ended_on_failed_unobserved_gaps", [
        simple(0, 0, fcalls, gaps=["model_calls_unavailable"]),
        simple(1, 0, fcalls, gaps=["model_call_capture_incomplete"]),
        simple(2, 0, fcalls, gaps=["model_call_capture_records_unreadable"]),
        simple(3, 0, fcalls, gaps=["model_call_capture_unreadable"]),
        simple(4, 0, fcalls, gaps=["trajectory_projection_failed"]),
        simple(5, 0, [], turns=[turn(1)]),
        simple(6, 0, fcalls, gaps=["turns_unavailable"]),
        simple(7, 0, fcalls, gaps=["turn_model_call_scope_incomplete"]),
        simple(8, 0, fcalls, gaps=[gap("model_call_ownership_unavailable", "capture:c9:call_index=3")]),
    ], want={EI: 3, "model_call_failed": 3}))

    add(Case("ignore_ended_on_failed", [
        simple(0, 0, [mcall("c0"), mcall("c1", status=500)]),
        simple(1, 0, [mcall("c0", status=500, err="upstream_error")]),
        simple(2, 0),
    ], args=["--ignore-checks", EI], want={"model_call_failed": 2, "task_no_successful_model_calls": 1}))

    # -- response_metadata new fields --------------------------------------------------------
    add(Case("response_metadata_new_fields", [
        simple(0, 0, [mcall("c0", meta={"upstream_attempted": True, "response_source": "upstream", "upstream_status_code": 200}),
                      mcall("c1", meta={"upstream_attempted": False, "response_source": "local", "local_response_reason": "cache_hit"})]),
        simple(0, 1, [mcall("c0", meta={"upstream_attempted": None, "response_source": None, "upstream_status_code": None,
                                         "local_response_reason": None})]),
        simple(1, 0, [mcall("c0", meta={"upstream_status_code": 503, "upstream_attempted": True, "response_source": "upstream",
                                         "local_response_reason": "retried", "model": "m", "dialect": "responses",
                                         "latency_ttft_ms": 12.5})]),
    ], want={}, verdicts=(3, 0, 0)))

    add(Case("response_metadata_unknown_key", [
        simple(0, 0, [mcall("c0", meta={"upstream_attempt": True})]),
        simple(1, 0, [mcall("c0", meta={"response_source": "remote"})]),
        simple(2, 0, [mcall("c0", meta={"upstream_attempted": "maybe"})]),
        simple(3, 0, [mcall("c0", meta={"upstream_status_code": "five hundred"})]),
        simple(4, 0, [mcall("c0", meta={"response_source": "local", "upstream_attempted": False})]),
    ], want={"record_unreadable": 4}))

    # -- gap turn_model_call_scope_incomplete --------------------------------------------
    sfail = [mcall("c0", status=500)]
    add(Case("gap_turn_model_call_scope_incomplete", [
        simple(0, 0, sfail, usage=(1, 1), gaps=["turn_model_call_scope_incomplete"]),
        simple(0, 1, sfail, usage=(1, 1)),
        simple(1, 0, gaps=["turn_model_call_scope_incomplete"]),
        simple(2, 0, sfail),
    ], want={"rollout_token_count_mismatch": 1, "model_call_failed": 3, EI: 3,
             "task_consistently_unhealthy": 1, "task_no_successful_model_calls": 1}))

    # -- matched calls in list order ---------------------------------------------------------
    add(Case("matched_calls_list_order", [
        simple(0, 0, [mcall("c0", status=500, start=1030.0), mcall("c1", tout=0, start=1020.0),
                      mcall("c2", tin=None, start=1010.0), mcall("c3", status=503, start=1000.0)],
               turns=[turn(1, ["c3"]), turn(2, [(POLICY, "resp-c1")]), turn(3, ["c0"]), turn(4, ["c2"])],
               inv=["c2", "c0"]),
        simple(1, 0, [mcall("c0"), mcall("c1", status=500)],
               turns=[turn(1, ["c1"]), turn(2, ["c0", "c1"]), turn(3, ["c1"])], inv=["c1", "c0"]),
        simple(2, 0, [mcall("c0", status=500), mcall("c1", status=500, tout=0), mcall("c2")],
               turns=[turn(1, ["c2"]), turn(2, ["c1"])], inv=["c0", "c2"]),
    ], want={"model_call_failed": 5, "model_call_zero_completion_tokens": 2, "model_call_missing_token_counts": 1, EI: 2}))

    # -- stage_index -----------------------------------------------------------------------
    add(Case("stage_index", [
        simple(0, 0, stage=2), simple(0, 0, stage=0), simple(0, 0, stage=1),
        simple(0, 1, stage=1), simple(0, 1, stage=1),
        simple(1, 0, stage="a"), simple(1, 0, stage="B"), simple(1, 0), simple(1, 0, stage=None),
        simple(1, 0, stage=10), simple(1, 0, stage=9), simple(1, 0, stage="10"), simple(1, 0, stage="None"),
        simple(1, 0, stage=""), simple(1, 0, stage=-1),
        simple("x", 0, stage="0"), simple("x", 0, stage=0),
        simple(2, 0, [mcall("c0", tout=0)], stage=0), simple(2, 0, [mcall("c0", tout=0)], stage=1),
        simple(2, 1, [mcall("c0", tout=0)], stage=0), simple(2, 1, stage=1),
        simple(3, 1, [mcall("c0", tout=0)], stage=0), simple(3, 0, [mcall("c0", tout=0)], stage=1),
        simple(3, 0, [mcall("c0", tout=0)], stage=0),
    ], want={"rollout_duplicate_identity": 4, "model_call_zero_completion_tokens": 6, "task_consistently_unhealthy": 1}))

    # -- CLI flags ---------------------------------------------------------------------------
    add(Case("ignore_multiple", [
        simple(0, 0, fail), simple(0, 1, fail), simple(1, 0), simple(1, 0),
    ], args=["--ignore-checks", "task_consistently_unhealthy, model_call_failed ,rollout_duplicate_identity,model_call_failed"],
        want={EI: 2, "task_no_successful_model_calls": 1}))
    add(Case("ignore_everything", [simple(0, 0, fail), simple(0, 0), "{bad"],
             args=["--ignore-checks", ",".join(CHECKS)], want={}, verdicts=(3, 0, 0)))
    add(Case("json_output", [simple(0, 0), simple(0, 1, [mcall("c0", status=500)])], args=["--json"],
             want={EI: 1, "model_call_failed": 1}))
    add(Case("json_with_ignore", [simple(0, 0, turns=[turn(1, ["c0"], answer=""), turn(2, ["c1"])]), simple(1, 0)],
             args=["--json", "--ignore-checks", "agent_turn_hollow"], want={}))
    add(Case("unknown_ignored_check", [simple(0, 0)], args=["--ignore-checks", "not_a_check"], exit_code=2))
    # Issue 58: argparse's rules for the flag (`_split_comma_separated`, `store`: the last wins).
    add(Case("ignore_empty_entry", [simple(0, 0)], args=["--ignore-checks", "model_call_failed,,agent_turn_hollow"],
             exit_code=2))
    add(Case("ignore_trailing_comma", [simple(0, 0)], args=["--ignore", "model_call_failed,"], exit_code=2))
    add(Case("ignore_repeated_last_unknown", [simple(0, 0)], args=["--ignore", "not_a", "--ignore", "not_b"],
             exit_code=2))
    add(Case("ignore_repeated_last_wins", [simple(0, 0), simple(0, 1, [mcall("c0", status=500)])],
             args=["--ignore", "not_a_check", "--ignore-checks", "model_call_failed"], want=None))

    # -- task ids and repeats --------------------------------------------------------------
    add(Case("string_task_ids", [
        simple("alpha", 0), simple("alpha", 1, [mcall("c0", tout=0)]), simple("beta", 0), simple("beta", "r1"),
        simple(10, 0), simple(2, 0), simple("Zeta", 0), simple("10x", 0), simple("", 0), simple(-3, 0),
    ], want={"model_call_zero_completion_tokens": 1}))
    add(Case("task_id_int_str_collision", [
        simple("1", 0, zero), simple(1, 0), simple("1", 1, zero), simple(0, 0),
    ], want={"model_call_zero_completion_tokens": 2, "task_consistently_unhealthy": 1}))
    add(Case("repeats_some_unhealthy", [
        simple(0, 0), simple(0, 1), simple(0, 2), simple(0, 3),
        simple(1, 0), simple(1, 1, zero), row(1, 2), simple(1, 3, [mcall("c0", tin=None)]),
        simple(2, 0, zero), simple(2, 1, zero), simple(2, 2, zero), simple(2, 3, zero),
        simple(11, 0), simple(11, 1),
    ], want={"model_call_zero_completion_tokens": 5, "model_call_missing_token_counts": 1, "task_consistently_unhealthy": 1}))

    # -- misc edges ---------------------------------------------------------------------------
    add(Case("missing_indices", [
        row(OMIT, OMIT),
        "",
        row(OMIT, 1),
        row(5, OMIT, traj(5, 0, [mcall("c0")])),
        "{not json",
        row(OMIT, OMIT, traj("t", "r", [mcall("c0")])),
        row(OMIT, OMIT),
    ], want={"record_unreadable": 1, "rollout_duplicate_identity": 2}))
    add(Case("empty_file", [], want={}, verdicts=(0, 0, 0)))
    add(Case("no_trajectory", [row(0, 0), row(0, 1, None), row(1, 0, usage=(5, 5))], want={}, verdicts=(0, 0, 3)))
    add(Case("rollout_id_sources", [
        simple(0, 0, rid="custom-1"), simple(1, 0, rid=""), row(2, 0), row(3, 0, rid=17),
        row(4, 0, traj(4, 0, [mcall("c0")], rid="traj-rid")),
    ], want={}))
    add(Case("stats_duplicated_calls", [
        simple(0, 0, [mcall(None, rid="resp-dup"), mcall(None, rid="resp-dup"), mcall(None, rid="resp-dup"),
                      mcall("c3", status=500), mcall("c4", status=None, err="timeout"), mcall("c5", status=429)],
               turns=[turn(1, [(POLICY, "resp-dup"), "c3"]), turn(2, ["c4", "c5"])]),
        simple(1, 0, [mcall(None, rid="resp-x"), mcall(None, rid="resp-x", ref=JUDGE)]),
        simple(2, 0, [mcall(None, rid="resp-y", ref=None), mcall(None, rid="resp-y", ref=None)], turns=[turn(1)]),
    ], want={"trajectory_capture_mismatch": 1, "model_call_failed": 3, EI: 1}))
    add(Case("turns_unavailable_gap", [
        simple(0, 0, [mcall("c0"), mcall("c1", tout=0)], turns=[], inv=["c0", "c1"], gaps=["turns_unavailable"]),
    ], want={"model_call_zero_completion_tokens": 1}, verdicts=(0, 1, 0)))
    coerced = traj(0, 0, [
        mcall("c0", status="503", start=5, tin="7", raw={"duration_ms": 3}),
        mcall("c1", status=500.0, start=6, meta={"upstream_attempted": "true"},
              ref={"type": "responses_api_models", "name": "policy", "extra": 1}),
    ], turns=[turn("1", ["c0"], timestamp="5"), turn(2, ["c1"], step_count=2.0)])
    add(Case("schema_coercion", [
        row(0, 0, coerced, usage=(17, 10)),
        row(3.0, 0),
        simple(1, 0, stage=True), simple(1, 0, stage=1), simple(1, 0, stage=2.0), simple(1, 0, stage=2),
    ], want={"model_call_failed": 2, EI: 1, "rollout_duplicate_identity": 4, "task_no_successful_model_calls": 1}))
    return cases


# ---------------------------------------------------------------------------------------------
# Fuzz cases
# ---------------------------------------------------------------------------------------------

GAP_CODES = (
    "turn_model_call_scope_incomplete", "turns_unavailable", "model_calls_unavailable",
    "model_call_capture_incomplete", "model_call_capture_records_unreadable", "model_call_capture_unreadable",
    "trajectory_projection_failed", "model_call_reference_unmatched", "model_call_reference_ambiguous",
    "model_call_reference_conflict", "model_call_ownership_unavailable", "tool_calls_unavailable",
)
RESPONSES = (
    lambda: text_response("ok"),
    lambda: {"output_text": "ok"},
    lambda: {"output": []},
    lambda: None,
    lambda: tool_response(),
    lambda: {"choices": [{"message": {"content": ""}}]},
    lambda: {"choices": [{"message": {"content": "hi"}}]},
    lambda: {},
)
ANSWERS = ("text", "", None, {"type": "function_call", "name": "f", "arguments": "{}"}, {"content": "x"},
           [{"type": "message", "content": [{"type": "output_text", "text": "y"}]}], {"tool_calls": []}, "  ")
BAD_LINES = ('{"_ng_task_index": 0, "_ng_rollout_index": ', "[]", "null", "{]", '"s"', "{\"a\": NaN}")


def fuzz_call(rng: random.Random, i: int, p_fail: float) -> Dict[str, Any]:
    cid = f"c{i}" if rng.random() < 0.85 else None
    mref = rng.choice([POLICY, POLICY, POLICY, JUDGE, None])
    rid = rng.choice([f"r{i}", f"r{i}", f"r{i}", "rdup", None])
    status, rstatus, err = rng.choice([200] * 8 + [None, 201, 399, 100, 199]), rng.choice(["completed"] * 4 + [None, "incomplete"]), None
    if rng.random() < p_fail:
        mode = rng.randrange(3)
        if mode == 0:
            status = rng.choice([400, 429, 500, 502, 503])
        elif mode == 1:
            rstatus = rng.choice(["failed", "error", "cancelled"])
        else:
            err, status = rng.choice(["timeout", "rate_limit", "upstream_error", " "]), rng.choice([None, 200, 504])
    elif rng.random() < 0.05:
        err = ""
    finish = rng.choice(["stop"] * 8 + [None, "length", "max_output_tokens", "max_tokens", "tool_calls"])
    u = rng.random()
    start: Any = AUTO if u < 0.45 else (1000 + rng.randint(0, 6) * 0.5) if u < 0.8 else NOSTART if u < 0.93 else rng.choice([0.0, -2.5, 0])
    tin = rng.randint(0, 40) if rng.random() < 0.93 else None
    tout = (0 if rng.random() < 0.05 else rng.randint(1, 20)) if rng.random() < 0.9 else None
    resp = rng.choice(RESPONSES)() if rng.random() < 0.4 else {"output_text": "ok"}
    meta: Dict[str, Any] = {}
    if rng.random() < 0.25:
        for key, values in (("upstream_attempted", [True, False, None]), ("response_source", ["upstream", "local", None]),
                            ("upstream_status_code", [200, 500, None]), ("local_response_reason", ["cache", None])):
            if rng.random() < 0.5:
                meta[key] = rng.choice(values)
    c = mcall(cid, rid=rid, ref=mref, status=status, rstatus=rstatus, finish=finish, err=err, start=start,
              tin=tin, tout=tout, response=resp, meta=meta)
    return c


def fuzz_trajectory(rng: random.Random, task: Any, rollout: Any, p_fail: float) -> Any:
    n_calls = rng.choice([0, 1, 1, 2, 2, 3, 4, 5])
    calls = [fuzz_call(rng, i, p_fail) for i in range(n_calls)]
    specs = [call_refspec(c) for c in calls]
    referencable = [s for s in specs if s is not None]
    gaps = []
    if rng.random() < 0.15:
        for _ in range(rng.randint(1, 2)):
            gaps.append(gap(rng.choice(GAP_CODES), rng.choice([None, "c0", "model_calls:c1", "ghost0", "capture:c2:call_index=2"]),
                            rng.choice([None, "inv-0"])))
    if rng.random() < 0.6:
        # well formed: one turn per referencable call, the invocation references the same calls
        return traj(task, rollout, calls, gaps=gaps)
    turns: List[Dict[str, Any]] = []
    n_turns = rng.randint(0 if rng.random() < 0.15 else 1, max(1, min(4, n_calls + 1)))
    for n in range(1, n_turns + 1):
        refs: List[RefSpec] = []
        for _ in range(rng.choice([0, 1, 1, 1, 1, 2])):
            u = rng.random()
            if referencable and u < 0.9:
                refs.append(rng.choice(referencable))
            elif u < 0.95:
                refs.append(f"ghost{rng.randint(0, 1)}")
            else:
                refs.append((rng.choice([POLICY, JUDGE]), rng.choice(["rdup", "r0", "nope"])))
        ans = rng.choice(ANSWERS) if rng.random() < 0.35 else "text"
        extra = {"reasoning_content": "hmm"} if rng.random() < 0.1 else {}
        turns.append(turn(n, refs, answer=ans, **extra))
    u = rng.random()
    inv: Any = AUTO if u < 0.5 else referencable if u < 0.75 else [] if u < 0.9 else None
    return traj(task, rollout, calls, turns=turns, inv=inv, gaps=gaps)


def break_trajectory(rng: random.Random, tr: Dict[str, Any]) -> Any:
    mode = rng.randrange(5)
    if mode == 0 or not tr["model_calls"]:
        tr["unexpected"] = True
    elif mode == 1:
        tr["model_calls"][0]["response_metadata"]["response_source"] = "cache"
    elif mode == 2:
        tr["model_calls"][0]["response_metadata"]["retry_count"] = 1
    elif mode == 3:
        tr["model_calls"][0]["token_stats"]["completion_tokens"] = -3
    else:
        tr["task_id"] = tr["task_id"] + "-x"
        if not tr["turns"]:
            tr["turns"].append(dict(invocation_id="inv-0", task_id="0", rollout_id=tr["rollout_id"], turn_no=1,
                                    timestamp=1.0, step_count=0))
    return tr


def fuzz_case(index: int, seed: int) -> Case:
    rng = random.Random(seed * 1_000_003 + index)
    mode = rng.random()
    n_tasks = rng.randint(1, 4)
    if mode < 0.6:
        tasks: List[Any] = rng.sample(range(0, 12), n_tasks)
    elif mode < 0.8:
        tasks = rng.sample(["a", "b", "task-c", "Z", "10", ""], n_tasks)
    else:
        tasks = rng.sample([0, 1, 2, "1", "a", "task-b", 10], n_tasks)
    multistage = rng.random() < 0.3
    p_fail = rng.choice([0.0, 0.05, 0.15, 0.4])
    lines: List[Line] = []
    for task in tasks:
        for rollout in range(rng.randint(1, 3)):
            r_idx: Any = rollout if rng.random() < 0.95 else f"r{rollout}"
            if multistage:
                stages: List[Any] = rng.sample([0, 1, 2, "a", "b", None], rng.randint(1, 3))
                if rng.random() < 0.15:
                    stages.append(stages[0])
            else:
                stages = [OMIT] if rng.random() < 0.93 else [rng.choice([0, 1, "s", None])]
            for stage in stages:
                if rng.random() < 0.04:
                    lines.append(rng.choice(BAD_LINES))
                    continue
                u = rng.random()
                if u < 0.06:
                    tr: Any = OMIT
                elif u < 0.08:
                    tr = None
                else:
                    tr = fuzz_trajectory(rng, task, r_idx, p_fail)
                    if rng.random() < 0.05:
                        tr = break_trajectory(rng, tr)
                u = rng.random()
                if isinstance(tr, dict) and u < 0.55:
                    usage: Any = AUTO
                elif isinstance(tr, dict) and u < 0.7:
                    p, c = turn_bound_tokens(tr)
                    usage = (p + rng.randint(0, 3), c)
                elif u < 0.85:
                    usage = None
                else:
                    usage = {"prompt_tokens": rng.randint(0, 40), "completion_tokens": rng.randint(0, 20)}
                kw: Dict[str, Any] = {"usage": usage, "stage": stage}
                if rng.random() < 0.1:
                    kw["rid"] = rng.choice([f"rid-{task}-{rollout}", ""])
                t_key: Any = task if rng.random() < 0.98 else OMIT
                r = row(t_key, r_idx, tr, **kw)
                lines.append(r)
                if rng.random() < 0.05:
                    lines.append(copy.deepcopy(r))
    if rng.random() < 0.5:
        rng.shuffle(lines)
    args: List[str] = []
    if rng.random() < 0.15:
        args.append("--json")
    if rng.random() < 0.2:
        args += ["--ignore-checks", ",".join(rng.sample(CHECKS, rng.randint(1, 2)))]
    # Issue 58: flag spellings argparse treats its way: a repeated flag (the last wins), the
    # alias, a prefix, empty entries and spaces.
    if rng.random() < 0.2:
        flag = lambda: rng.choice(["--ignore-checks", "--ignore", "--ignore-c"])
        ids = lambda: rng.choice([
            ",".join(rng.sample(CHECKS, rng.randint(1, 2))), rng.choice(CHECKS) + ",", "," + rng.choice(CHECKS),
            rng.choice(CHECKS) + ",," + rng.choice(CHECKS), " " + rng.choice(CHECKS) + " , " + rng.choice(CHECKS),
            "not_a_check"])
        for _ in range(rng.randint(1, 3)):
            args += [flag(), ids()]
    # argparse converts every occurrence (an empty entry anywhere exits 2); only the last
    # occurrence's ids are checked against the catalog.
    values = [v for f, v in zip(args, args[1:]) if f.startswith("--ign")]
    empty = any(not part.strip() for v in values for part in v.split(","))
    exit_code = 2 if empty or (values and values[-1] == "not_a_check") else 0
    return Case(f"fuzz-{index}", lines, want=None, args=args, exit_code=exit_code)


# ---------------------------------------------------------------------------------------------
# Recording
# ---------------------------------------------------------------------------------------------


def record(case: Case, out_dir: Path) -> Dict[str, Any]:
    case_dir = out_dir / case.name
    if case_dir.exists():
        shutil.rmtree(case_dir)
    expected = case_dir / "expected"
    expected.mkdir(parents=True)
    (case_dir / "rollouts.jsonl").write_bytes(case.rollouts_bytes())
    if case.args:
        (case_dir / "args").write_text("".join(a + "\n" for a in case.args))
    with tempfile.TemporaryDirectory(prefix="gym07-health-") as tmp:
        run_dir = Path(tmp) / case.name
        run_dir.mkdir()
        shutil.copy(case_dir / "rollouts.jsonl", run_dir / "rollouts.jsonl")
        proc = subprocess.run([GYM, "eval", "health-check", str(run_dir), *case.args], capture_output=True, cwd=tmp)
        placeholder = str(run_dir).encode()

        def clean(data: bytes) -> bytes:
            data = data.replace(placeholder, b"<dir>")
            if tmp.encode() in data:
                raise RuntimeError(f"{case.name}: temp path left in an output")
            return data

        (expected / "stdout").write_bytes(clean(proc.stdout))
        (expected / "exit_code").write_text(f"{proc.returncode}\n")
        if proc.returncode != 0:
            (expected / "stderr").write_bytes(clean(proc.stderr))
        elif proc.stderr.strip():
            print(f"warning: {case.name}: upstream wrote to stderr:\n{proc.stderr.decode()}", file=sys.stderr)
        produced = sorted(p.name for p in run_dir.iterdir() if p.name != "rollouts.jsonl")
        summary = None
        for name in produced:
            if name not in ("quality_summary.json", "rollout_verdicts.jsonl"):
                raise RuntimeError(f"{case.name}: unexpected upstream output {name}")
            (expected / name).write_bytes(clean((run_dir / name).read_bytes()))
        if "quality_summary.json" in produced:
            summary = json.loads((run_dir / "quality_summary.json").read_bytes())
    return {"exit": proc.returncode, "summary": summary}


def check(case: Case, result: Dict[str, Any]) -> List[str]:
    problems = []
    if result["exit"] != case.exit_code:
        problems.append(f"exit {result['exit']} != {case.exit_code}")
    summary = result["summary"]
    if summary is None:
        return problems
    issues = {k: v for k, v in summary["run"]["issues"].items() if v}
    if case.want is not None:
        want = {k: v for k, v in case.want.items() if v}
        if issues != want:
            problems.append(f"issues {issues} != wanted {want}")
    if case.verdicts is not None:
        v = summary["run"]["verdicts"]
        got = (v["healthy"], v["unhealthy"], v["unobserved"])
        if got != case.verdicts:
            problems.append(f"verdicts {got} != wanted {case.verdicts}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("cases", nargs="*", help="hand case names (default: all)")
    parser.add_argument("--fuzz", type=int, help="record N random run dirs fuzz-0 .. fuzz-(N-1) instead")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=2, help="upstream runs in parallel")
    args = parser.parse_args()

    if args.fuzz is not None:
        cases = [fuzz_case(i, args.seed) for i in range(args.fuzz)]
    else:
        cases = hand_cases()
        names = [c.name for c in cases]
        assert len(set(names)) == len(names), "duplicate case names"
        if args.cases:
            unknown = set(args.cases) - set(names)
            if unknown:
                parser.error(f"unknown case(s): {', '.join(sorted(unknown))}")
            cases = [c for c in cases if c.name in args.cases]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda c: record(c, args.out_dir), cases))

    failures = 0
    width = max(len(c.name) for c in cases)
    print(f"{'case':<{width}}  exit  h/u/o      issues")
    for case, result in zip(cases, results):
        summary = result["summary"]
        if summary is None:
            verdicts, issues = "-", "-"
        else:
            v = summary["run"]["verdicts"]
            verdicts = f"{v['healthy']}/{v['unhealthy']}/{v['unobserved']}"
            issues = " ".join(f"{SHORT[k]}={n}" for k, n in summary["run"]["issues"].items() if n) or "(none)"
        problems = check(case, result)
        failures += bool(problems)
        flag = "" if not problems else "  MISMATCH: " + "; ".join(problems)
        print(f"{case.name:<{width}}  {result['exit']:>4}  {verdicts:<9}  {issues}{flag}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
