#!/usr/bin/env python3
"""Oracle fixtures for `gymscope export --format atif`, recorded from NeMo Gym v0.7.0's `gym eval export`.

    OUT_DIR/<case>/rollouts.jsonl     the input
    OUT_DIR/<case>/args               `--session-id S --agent-version V`, one argv token per line
    OUT_DIR/<case>/expected/out/      upstream's output folder, byte for byte (only when it succeeded)
    OUT_DIR/<case>/expected/stdout    upstream's stdout, the case folder's absolute path as `<dir>`
    OUT_DIR/<case>/expected/stderr    upstream's stderr, the same way
    OUT_DIR/<case>/expected/exit_code

    ~/.cache/gym07/bin/python scripts/parity-v07/atif_cases.py OUT_DIR [case ...]
    ~/.cache/gym07/bin/python scripts/parity-v07/atif_cases.py --fuzz N --seed S --gymscope target/release/gymscope

Hand cases are built from one trajectory shaped as v0.7.0's simple_agent writes it (live stack,
`+observability_enabled=true`), with the two things its real runs carry that strict export refuses
(a developer prompt, the `resolution_unavailable` gap) changed. `--fuzz` mutates such rows at random
and compares upstream's and gymscope's outputs directly (files, or the list of refused lines), printing
each difference; nothing is written. Standard library only and deterministic. GYM names the CLI
(default ~/.cache/gym07/bin/gym). Tests and CI never run this.
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
from pathlib import Path

GYM = os.environ.get("GYM", str(Path.home() / ".cache/gym07/bin/gym"))
REF = {"type": "responses_api_models", "name": "policy_model"}
TOOL = "get_weather"
TOOLS = [{"name": TOOL, "type": "function", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]


def call_item(n, args='{"city": "San Francisco"}', name=TOOL):
    return {"arguments": args, "call_id": f"call_{n}", "name": name, "type": "function_call",
            "id": f"fc_{n}", "status": "completed"}


def output_item(n, text='{"city":"San Francisco","weather":"cold"}'):
    return {"call_id": f"call_{n}", "output": text, "type": "function_call_output"}


def message_item(n, text="It is cold in SF. \\boxed{4}"):
    return {"id": f"msg_{n}", "content": [{"annotations": [], "text": text, "type": "output_text"}],
            "role": "assistant", "status": "completed", "type": "message"}


def reasoning_item(n, text="Let me think."):
    return {"id": f"rs_{n}", "summary": [{"text": text, "type": "summary_text"}], "type": "reasoning"}


def model_call(n, *, finish=None, dialect="responses", tokens=(27, 7, 0, 34, 0), started=1796417684.9650285):
    p, c, r, t, cached = tokens
    return {
        "model_call_id": f"mc_{n}", "started_at": started + len(str(n)), "completed_at": started + len(str(n)) + 0.047,
        "duration_ms": 47.0,
        "request": {"input": [{"role": "user", "content": "what's it like in sf?"}], "tools": copy.deepcopy(TOOLS)},
        "response": {"id": f"resp_{n}", "created_at": 1767225600.0, "error": None, "model": "standin-model",
                     "output": [], "usage": {"input_tokens": p, "output_tokens": c}},
        "response_metadata": {"response_id": f"resp_{n}", "model_ref": dict(REF), "model": "standin-model",
                              "dialect": dialect, "status_code": 200, "response_status": "completed",
                              "finish_reason": finish, "latency_ttft_ms": 42.71},
        "token_stats": {"prompt_tokens": p, "completion_tokens": c, "reasoning_tokens": r, "total_tokens": t,
                        "cached_tokens": cached},
    }


def tool_record(n, output='{"city":"San Francisco","weather":"cold"}'):
    return {"kind": "tool_call", "invocation_id": "root", "tool_call_id": f"call_{n}", "tool_name": TOOL,
            "started_at": 1796417685.0597594, "completed_at": 1796417685.0689733,
            "duration_ms": 9.208609997585882, "timing_source": "executor", "status": "completed",
            "output": output}


def ref(n):
    return {"model_ref": dict(REF), "response_id": f"resp_{n}"}


def build(prefix, groups, *, task=0, rollout=0, agent="simple_agent", turn_extra=None):
    """A row whose trajectory is `prefix` (system/user items) then `groups`, each a dict with
    `reasoning` (items), `answer` (items), `outputs` (items), `call` (a model call)."""
    conversation = list(prefix)
    turns, calls, tools = [], [], []
    steps = 0
    for i, g in enumerate(groups):
        question = copy.deepcopy(conversation)
        conversation += g.get("reasoning", []) + g["answer"] + g.get("outputs", [])
        steps += sum(1 for a in g["answer"] if a.get("type") == "function_call")
        calls.append(g["call"])
        tools += g.get("tools", [])
        turn = {"invocation_id": "root", "task_id": str(task), "rollout_id": f"{task}-{rollout}", "turn_no": i + 1,
                "timestamp": 1796417684.9631386 + i, "question": question, "answer": copy.deepcopy(g["answer"]),
                "reasoning_content": copy.deepcopy(g.get("reasoning")) or None, "step_count": steps,
                "model_calls": [ref(g["call"]["response_metadata"]["response_id"][5:])]}
        turn.update((turn_extra or {}).get(i, {}))
        turns.append(turn)
    trajectory = {
        "schema_version": "1.0", "task_id": str(task), "rollout_id": f"{task}-{rollout}",
        "invocations": [{"kind": "agent_invocation", "invocation_id": "root", "status": "completed",
                         "model_calls": [t["model_calls"][0] for t in turns], "conversation": conversation}],
        "turns": turns, "model_calls": calls, "tool_calls": tools, "gaps": [],
    }
    # The row as Gym's simple_agent writes it: the prompt, then every item the agent produced.
    create = {"input": copy.deepcopy(list(prefix)), "tools": copy.deepcopy(TOOLS)}
    output = copy.deepcopy(conversation[len(prefix):])
    usage = {"input_tokens": sum(c["token_stats"].get("prompt_tokens") or 0 for c in calls),
             "output_tokens": sum(c["token_stats"].get("completion_tokens") or 0 for c in calls)}
    return {"responses_create_params": create, "response": {"output": output, "usage": usage},
            "reward": float((task + rollout) % 2 == 0), "ng_trajectory": trajectory, "_ng_task_index": task,
            "_ng_rollout_index": rollout, "agent_ref": {"name": agent},
            "_ng_environment_server": f"{agent}_environment_server"}


SYSTEM = {"content": "You are a helpful assistant.", "role": "system", "type": "message"}
USER = {"content": "what's it like in sf?", "role": "user", "type": "message"}


def tool_then_answer(task=0, rollout=0, **kw):
    groups = [
        {"answer": [call_item(f"{task}{rollout}a")], "outputs": [output_item(f"{task}{rollout}a")],
         "call": model_call(f"{task}{rollout}1"), "tools": [tool_record(f"{task}{rollout}a")]},
        {"answer": [message_item(f"{task}{rollout}b")], "call": model_call(f"{task}{rollout}2")},
    ]
    return build([SYSTEM, USER], groups, task=task, rollout=rollout, **kw)


def traj(row):
    return row["ng_trajectory"]


def edit(row, fn):
    row = copy.deepcopy(row)
    fn(row)
    return row


def cases():
    base = tool_then_answer()
    c = {}
    c["tool_then_answer"] = [base, tool_then_answer(0, 1), tool_then_answer(1, 0)]

    def reasoning(row):
        g_conv = traj(row)["invocations"][0]["conversation"]
        g_conv.insert(4, reasoning_item("x"))
        traj(row)["turns"][1]["question"] = copy.deepcopy(g_conv[:4])
        traj(row)["turns"][1]["reasoning_content"] = [reasoning_item("x")]
    c["reasoning_summary"] = [edit(base, reasoning)]
    c["reasoning_two_segments"] = [edit(edit(base, reasoning), lambda r: (
        traj(r)["invocations"][0]["conversation"][4]["summary"].append({"text": "more", "type": "summary_text"})))]
    c["reasoning_encrypted"] = [edit(edit(base, reasoning), lambda r: (
        traj(r)["invocations"][0]["conversation"][4].__setitem__("encrypted_content", "gAAAA")))]
    c["reasoning_content_text"] = [edit(edit(base, reasoning), lambda r: [
        traj(r)["invocations"][0]["conversation"][4].update(summary=[], content=[{"text": "raw", "type": "reasoning_text"}]),
        traj(r)["turns"][1].update(reasoning_content=[copy.deepcopy(traj(r)["invocations"][0]["conversation"][4])])])]

    def multipart_user(row):
        for where in (traj(row)["invocations"][0]["conversation"], *[t["question"] for t in traj(row)["turns"]]):
            where[1] = {"content": [{"type": "input_text", "text": "part one"}, {"type": "input_text", "text": "two"}],
                        "role": "user", "status": "completed", "type": "message"}
    c["multipart_user"] = [edit(base, multipart_user)]
    c["user_image"] = [edit(base, lambda r: [w.__setitem__(1, {"content": [{"type": "input_image", "detail": "auto",
        "image_url": "data:image/png;base64,AAAA"}], "role": "user", "type": "message"}) for w in
        (traj(r)["invocations"][0]["conversation"], *[t["question"] for t in traj(r)["turns"]])])]
    c["developer_prompt"] = [edit(base, lambda r: [w[0].__setitem__("role", "developer") for w in
        (traj(r)["invocations"][0]["conversation"], *[t["question"] for t in traj(r)["turns"]])])]
    c["later_user_turn"] = [edit(base, lambda r: traj(r)["invocations"][0]["conversation"].insert(4, dict(USER)))]
    c["chat_dialect_ok"] = [edit(base, lambda r: [traj(r)["model_calls"][0]["response_metadata"].update(
        dialect="chat", finish_reason="tool_calls"), traj(r)["model_calls"][1]["response_metadata"].update(
        dialect="chat", finish_reason="stop")])]
    c["chat_stop_with_tools"] = [edit(base, lambda r: traj(r)["model_calls"][0]["response_metadata"].update(
        dialect="chat", finish_reason="stop"))]
    c["messages_dialect"] = [edit(base, lambda r: [traj(r)["model_calls"][0]["response_metadata"].update(
        dialect="messages", finish_reason="tool_use"), traj(r)["model_calls"][1]["response_metadata"].update(
        dialect="messages", finish_reason=" End_Turn ")])]
    c["finish_length"] = [edit(base, lambda r: traj(r)["model_calls"][1]["response_metadata"].update(finish_reason="length"))]
    c["status_500"] = [edit(base, lambda r: traj(r)["model_calls"][1]["response_metadata"].update(status_code=500))]
    c["tool_failed"] = [edit(base, lambda r: traj(r)["tool_calls"][0].update(status="failed"))]
    c["tool_output_differs"] = [edit(base, lambda r: traj(r)["tool_calls"][0].update(output="other"))]
    c["tool_record_missing"] = [edit(base, lambda r: traj(r).update(tool_calls=[]))]
    c["tool_record_unreferenced"] = [edit(base, lambda r: traj(r)["tool_calls"].append(
        dict(tool_record("zz"))))]
    c["step_count_wrong"] = [edit(base, lambda r: traj(r)["turns"][1].update(step_count=2))]
    c["turn_missing"] = [edit(base, lambda r: traj(r)["turns"].pop())]
    c["refs_by_model_call_id"] = [edit(base, lambda r: [t.update(model_calls=[{"model_call_id": f"mc_00{i + 1}"}])
        for i, t in enumerate(traj(r)["turns"])] + [traj(r)["invocations"][0].update(
        model_calls=[{"model_call_id": "mc_001"}, {"model_call_id": "mc_002"}])])]
    c["surplus_model_call"] = [edit(base, lambda r: traj(r)["model_calls"].append(model_call("extra")))]
    c["tokens_cached_over_prompt"] = [edit(base, lambda r: traj(r)["model_calls"][0]["token_stats"].update(cached_tokens=99))]
    c["tokens_partial"] = [edit(base, lambda r: [traj(r)["model_calls"][0].update(token_stats={"prompt_tokens": 5}),
        traj(r)["model_calls"][1].update(token_stats={})])]
    c["timestamps"] = [edit(base, lambda r: [traj(r)["turns"][0].update(timestamp=0), traj(r)["turns"][1].update(
        timestamp=1.0000025)]), edit(tool_then_answer(0, 1), lambda r: traj(r)["turns"][0].update(timestamp=-1.5))]
    c["timestamp_out_of_range"] = [edit(base, lambda r: traj(r)["turns"][0].update(timestamp=1e12))]
    c["floats_and_ints"] = [edit(base, lambda r: [traj(r)["model_calls"][0].update(started_at=5, completed_at=6,
        duration_ms=0), traj(r)["tool_calls"][0].update(started_at=1e16, completed_at=1.5e16, duration_ms=1e-7),
        traj(r)["model_calls"][1]["response"].update(created_at=-0.0, big=12345678901234567890, tiny=5e-324)])]
    c["unicode_text"] = [edit(base, lambda r: [w[-1]["content"][0].update(text="héllo \u2028 </script> \U0001F600 \x01")
        for w in (traj(r)["invocations"][0]["conversation"], traj(r)["turns"][1]["answer"])])]
    c["arguments_not_json"] = [edit(base, lambda r: [traj(r)["invocations"][0]["conversation"][2].update(
        arguments="{city: SF}"), traj(r)["turns"][0]["answer"][0].update(arguments="{city: SF}")])]
    c["arguments_array"] = [edit(base, lambda r: [traj(r)["invocations"][0]["conversation"][2].update(arguments="[1]"),
        traj(r)["turns"][0]["answer"][0].update(arguments="[1]")])]
    c["arguments_rich"] = [edit(base, lambda r: [w.update(arguments='{"z": [1, 2.5, {"é": null}], "a": true, "n": 1e16}')
        for w in (traj(r)["invocations"][0]["conversation"][2], traj(r)["turns"][0]["answer"][0],
                  traj(r)["turns"][1]["question"][2])])]
    c["two_agents"] = [base, tool_then_answer(1, 0, agent="other_agent")]
    c["stamp_only"] = [edit(base, lambda r: r.pop("agent_ref"))]
    c["bad_lines"] = ["BLANK", "NOTJSON", "ARRAY", base, base,
                      edit(tool_then_answer(2, 0), lambda r: r.update(_ng_task_index=True)),
                      edit(tool_then_answer(3, 0), lambda r: r.pop("_ng_rollout_index")),
                      "DUPKEY", "IMPRECISE"]
    c["no_agent_output"] = [edit(base, lambda r: [traj(r)["invocations"][0].update(conversation=[SYSTEM, USER]),
        traj(r).update(turns=[], tool_calls=[])])]
    c["invocation_failed"] = [edit(base, lambda r: traj(r)["invocations"][0].update(status="failed"))]
    c["subagent"] = [edit(base, lambda r: traj(r)["invocations"][0].update(parent_invocation_id="p"))]
    c["gaps"] = [edit(base, lambda r: traj(r)["gaps"].append({"code": "resolution_unavailable", "invocation_id": "root"}))]
    c["phase_set"] = [edit(base, lambda r: traj(r)["invocations"][0]["conversation"][4].update(phase="final_answer"))]
    c["namespace_set"] = [edit(base, lambda r: traj(r)["invocations"][0]["conversation"][2].update(namespace="ns"))]
    c["unknown_item_field"] = [edit(base, lambda r: traj(r)["invocations"][0]["conversation"][3].update(extra=1))]
    c["training_fields"] = [edit(base, lambda r: traj(r)["invocations"][0]["conversation"][4].update(
        prompt_token_ids=[1], generation_token_ids=[2], generation_log_probs=[-0.1]))]
    c["question_copy_differs"] = [edit(base, lambda r: traj(r)["turns"][1]["question"].pop())]
    c["question_copy_normalized"] = [edit(base, lambda r: [traj(r)["turns"][1]["answer"][0].pop("status"), traj(r)["turns"][1]["answer"][0]["content"][0].update(logprobs=None)])]
    c["resolved_and_duration"] = [edit(base, lambda r: [traj(r)["turns"][1].update(resolved=True),
        traj(r)["invocations"][0].update(duration_ms=1234), traj(r)["tool_calls"][0].update(sandbox_id="sb-1")])]
    c["annotations"] = [edit(base, lambda r: [w.__setitem__("annotations", [{"type": "url_citation", "url": "u",
        "title": "t", "start_index": 0, "end_index": 1}]) for w in (traj(r)["invocations"][0]["conversation"][4]["content"][0],
        traj(r)["turns"][1]["answer"][0]["content"][0])])]
    c["refusal_part"] = [edit(base, lambda r: [w.update(content=[{"refusal": "no", "type": "refusal"}]) for w in
        (traj(r)["invocations"][0]["conversation"][4], traj(r)["turns"][1]["answer"][0])])]
    c["output_parts"] = [edit(base, lambda r: [w.update(output=[{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}])
        for w in (traj(r)["invocations"][0]["conversation"][3], traj(r)["turns"][1]["question"][3])] + [
        traj(r)["tool_calls"][0].update(output=[{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}])])]

    def parallel(row):
        t = traj(row)
        conv = t["invocations"][0]["conversation"]
        conv[3:3] = [call_item("p2", '{"city": "Paris"}')]
        conv.insert(4, output_item("p2", "rainy"))
        conv[3], conv[4] = conv[4], conv[3]  # results in another order than the calls
        conv[2], conv[3] = conv[2], conv[3]
        t["tool_calls"].append(dict(tool_record("p2", "rainy")))
        t["turns"][0]["answer"].append(call_item("p2", '{"city": "Paris"}'))
        t["turns"][0]["step_count"] = 2
        t["turns"][1]["step_count"] = 2
        t["turns"][1]["question"] = copy.deepcopy(conv[:6])
    par = edit(base, parallel)
    # conversation: sys, user, call a, output p2?, ... rebuilt plainly below
    conv = traj(par)["invocations"][0]["conversation"]
    conv[:] = [SYSTEM, USER, call_item("00a"), call_item("p2", '{"city": "Paris"}'), output_item("p2", "rainy"),
               output_item("00a"), message_item("00b")]
    traj(par)["turns"][1]["question"] = copy.deepcopy(conv[:6])
    c["parallel_calls"] = [par]
    c["model_names_differ"] = [edit(base, lambda r: traj(r)["model_calls"][1]["response_metadata"].update(model="other-model"))]
    c["model_name_missing"] = [edit(base, lambda r: traj(r)["model_calls"][1]["response_metadata"].pop("model"))]
    c["empty_file"] = []
    # Not Optional in v0.7.0's models (a default factory): null is refused, absent is the default.
    c["metadata_null"] = [edit(base, lambda r: traj(r)["model_calls"][1].update(response_metadata=None)),
                          edit(tool_then_answer(0, 1), lambda r: traj(r)["model_calls"][0].update(token_stats=None)),
                          edit(tool_then_answer(1, 0), lambda r: [traj(r)["model_calls"][0].pop("token_stats"),
                                                traj(r)["model_calls"][0].pop("response_metadata")])]
    # Issue 58: an annotation that is no annotation object; a lone surrogate escape in the text
    # (`@@SURROGATE@@` is written as the JSON escape `\ud83d`, which Python's json reads).
    c["annotation_not_object"] = [edit(base, lambda r: [w.__setitem__("annotations", [1]) for w in (
        traj(r)["invocations"][0]["conversation"][4]["content"][0], traj(r)["turns"][1]["answer"][0]["content"][0])])]
    c["annotation_unknown_type"] = [edit(base, lambda r: [w.__setitem__("annotations", [{"type": "nope"}]) for w in (
        traj(r)["invocations"][0]["conversation"][4]["content"][0], traj(r)["turns"][1]["answer"][0]["content"][0])])]
    c["lone_surrogate"] = [edit(base, lambda r: [w.__setitem__("text", "cold @@SURROGATE@@") for w in (
        traj(r)["invocations"][0]["conversation"][4]["content"][0], traj(r)["turns"][1]["answer"][0]["content"][0])])]
    for name in ARGS:
        c[name] = [copy.deepcopy(base)]
    return c


# Cases whose command line is not the usual `--session-id eval-<case> --agent-version 1.2.3`.
ARGS = {
    "session_id_blank": ["--session-id", "   ", "--agent-version", "1.2.3"],
    "session_id_empty": ["--session-id", "", "--agent-version", "1.2.3"],
    "agent_version_blank": ["--session-id", "s", "--agent-version", " "],
    "agent_version_missing": ["--session-id", "s"],
}


SPECIAL = {
    "BLANK": "   ",
    "NOTJSON": "{not json",
    "ARRAY": "[1, 2]",
    "DUPKEY": '{"_ng_task_index": 9, "_ng_task_index": 9, "_ng_rollout_index": 0}',
    "IMPRECISE": '{"_ng_task_index": 8, "_ng_rollout_index": 0, "x": 0.10000000000000000001}',
}


def finalize(row):
    """The Gym row's prompt and output recomputed from its (possibly edited) trajectory, as the
    agent would have written them: the leading system and user messages, then the rest."""
    try:
        conversation = row["ng_trajectory"]["invocations"][0]["conversation"]
        n = 0
        while n < len(conversation) and isinstance(conversation[n], dict) and conversation[n].get("type") == "message" \
                and conversation[n].get("role") in ("system", "user", "developer"):
            n += 1
        row["responses_create_params"]["input"] = copy.deepcopy(conversation[:n])
        row["response"]["output"] = copy.deepcopy(conversation[n:])
        calls = row["ng_trajectory"]["model_calls"]
        # Each model call's response holds what the model answered in its turn, as Gym records it.
        for turn in row["ng_trajectory"]["turns"]:
            ref = (turn.get("model_calls") or [{}])[0]
            for c in calls:
                meta = c.get("response_metadata") or {}
                if (ref.get("response_id") and ref.get("response_id") == meta.get("response_id")) or \
                        (ref.get("model_call_id") and ref.get("model_call_id") == c.get("model_call_id")):
                    if isinstance(c.get("response"), dict) and isinstance(turn.get("answer"), list):
                        c["response"]["output"] = copy.deepcopy(turn["answer"])
        # The agent's usage covers the calls of its turns (a surplus call is not one of them).
        used = [c for c in calls if any(
            ((t.get("model_calls") or [{}])[0].get("response_id") or "~") == (c.get("response_metadata") or {}).get("response_id")
            or ((t.get("model_calls") or [{}])[0].get("model_call_id") or "~") == c.get("model_call_id")
            for t in row["ng_trajectory"]["turns"])]
        row["response"]["usage"] = {
            key: sum(c.get("token_stats", {}).get(stat) or 0 for c in used)
            for key, stat in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens"))}
    except (KeyError, IndexError, TypeError, AttributeError):
        pass
    return row


def write_rows(path: Path, rows):
    rows = [finalize(copy.deepcopy(r)) if isinstance(r, dict) else r for r in rows]
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            line = SPECIAL[r] if isinstance(r, str) else json.dumps(r, ensure_ascii=False)
            f.write(line.replace("@@SURROGATE@@", "\\ud83d") + "\n")


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True)
    return p.returncode, p.stdout, p.stderr


def record(out_dir: Path, names):
    all_cases = cases()
    for name in names or sorted(all_cases):
        case = out_dir / name
        if case.exists():
            shutil.rmtree(case)
        case.mkdir(parents=True)
        write_rows(case / "rollouts.jsonl", all_cases[name])
        args = ARGS.get(name, ["--session-id", f"eval-{name}", "--agent-version", "1.2.3"])
        (case / "args").write_text("\n".join(args) + "\n")
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(case / "rollouts.jsonl", Path(tmp) / "rollouts.jsonl")
            code, out, err = run([GYM, "eval", "export", "--format", "atif", "--rollouts", "rollouts.jsonl",
                                  "--output-dir", "out", *args], tmp)
            expected = case / "expected"
            expected.mkdir()
            if (Path(tmp) / "out").exists():
                shutil.copytree(Path(tmp) / "out", expected / "out")
            real = os.path.realpath(tmp)
            (expected / "stdout").write_bytes(out.replace(real.encode(), b"<dir>"))
            (expected / "stderr").write_bytes(err.replace(real.encode(), b"<dir>"))
            (expected / "exit_code").write_text(f"{code}\n")
            print(f"{name}: exit {code}", (err.decode().splitlines() or [""])[-1][:150])


def mutate(rng: random.Random, row):
    """One random change somewhere in the trajectory: a key removed, a value of another type or
    another string, a list item duplicated or dropped."""
    paths = []

    def walk(v, path):
        paths.append(path)
        if isinstance(v, dict):
            for k in v:
                walk(v[k], path + [k])
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, path + [i])
    walk(row["ng_trajectory"], ["ng_trajectory"])
    path = rng.choice(paths[1:])
    parent = row
    for p in path[:-1]:
        parent = parent[p]
    key = path[-1]
    choice = rng.randrange(10)
    values = [None, True, 0, -1, 1.5, "", " ", "completed", "stop", "tool_calls", [], {}, "x", 2**62, 2**40, -0.0, 1e16]
    # Issue 58: annotation shapes (valid and not) on an output_text part, lone surrogates in text.
    annotations = [[1], [{}], [{"type": "nope"}], [{"type": "url_citation", "url": "u", "title": "t",
                   "start_index": 0, "end_index": 1}], [{"type": "file_path", "file_id": "f", "index": 1.0}],
                   [{"type": "file_citation", "file_id": "f", "filename": "n", "index": 0, "extra": 1}], None, "x"]
    parts = [(q, k) for q in paths for k in ("annotations", "text") if q and q[-1] == k]
    if choice == 8 and parts:
        where, _ = rng.choice(parts)
        parent = row
        for p in where[:-1]:
            parent = parent[p]
        if where[-1] == "annotations":
            parent["annotations"] = rng.choice(annotations)
        else:
            parent["text"] = rng.choice(["@@SURROGATE@@", "a @@SURROGATE@@ b", "\ud83d\ude00 paired"])
        return row
    if choice == 9:
        row[rng.choice(["x_note", "reward_note"])] = "@@SURROGATE@@"
        return row
    if choice == 0 and isinstance(parent, dict):
        del parent[key]
    elif choice == 1 and isinstance(parent, list):
        parent.insert(key, copy.deepcopy(parent[key]))
    elif choice == 2 and isinstance(parent, list):
        parent.pop(key)
    else:
        parent[key] = rng.choice(values)
    return row


def reasons(output: bytes) -> str:
    """The error as words: gymscope's own detail cut, whitespace (upstream's console wraps) folded."""
    lines = [l.split(" (gymscope:")[0] for l in output.decode(errors="replace").splitlines()]
    return " ".join(" ".join(lines).split())


def fuzz(n, seed, gymscope):
    gymscope = os.path.abspath(gymscope)
    rng = random.Random(seed)
    bases = [v for k, v in cases().items() if k in ("tool_then_answer", "reasoning_summary", "parallel_calls",
                                                     "multipart_user", "chat_dialect_ok", "refs_by_model_call_id")]
    bad = 0
    for i in range(n):
        if i and i % 10 == 0:
            print(f"after {i}: {bad} differ", flush=True)
        rows = [mutate(rng, copy.deepcopy(rng.choice(bases)[0])) for _ in range(rng.randrange(1, 3))]
        for j, r in enumerate(rows):
            r["_ng_rollout_index"] = j
        with tempfile.TemporaryDirectory() as tmp:
            write_rows(Path(tmp) / "r.jsonl", rows)
            args = ["--format", "atif", "--rollouts", "r.jsonl", "--session-id", "s", "--agent-version", "v"]
            up = run([GYM, "eval", "export", *args, "--output-dir", "up"], tmp)
            gs = run([gymscope, "export", *args, "--output-dir", "gs"], tmp)
            same_code = (up[0] == 0) == (gs[0] == 0)
            if up[0] == 0 and gs[0] == 0:
                a, b = sorted(os.listdir(Path(tmp) / "up")), sorted(os.listdir(Path(tmp) / "gs"))
                same = a == b and all((Path(tmp) / "up" / f).read_bytes() == (Path(tmp) / "gs" / f).read_bytes() for f in a)
            else:
                same = same_code and reasons(up[1] + up[2]) == reasons(gs[1] + gs[2])
            if not same:
                bad += 1
                keep = Path(f"/tmp/atif-fuzz/{seed}-{i}")
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(Path(tmp) / "r.jsonl", keep / "r.jsonl")
                print(f"case {i}: upstream exit {up[0]}, gymscope exit {gs[0]} (kept in {keep})")
                print("  up:", up[2].decode()[-400:].replace("\n", " | "))
                print("  gs:", gs[2].decode()[-400:].replace("\n", " | "))
    print(f"{n} cases, {bad} differ", flush=True)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--fuzz", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gymscope", default="target/release/gymscope")
    a = ap.parse_args()
    if a.fuzz:
        sys.exit(fuzz(a.fuzz, a.seed, a.gymscope))
    record(Path(a.out_dir), a.cases)


if __name__ == "__main__":
    main()
