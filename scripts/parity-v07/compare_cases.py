#!/usr/bin/env python3
"""Oracle fixtures for `gym eval compare`, recorded from NeMo Gym v0.7.0 itself.

For each case it writes

    OUT_DIR/<case>/baseline/rollouts.jsonl, rollouts_materialized_inputs.jsonl, rollouts_aggregate_metrics.json
    OUT_DIR/<case>/candidate/…                                       (the same three files)
    OUT_DIR/<case>/expected/args, exit_code, stdout, stderr, compare_report.json, compare_report.md

The aggregate files are what v0.7.0 writes: `RolloutAggregationHelper.run_from_config` (the body of
`gym eval aggregate`, which calls `RolloutCollectionHelper._call_aggregate_metrics` exactly as
collection does) runs over the side's rollouts, with `setup_server_client` replaced by an
in-process client whose environment servers are FastAPI apps routing `/aggregate_metrics` to
`SimpleResourcesServer.aggregate_metrics` (that is `reward_profile.compute_aggregate_metrics` with
the mixin's default hooks, or a pass@k benchmark's hooks in the `bench_*` cases). Requests and
answers cross real JSON (orjson request body, FastAPI response serialization, orjson parse). The
servers answer in the order their rows first appear (sorted by task, rollout), so entry order is
deterministic. A few cases then edit an aggregate file by hand (legacy files without
`repeat_level_metrics`, error files); each case's docstring says so.

`expected/` is the real CLI (`<venv>/bin/gym eval compare …`) run in a temp copy of the case,
cwd = the copy, inputs named relative to it, `--output-dir <out>` a fresh temp dir. In every
recorded file the copy's absolute path reads `<dir>`, the output dir `<out>` and the venv's
site-packages `<site-packages>`. `args` holds the flags one per line (paths relative to the case
dir; `<out>` stands for the output dir).

Run with the v0.7.0 venv's python (it imports nemo_gym):

    ~/.cache/gym07/bin/python scripts/parity-v07/compare_cases.py tests/fixtures/compare-v07
    ~/.cache/gym07/bin/python scripts/parity-v07/compare_cases.py tests/fixtures/compare-v07 --fuzz 20 --seed 22

`--fuzz N --seed S` writes N random pairs named `fuzz_<S>_<i>` instead of the named cases.
Tests and CI never run this.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import httpx
import orjson
from fastapi import FastAPI
from omegaconf import OmegaConf

from nemo_gym.base_resources_server import SimpleResourcesServer
from nemo_gym.config_types import AggregateMetrics, AggregateMetricsRequest
from nemo_gym.reward_profile import AggregateMetricsMixin, compute_pass_majority_metrics, highest_k_metrics
from nemo_gym.rollout_collection import RolloutAggregationConfig, RolloutAggregationHelper, RolloutCollectionHelper

TASK, ROLLOUT = "_ng_task_index", "_ng_rollout_index"
SERVER = "_ng_environment_server"
GYM = os.environ.get("GYM", str(Path(sys.executable).parent / "gym"))
SITE_PACKAGES = sysconfig.get_paths()["purelib"]
STEM = "rollouts"
MISSING = object()  # a materialized rollout that produced no result row (partial run)


# ----------------------------------------------------------------------------------------------
# environment servers answering /aggregate_metrics in process


class PassAtK(AggregateMetricsMixin):
    """A benchmark's hooks, as `resources_servers/simpleqa/app.py` writes them."""

    def compute_metrics(self, tasks):
        return compute_pass_majority_metrics(tasks)[0]

    def get_key_metrics(self, agent_metrics):
        key = {n: agent_metrics[n] for n in ("mean/input_tokens", "mean/output_tokens") if n in agent_metrics}
        key.update(highest_k_metrics(agent_metrics, "pass@1[avg-of-{k}]"))
        key.update(highest_k_metrics(agent_metrics, "pass@{k}", exclude_names=["no_answer"]))
        # A name only key_metrics carries (as an ASR server's `wer`): the row's value comes from here.
        key["accuracy_pct"] = next(v for n, v in key.items() if n.startswith("pass@1[avg-of-"))
        return key


HOOKS = {"default": AggregateMetricsMixin, "pass_at_k": PassAtK}


def server_app(hooks: str) -> FastAPI:
    srv = HOOKS[hooks]()
    app = FastAPI()

    # The route SimpleResourcesServer.setup_webserver declares, on its own method.
    async def aggregate_metrics(body: AggregateMetricsRequest) -> AggregateMetrics:
        return await SimpleResourcesServer.aggregate_metrics(srv, body)

    app.post("/aggregate_metrics")(aggregate_metrics)
    return app


class _Response:
    def __init__(self, r: httpx.Response):
        self._r = r
        self.ok = r.status_code < 400
        if not self.ok:
            raise RuntimeError(f"/aggregate_metrics answered {r.status_code}: {r.text[:2000]}")

    async def read(self) -> bytes:
        return self._r.content


class FakeServerClient:
    """What `_call_aggregate_metrics` uses of `ServerClient`: `global_config_dict` and `post`."""

    def __init__(self, config: Dict[str, Any], hooks: Dict[str, str], order: List[str]):
        self.global_config_dict = OmegaConf.create(config)
        self.apps = {name: server_app(hooks.get(name, "default")) for name in config}
        self.order = order

    async def post(self, server_name: str, url_path: str, json: Any):
        # ServerClient.request: model_dump(exclude_unset=True); server_utils.request: orjson body.
        body = orjson.dumps(json.model_dump(exclude_unset=True))
        # Answer in the order the servers' rows first appear: as_completed then lists them so.
        rank = self.order.index(server_name) if server_name in self.order else len(self.order)
        await asyncio.sleep(0.02 * rank)
        transport = httpx.ASGITransport(app=self.apps[server_name])
        async with httpx.AsyncClient(transport=transport, base_url="http://server") as client:
            r = await client.post(url_path, content=body, headers={"Content-Type": "application/json"})
        return _Response(r)


# ----------------------------------------------------------------------------------------------
# one side of a comparison


class Run:
    """A run's materialized rows and results. Rows of an agent without a server stamp run through
    `<agent>_env`; stamped rows through their stamp, whose bound agent is `binds[server]` (else the
    row's agent)."""

    def __init__(self, seed: int, usage: bool = False):
        self.rng = random.Random(seed)
        self.usage = usage
        self.mat: List[Dict[str, Any]] = []
        self.results: List[Dict[str, Any]] = []
        self.binds: Dict[str, str] = {}
        self.hooks: Dict[str, str] = {}  # server -> hooks name

    def add(self, agent: Optional[str], task: int, rollout: int, reward: Any, server: Optional[str] = None,
            **fields: Any) -> None:
        m: Dict[str, Any] = {}
        if agent is not None:
            m["agent_ref"] = {"name": agent}
        if server is not None:
            m[SERVER] = server
        m[TASK], m[ROLLOUT] = task, rollout
        self.mat.append(m)
        if reward is MISSING:
            return
        d: Dict[str, Any] = {}
        if self.usage:
            i, o = self.rng.randint(20, 400), self.rng.randint(1, 300)
            d["response"] = {"usage": {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}}
        d["reward"] = reward
        d.update({k: v for k, v in fields.items() if v is not MISSING})
        for k in ("agent_ref", SERVER):
            if k in m:
                d[k] = m[k]
        d[TASK], d[ROLLOUT] = task, rollout
        self.results.append(d)

    def servers(self) -> Dict[str, Any]:
        config: Dict[str, Any] = {}
        for m in self.mat:
            agent = (m.get("agent_ref") or {}).get("name")
            server = m.get(SERVER) or f"{agent}_env"
            bound = self.binds.get(server, agent)
            config.setdefault(server, {"environment_servers": {"legacy_agent": {
                "entrypoint": "app.py", "agent_server": {"type": "responses_api_agents", "name": bound}}}})
        return config

    def write(self, d: Path) -> None:
        d.mkdir(parents=True, exist_ok=True)
        lines = [orjson.dumps(r) for r in self.results]
        self.rng.shuffle(lines)  # completion order
        (d / f"{STEM}_materialized_inputs.jsonl").write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in self.mat))
        (d / f"{STEM}.jsonl").write_bytes(b"".join(l + b"\n" for l in lines))
        aggregate(d / f"{STEM}.jsonl", self)


def aggregate(rollouts: Path, run: Run) -> None:
    """`gym eval aggregate +input_glob=R +output_jsonl_fpath=R +merge_shards=false` against `run`'s servers."""
    config = run.servers()
    order: List[str] = []
    for r in sorted(run.results, key=lambda r: (r[TASK], r[ROLLOUT])):
        server = r.get(SERVER) or f"{r['agent_ref']['name']}_env"
        if server not in order:
            order.append(server)
    client = FakeServerClient(config, run.hooks, order)
    saved = RolloutCollectionHelper.setup_server_client
    RolloutCollectionHelper.setup_server_client = lambda self, head_server_config=None: client
    try:
        cfg = RolloutAggregationConfig(input_glob=str(rollouts), output_jsonl_fpath=str(rollouts), merge_shards=False,
                                       disable_health_check=True)
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Standard error is 0": the aggregation's, not compare's
            asyncio.run(RolloutAggregationHelper().run_from_config(cfg))
    finally:
        RolloutCollectionHelper.setup_server_client = saved


# ----------------------------------------------------------------------------------------------
# hand edits of aggregate files


def agg_path(case: Path, side: str) -> Path:
    return case / side / f"{STEM}_aggregate_metrics.json"


def load_agg(case: Path, side: str) -> List[Dict[str, Any]]:
    return orjson.loads(agg_path(case, side).read_bytes())


def save_agg(case: Path, side: str, payload: Any) -> None:
    agg_path(case, side).write_bytes(orjson.dumps(payload, option=orjson.OPT_INDENT_2))


def make_legacy(case: Path, side: str) -> None:
    """An aggregate file from before repeat statistics: no `repeat_level_metrics`, no `*_across_repeats/*`."""
    entries = load_agg(case, side)
    for e in entries:
        e.pop("repeat_level_metrics", None)
        e["agent_metrics"] = {k: v for k, v in e["agent_metrics"].items() if "_across_repeats/" not in k}
    save_agg(case, side, entries)


# ----------------------------------------------------------------------------------------------
# cases


class Case:
    def __init__(self, name: str, doc: str, baseline: Run, candidate: Run, args: Optional[List[str]] = None,
                 post: Optional[Callable[[Path], None]] = None):
        self.name, self.doc = name, doc
        self.baseline, self.candidate = baseline, candidate
        self.args = args if args is not None else default_args()
        self.post = post


def default_args(*extra: str, out: bool = True) -> List[str]:
    a = ["--baseline", f"baseline/{STEM}.jsonl", "--candidates", f"candidate/{STEM}.jsonl"]
    if out:
        a += ["--output-dir", "<out>"]
    return a + list(extra)


def binary_run(seed: int, agent: str, pattern: List[List[int]], task0: int = 0, extra: bool = False,
               run: Optional[Run] = None, server: Optional[str] = None) -> Run:
    run = run or Run(seed)
    for t, rewards in enumerate(pattern):
        for r, reward in enumerate(rewards):
            fields: Dict[str, Any] = {}
            if extra and reward is not MISSING:
                fields = {"format_ok": 1}
            run.add(agent, task0 + t, r, reward if reward is MISSING else float(reward), server, **fields)
    return run


FLIP_BASE = [
    [1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0], [0, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1], [1, 0, 0, 1],
    [1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 0, 1], [1, 1, 1, 0], [0, 0, 1, 0], [1, 1, 1, 1], [0, 0, 0, 1],
    [1, 0, 1, 1], [0, 0, 0, 0],
]
FLIP_CAND = [
    [0, 0, 0, 0], [0, 0, 1, 0], [1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 0, 1], [0, 1, 1, 0],
    [1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 1, 1], [0, 0, 0, 1], [1, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 1],
    [0, 1, 1, 0], [0, 0, 0, 0],
]


def binary_flips() -> Case:
    """Binary rewards, 16 tasks x 4 repeats: pass->fail (tasks 0, 1, 10), fail->pass (2, 3, 11), tied
    (4, 5, 6, 14: a side's mean is exactly 0.5), unchanged (7, 8, 9, 12, 13, 15)."""
    return Case("binary_flips", binary_flips.__doc__, binary_run(1, "policy", FLIP_BASE),
                binary_run(2, "policy", FLIP_CAND))


def binary_many_flips() -> Case:
    """Binary, 24 tasks x 3 repeats, 12 pass->fail and 11 fail->pass (|delta| 1/3 to 1, spread over
    the task indices): more than 10 per direction, so reward lists are nulled past the 10th flip of a
    direction and the md says `… and N more`."""
    rng = random.Random(3)
    kinds = ["p2f"] * 12 + ["f2p"] * 11 + ["same"]
    rng.shuffle(kinds)
    base, cand = [], []
    for kind in kinds:
        hi, lo = [1, 1, rng.choice([0, 1])], [0, rng.choice([0, 1]), 0]
        rng.shuffle(hi), rng.shuffle(lo)
        base.append({"p2f": hi, "f2p": lo, "same": [1, 1, 1]}[kind])
        cand.append({"p2f": lo, "f2p": hi, "same": [1, 1, 1]}[kind])
    return Case("binary_many_flips", binary_many_flips.__doc__, binary_run(4, "policy", base),
                binary_run(5, "policy", cand))


def continuous_run(seed: int, agent: str, tasks: int, repeats: int, shift: Optional[float] = None,
                   same: set = frozenset(), base_seed: int = 0, run: Optional[Run] = None, task0: int = 0) -> Run:
    """Rewards in [0, 1]: a task's per-repeat rewards come from `base_seed` (so runs built with one
    base_seed share them); with a `shift`, tasks not in `same` move by it plus noise."""
    run = run or Run(seed)
    base_rng = random.Random(base_seed)
    for t in range(tasks):
        level = base_rng.random()
        for r in range(repeats):
            v = min(1.0, max(0.0, level + base_rng.uniform(-0.2, 0.2)))
            if shift is not None and t not in same:
                v = min(1.0, max(0.0, v + shift + run.rng.uniform(-0.15, 0.15)))
            run.add(agent, task0 + t, r, round(v, 4))
    return run


def continuous() -> Case:
    """Continuous rewards, 14 tasks x 3 repeats on both sides; tasks 3 and 7 identical (unchanged),
    the other 12 changed (past 10: reward lists nulled)."""
    return Case("continuous", continuous.__doc__, continuous_run(10, "judge", 14, 3, base_seed=99),
                continuous_run(11, "judge", 14, 3, shift=0.05, same={3, 7}, base_seed=99))


def repeats_differ() -> Case:
    """Binary rewards, baseline 3 repeats, candidate 5 (note: repeat counts differ); Welch CIs
    on both sides."""
    rng = random.Random(12)
    base = [[rng.choice([0, 1]) for _ in range(3)] for _ in range(6)]
    cand = [[rng.choice([0, 1]) for _ in range(5)] for _ in range(6)]
    return Case("repeats_differ", repeats_differ.__doc__, binary_run(13, "policy", base),
                binary_run(14, "policy", cand))


def single_repeat() -> Case:
    """One repeat on both sides: no repeat-level entries, no CIs (note), no delta CI."""
    rng = random.Random(16)
    base = [[rng.choice([0, 1])] for _ in range(8)]
    cand = [[rng.choice([0, 1])] for _ in range(8)]
    return Case("single_repeat", single_repeat.__doc__, binary_run(16, "policy", base),
                binary_run(17, "policy", cand))


def single_vs_multi() -> Case:
    """Baseline 1 repeat, candidate 4 (continuous): CIs on the candidate only, no delta CI,
    repeat counts differ."""
    return Case("single_vs_multi", single_vs_multi.__doc__, continuous_run(18, "judge", 6, 1, base_seed=5),
                continuous_run(19, "judge", 6, 4, shift=-0.1, base_seed=5))


def multi_run(seed: int, agents: List[str], shift: float, tasks: int = 3, repeats: int = 2) -> Run:
    """Agents with disjoint task ranges in one run (30 task indices per agent slot), alternating binary
    and continuous rewards."""
    run = Run(seed)
    slots = {"alpha": 0, "beta": 1, "gamma": 2, "legacy_only": 3, "new_only": 4,
             "a_agent": 5, "shared_one": 6, "x`tick": 7, "b*agent": 8, "c|pipe": 9}
    for a in agents:
        k = slots[a]
        if k % 2 == 0:
            rng = random.Random(100 + k)
            pat = [[int(rng.random() < 0.5 + (shift if t % 2 else 0)) for _ in range(repeats)] for t in range(tasks)]
            binary_run(0, a, pat, task0=30 * k, run=run)
        else:
            continuous_run(0, a, tasks, repeats, shift=shift, base_seed=200 + k, run=run, task0=30 * k)
    return run


def multi_agent(name: str = "multi_agent", args: Optional[List[str]] = None, doc: Optional[str] = None,
                tasks: int = 3) -> Case:
    """Several agents: alpha, beta, gamma on both sides, legacy_only in the baseline only, new_only in
    the candidate only: skipped_agents + warnings, one comparison per common agent (sorted)."""
    return Case(name, doc or multi_agent.__doc__,
                multi_run(20, ["gamma", "alpha", "legacy_only", "beta"], 0.1, tasks),
                multi_run(21, ["beta", "new_only", "alpha", "gamma"], 0.3, tasks), args)


def select_agent() -> Case:
    return multi_agent("select_agent", default_args("--agent", "beta"),
                       "multi_agent's agents (2 tasks each) with `--agent beta`: one comparison, nothing skipped.",
                       2)


def select_per_side() -> Case:
    return multi_agent("select_per_side", default_args("--baseline-agent", "legacy_only", "--candidate-agents",
                                                       "new_only"),
                       "multi_agent's agents (2 tasks each), `--baseline-agent legacy_only --candidate-agents "
                       "new_only`: differently named agents compared (flips: no overlapping task indices).", 2)


def select_per_side_with_agent() -> Case:
    return multi_agent("select_per_side_with_agent", default_args("--agent", "alpha", "--candidate-agents", "gamma"),
                       "multi_agent's agents (2 tasks each), `--agent alpha --candidate-agents gamma`: the "
                       "per-side name wins on the candidate, --agent fills the baseline.", 2)


def _small_multi(name: str, doc: str, args: List[str]) -> Case:
    return Case(name, doc, multi_run(52, ["alpha", "beta", "legacy_only"], 0.0, 2, 2),
                multi_run(53, ["beta", "alpha", "new_only"], 0.2, 2, 2), args)


def error_sole_agent() -> Case:
    return _small_multi("error_sole_agent", "Agents alpha, beta, legacy_only vs beta, alpha, new_only; "
                        "`--baseline-agent alpha` alone: the candidate has several agents and none was named "
                        "for it -> error.", default_args("--baseline-agent", "alpha"))


def error_unknown_agent() -> Case:
    return _small_multi("error_unknown_agent", "Agents alpha, beta, legacy_only vs beta, alpha, new_only; "
                        "`--agent alpah`: not in the baseline -> error with a did-you-mean.",
                        default_args("--agent", "alpah"))


def error_no_common_agent() -> Case:
    """Disjoint agent names and no selection -> error listing both sides' agents."""
    return Case("error_no_common_agent", error_no_common_agent.__doc__,
                multi_run(22, ["alpha", "legacy_only"], 0, 2, 2), multi_run(23, ["beta", "new_only"], 0, 2, 2))


def single_agent_renamed() -> Case:
    """One agent per side, named differently (`old_policy` vs `new_policy`): `--baseline-agent
    old_policy` alone; the candidate's sole agent is taken."""
    rng = random.Random(24)
    base = [[rng.choice([0, 1]) for _ in range(3)] for _ in range(5)]
    cand = [[rng.choice([0, 1]) for _ in range(3)] for _ in range(5)]
    return Case("single_agent_renamed", single_agent_renamed.__doc__, binary_run(25, "old_policy", base),
                binary_run(26, "new_policy", cand), default_args("--baseline-agent", "old_policy"))


def one_sided_metrics() -> Case:
    """`judge_score` only in the baseline, `latency_s` and `score/p95` (not primary) only in the
    candidate, `tool_calls` in both: one-sided rows, the note and the md section."""
    base, cand = Run(27), Run(28)
    for t in range(4):
        for r in range(2):
            base.add("policy", t, r, float(base.rng.random() < 0.6), judge_score=base.rng.randint(0, 10),
                     tool_calls=base.rng.randint(0, 5))
            cand.add("policy", t, r, float(cand.rng.random() < 0.7), latency_s=round(cand.rng.uniform(0.5, 9), 3),
                     tool_calls=cand.rng.randint(0, 5), **{"score/p95": cand.rng.random()})
    return Case("one_sided_metrics", one_sided_metrics.__doc__, base, cand)


def extra_metrics() -> Case:
    """Response usage (input/output/total tokens) and numeric fields of every kind: bool, int,
    float, names that are not primary (`x/max`, `acc_ci_lower`, `num_repeats`, `p/std_err_across_runs`,
    `_private`), a string field; only `mean/*` of primary names survive as metric rows."""
    base, cand = Run(29, usage=True), Run(30, usage=True)
    for run, p in ((base, 0.5), (cand, 0.6)):
        for t in range(4):
            for r in range(2):
                run.add("policy", t, r, float(run.rng.random() < p), accuracy=run.rng.random() < p,
                        tokens=run.rng.randint(100, 4000),
                        **{"x/max": run.rng.random(), "acc_ci_lower": 0.1, "num_repeats": 4,
                           "p/std_err_across_runs": 0.3, "_private": 7, "label": "text", "Zeta": run.rng.random()})
    return Case("extra_metrics", extra_metrics.__doc__, base, cand)


def zero_baseline() -> Case:
    """Baseline reward always 0 and `errors` always 0: delta_pct null, md `(n/a)`; every task
    fail->pass or unchanged. Zero variance on the baseline side."""
    base, cand = Run(31), Run(32)
    for t in range(5):
        for r in range(3):
            base.add("policy", t, r, 0.0, errors=0)
            cand.add("policy", t, r, float(cand.rng.random() < 0.6), errors=cand.rng.randint(0, 2))
    return Case("zero_baseline", zero_baseline.__doc__, base, cand)


def task_sets_differ() -> Case:
    """Baseline tasks 0-7, candidate tasks 4-11 (binary, 3 repeats): 4 common, 4 only on each side."""
    rng = random.Random(33)
    base = [[rng.choice([0, 1]) for _ in range(3)] for _ in range(8)]
    cand = [[rng.choice([0, 1]) for _ in range(3)] for _ in range(8)]
    return Case("task_sets_differ", task_sets_differ.__doc__, binary_run(34, "policy", base),
                binary_run(35, "policy", cand, task0=4))


def no_common_tasks() -> Case:
    """Disjoint task indices (0-4 vs 10-14): flips unavailable with the overlap reason."""
    rng = random.Random(36)
    base = [[rng.choice([0, 1]) for _ in range(2)] for _ in range(5)]
    cand = [[rng.choice([0, 1]) for _ in range(2)] for _ in range(5)]
    return Case("no_common_tasks", no_common_tasks.__doc__, binary_run(37, "policy", base),
                binary_run(38, "policy", cand, task0=10))


def repeat_gaps() -> Case:
    """Missing per-repeat values. `late` is reported only in repeats 2-3 of the baseline (2 values)
    and repeat 3 of the candidate (1 value: no delta CI); `sparse` in about half the rollouts; the
    candidate misses 5 rollouts (partial: missing_count > 0 -> the coverage warning). Hand edit
    afterwards: the baseline's repeat 1 `mean/judge` set to null (what orjson writes for NaN),
    leaving 3 finite values."""
    base, cand = Run(39), Run(40)
    gone = {(1, 0), (2, 2), (4, 3), (5, 1), (5, 2)}
    for run, lo in ((base, 2), (cand, 3)):
        for t in range(6):
            for r in range(4):
                if run is cand and (t, r) in gone:
                    run.add("policy", t, r, MISSING)
                    continue
                run.add("policy", t, r, round(run.rng.random(), 3), judge=run.rng.randint(1, 5),
                        late=run.rng.random() if r >= lo else MISSING,
                        sparse=run.rng.random() if run.rng.random() < 0.5 else MISSING)

    def post(case: Path) -> None:
        entries = load_agg(case, "baseline")
        entries[0]["repeat_level_metrics"][1]["mean/judge"] = None
        save_agg(case, "baseline", entries)

    return Case("repeat_gaps", repeat_gaps.__doc__, base, cand, post=post)


def legacy_baseline() -> Case:
    """Hand edit: the baseline's aggregate file lacks `repeat_level_metrics` and the across-repeats
    keys (a pre-repeat-statistics file): compare recomputes them from `rollout_infos` with a warning."""
    rng = random.Random(41)
    base = [[rng.choice([0, 1]) for _ in range(3)] for _ in range(6)]
    cand = [[rng.choice([0, 1]) for _ in range(3)] for _ in range(6)]
    return Case("legacy_baseline", legacy_baseline.__doc__, binary_run(42, "policy", base),
                binary_run(43, "policy", cand), post=lambda c: make_legacy(c, "baseline"))


def legacy_both_multi() -> Case:
    """Hand edit: both sides' files (several agents) without `repeat_level_metrics`."""
    c = multi_agent("legacy_both_multi", default_args("--agent", "beta"), legacy_both_multi.__doc__, 2)
    c.post = _legacy_both
    return c


def env_servers_run(seed: int, shift: float) -> Run:
    """Agent `shared` behind two environment servers (env_math_1, env_math_2; stamped rows, each task
    fanned out to both, rollout indices continuing); `coder` behind its own server (unstamped rows);
    server `episodes` whose rows carry no agent_ref (bound agent `episode_agent`)."""
    run = Run(seed)
    run.binds["episodes"] = "episode_agent"
    for t in range(3):
        for i, server in enumerate(("env_math_1", "env_math_2")):
            for rep in range(2):
                run.add("shared", t, i * 2 + rep, float(run.rng.random() < 0.5 + shift), server,
                        steps=run.rng.randint(1, 6))
    for t in range(3, 6):
        for r in range(2):
            run.add("coder", t, r, round(min(1.0, run.rng.random() + shift), 3), tests_passed=run.rng.randint(0, 9))
    for t in range(6, 8):
        for r in range(2):
            run.add(None, t, r, float(run.rng.random() < 0.4 + shift), "episodes", turns=run.rng.randint(1, 4))
    return run


def env_servers() -> Case:
    """Environment servers and fan-out: labels env_math_1, env_math_2 (one agent behind two servers),
    coder, episode_agent (rows without agent_ref); each entry carries `_ng_environment_server`."""
    return Case("env_servers", env_servers.__doc__, env_servers_run(44, 0.0), env_servers_run(45, 0.2))


def masked() -> Case:
    """Masked rollouts (`mask_sample`): coverage/* counts in agent and key metrics; the candidate masks
    every rollout of task 2."""
    base, cand = Run(46), Run(47)
    for run in (base, cand):
        for t in range(5):
            for r in range(3):
                mark = run.rng.random() < 0.15 or (run is cand and t == 2)
                run.add("policy", t, r, float(run.rng.random() < 0.5), mask_sample=True if mark else MISSING)
    return Case("masked", masked.__doc__, base, cand)


def bench_run(seed: int, repeats: int, p: float, usage: bool = True) -> Run:
    run = Run(seed, usage=usage)
    run.hooks["policy_env"] = "pass_at_k"
    for t in range(4):
        for r in range(repeats):
            run.add("policy", t, r, float(run.rng.random() < p))
    return run


def bench_pass_at_k() -> Case:
    """Benchmark hooks (compute_pass_majority_metrics, highest-k key metrics as simpleqa, plus
    `accuracy_pct` present in key_metrics only): pass@k metrics with `…/std_err_across_runs` (the
    std_err_across_runs field), key metrics that are not mean/*, non-key rows in the md's details."""
    return Case("bench_pass_at_k", bench_pass_at_k.__doc__, bench_run(48, 4, 0.5), bench_run(49, 4, 0.65))


def bench_repeats_differ() -> Case:
    """Benchmark hooks with 3 vs 5 repeats, no usage: pass@k names embed k, so many one-sided rows."""
    return Case("bench_repeats_differ", bench_repeats_differ.__doc__, bench_run(50, 3, 0.5, False),
                bench_run(51, 5, 0.6, False))


def error_no_shared_metric() -> Case:
    """Hand edit of bench_repeats_differ's files: agent metrics cut to the key metrics (the
    highest-k `pass@*` names, which embed k) and num_repeats: no shared metric -> error."""

    def post(case: Path) -> None:
        for side in ("baseline", "candidate"):
            entries = load_agg(case, side)
            for e in entries:
                keep = {n for n in e["key_metrics"] if n.startswith("pass@")} | {"num_repeats"}
                for k in ("agent_metrics", "key_metrics"):
                    e[k] = {n: v for n, v in e[k].items() if n in keep}
            save_agg(case, side, entries)

    return Case("error_no_shared_metric", error_no_shared_metric.__doc__, bench_run(50, 3, 0.5, False),
                bench_run(51, 5, 0.6, False), post=post)


def _small(seed: int) -> Run:
    rng = random.Random(seed)
    return binary_run(seed + 1, "policy", [[rng.choice([0, 1]) for _ in range(2)] for _ in range(4)])


def _error_case(name: str, doc: str, post: Callable[[Path], None], args: Optional[List[str]] = None) -> Case:
    return Case(name, doc, _small(60), _small(62), args, post)


def error_missing_agg() -> Case:
    return _error_case("error_missing_agg", "The candidate's aggregate file is absent -> error.",
                       lambda c: agg_path(c, "candidate").unlink())


def error_empty_list() -> Case:
    return _error_case("error_empty_list", "The candidate's aggregate file is `[]` -> error.",
                       lambda c: agg_path(c, "candidate").write_bytes(b"[]"))


def error_not_list() -> Case:
    return _error_case("error_not_list", "The baseline's aggregate file is a JSON object -> error.",
                       lambda c: agg_path(c, "baseline").write_bytes(b'{"agent_ref": {"name": "policy"}}'))


def error_duplicate_agent() -> Case:
    def post(case: Path) -> None:
        entries = load_agg(case, "baseline")
        save_agg(case, "baseline", entries + entries)

    return _error_case("error_duplicate_agent", "The baseline's entry appears twice -> error.", post)


def error_no_agent_name() -> Case:
    def post(case: Path) -> None:
        entries = load_agg(case, "candidate")
        entries[0]["agent_ref"] = {"type": "responses_api_agents"}
        save_agg(case, "candidate", entries)

    return _error_case("error_no_agent_name", "The candidate's entry has an agent_ref without name -> error.", post)


def error_nan_literal() -> Case:
    def post(case: Path) -> None:
        p = agg_path(case, "candidate")
        p.write_bytes(p.read_bytes().replace(b'"mean/reward": ', b'"mean/reward": NaN, "was": ', 1))

    return _error_case("error_nan_literal", "A `NaN` literal in the candidate's file: not valid JSON for orjson.",
                       post)


def error_two_candidates() -> Case:
    return _error_case("error_two_candidates", "Two candidates (comma-separated): refused, v0.7.0 supports one.",
                       lambda c: None,
                       ["--baseline", "baseline/rollouts.jsonl", "--candidates",
                        "candidate/rollouts.jsonl,candidate/rollouts.jsonl", "--output-dir", "<out>"])


def error_candidate_agents_count() -> Case:
    return _error_case("error_candidate_agents_count", "`--candidate-agents a,b` for one candidate: refused.",
                       lambda c: None, default_args("--candidate-agents", "policy,policy"))


def agg_override() -> Case:
    """`--baseline-agg-metrics` / `--candidates-agg-metrics` naming files that are not siblings of the
    rollouts (the siblings are removed)."""

    def post(case: Path) -> None:
        agg_path(case, "baseline").rename(case / "baseline" / "metrics_base.json")
        (case / "candidate" / "agg").mkdir()
        agg_path(case, "candidate").rename(case / "candidate" / "agg" / "metrics_cand.json")

    rng = random.Random(64)
    base = [[rng.choice([0, 1]) for _ in range(2)] for _ in range(4)]
    cand = [[rng.choice([0, 1]) for _ in range(2)] for _ in range(4)]
    return Case("agg_override", agg_override.__doc__, binary_run(65, "policy", base), binary_run(66, "policy", cand),
                default_args("--baseline-agg-metrics", "baseline/metrics_base.json", "--candidates-agg-metrics",
                             "candidate/agg/metrics_cand.json"), post)


def rollouts_not_read() -> Case:
    """`--candidates` names a rollouts file that does not exist while `--candidates-agg-metrics` gives
    the metrics: the rollouts JSONL is never opened (label = its parent directory name)."""
    rng = random.Random(67)
    base = [[rng.choice([0, 1]) for _ in range(2)] for _ in range(5)]
    cand = [[rng.choice([0, 1]) for _ in range(2)] for _ in range(5)]
    return Case("rollouts_not_read", rollouts_not_read.__doc__, binary_run(68, "policy", base),
                binary_run(69, "policy", cand),
                ["--baseline", "baseline/rollouts.jsonl", "--candidates", "elsewhere/run_b.jsonl",
                 "--candidates-agg-metrics", "candidate/rollouts_aggregate_metrics.json", "--output-dir", "<out>"])


def _small_binary(name: str, doc: str, args: List[str], seed: int) -> Case:
    """Binary, 5 tasks x 3 repeats, extra metric format_ok (always 1: zero variance on both sides,
    Welch interval [0, 0] with scipy's "Precision loss" warning)."""
    rng = random.Random(seed)
    base = [[rng.choice([0, 1]) for _ in range(3)] for _ in range(5)]
    cand = [[rng.choice([0, 1]) for _ in range(3)] for _ in range(5)]
    return Case(name, doc, binary_run(seed + 1, "policy", base, extra=True),
                binary_run(seed + 2, "policy", cand, extra=True), args)


def report_json_only() -> Case:
    return _small_binary("report_json_only", "Binary, 5 tasks x 3 repeats, format_ok always 1 (Welch [0, 0]), "
                         "`--report-format json`.",
                         default_args("--report-format", "json"), 72)


def report_md_only() -> Case:
    return Case("report_md_only", "Continuous, 5 tasks x 2 repeats, `--report-format md`.",
                continuous_run(75, "judge", 5, 2, base_seed=76), continuous_run(77, "judge", 5, 2, 0.1, base_seed=76),
                default_args("--report-format", "md"))


def default_output_dir() -> Case:
    return _small_binary("default_output_dir", "Binary, 5 tasks x 3 repeats, format_ok always 1, no --output-dir: "
                         "the reports land "
                         "in candidate/ (stdout `Wrote: <dir>/candidate/…`).", default_args(out=False), 78)


def large_values() -> Case:
    """Metrics >= 10 (md `.2f`), negative values, tiny values (`.4f` of 1e-5 is 0.0000), and deltas
    above 10 (md `+.2f`)."""
    base, cand = Run(70), Run(71)
    for run, k in ((base, 1.0), (cand, 3.0)):
        for t in range(3):
            for r in range(2):
                run.add("policy", t, r, round(run.rng.uniform(-1, 1), 3), tokens=int(run.rng.randint(800, 1200) * k),
                        tiny=run.rng.uniform(1e-6, 5e-5) * k, balance=round(run.rng.uniform(-50, -20) * k, 2))
    return Case("large_values", large_values.__doc__, base, cand)


def zero_variance() -> Case:
    """Per-repeat values constant on both sides: `version` 1 vs 2 (zero variance: scipy's df falls
    back to 1, Welch interval [1, 1]), `ratio` 0.1 on both sides (Welch [0, 0] with scipy's
    "Precision loss" RuntimeWarning on stderr)."""
    base, cand = Run(80), Run(81)
    for run, version in ((base, 1), (cand, 2)):
        for t in range(3):
            for r in range(3):
                run.add("policy", t, r, float(run.rng.random() < 0.5), version=version, ratio=0.1)
    return Case("zero_variance", zero_variance.__doc__, base, cand)


def markdown_names() -> Case:
    """Agent names with Markdown's characters (`a_agent`, `b*agent`, a backtick, a `|`), each on
    one side only but for `shared_one`: v0.7.0 writes them as they are, in the warnings and in
    code spans (issue 58)."""
    return Case("markdown_names", markdown_names.__doc__,
                multi_run(30, ["a_agent", "shared_one", "x`tick"], 0.1, 2),
                multi_run(31, ["shared_one", "b*agent", "c|pipe"], 0.2, 2), None)


CASES: List[Callable[[], Case]] = [
    binary_flips, binary_many_flips, continuous, repeats_differ, single_repeat, single_vs_multi, multi_agent,
    select_agent, select_per_side, select_per_side_with_agent, single_agent_renamed, one_sided_metrics,
    extra_metrics, zero_baseline, task_sets_differ, no_common_tasks, repeat_gaps, legacy_baseline, legacy_both_multi,
    env_servers, masked, bench_pass_at_k, bench_repeats_differ, agg_override, rollouts_not_read, report_json_only,
    report_md_only, default_output_dir, large_values, zero_variance, markdown_names,
    error_sole_agent, error_unknown_agent, error_no_common_agent, error_no_shared_metric, error_missing_agg,
    error_empty_list, error_not_list, error_duplicate_agent, error_no_agent_name, error_nan_literal,
    error_two_candidates, error_candidate_agents_count,
]


def _legacy_both(case: Path) -> None:
    make_legacy(case, "baseline")
    make_legacy(case, "candidate")


# ----------------------------------------------------------------------------------------------
# fuzz


def fuzz_case(seed: int, i: int) -> Case:
    rng = random.Random(seed * 1_000_003 + i)
    pool = ["alpha", "beta", "gamma", "delta"]
    binary = rng.random() < 0.5
    metrics = rng.sample(["accuracy", "tokens", "judge", "score/max", "late"], rng.choice([0, 1, 1, 2]))
    common = rng.sample(pool, 1 if rng.random() < 0.75 else 2)
    extra = [a for a in pool if a not in common]
    base_agents = common + rng.sample(extra, rng.choice([0, 0, 1]))
    cand_agents = common + rng.sample([a for a in extra if a not in base_agents], rng.choice([0, 0, 1]))
    ntasks = {a: 1 + int(29 * rng.random() ** 4) for a in pool}  # 1..30, mostly small (fixture size)
    partial = rng.random() < 0.2

    def side(run_seed: int, agents: List[str], p_shift: float) -> Run:
        run = Run(run_seed, usage=rng.random() < 0.1)
        srng = run.rng
        for a in agents:
            k = pool.index(a)
            repeats = srng.randint(1, 6)
            n = max(1, ntasks[a] + srng.choice([0, 0, 0, -2, 3]))
            n = min(n, max(1, 24 // len(agents) // repeats))  # about 24 rollouts a side at most (fixture size)
            t0 = 40 * k + (1 if n >= 3 and srng.random() < 0.15 else 0)  # tasks shifted by one now and then
            for t in range(t0, t0 + n):
                level = random.Random(f"{seed}-{i}-{t}").random()  # task difficulty, shared by both sides
                for r in range(repeats):
                    if partial and srng.random() < 0.08:
                        run.add(a, t, r, MISSING)
                        continue
                    if binary:
                        reward = float(srng.random() < min(1.0, max(0.0, level + p_shift)))
                    else:
                        reward = round(min(1.0, max(0.0, level + p_shift + srng.uniform(-0.2, 0.2))), 3)
                    fields: Dict[str, Any] = {}
                    for m in metrics:
                        if m == "accuracy":
                            fields[m] = reward >= 0.5
                        elif m == "tokens":
                            fields[m] = srng.randint(10, 3000)
                        elif m == "late":
                            fields[m] = srng.random() if r >= 1 else MISSING
                        else:
                            fields[m] = round(srng.uniform(0, 10), 2)
                    run.add(a, t, r, reward, **fields)
        return run

    base = side(rng.randint(0, 10**9), base_agents, 0.0)
    cand = side(rng.randint(0, 10**9), cand_agents, rng.uniform(-0.2, 0.2))
    args = default_args()
    roll = rng.random()
    if roll < 0.15:
        args += ["--agent", rng.choice(common)]
    elif roll < 0.25:
        args += ["--baseline-agent", rng.choice(base_agents), "--candidate-agents", rng.choice(cand_agents)]
    fmt = rng.choice([None, None, None, "json", "md", "both"])
    if fmt:
        args += ["--report-format", fmt]
    post = None
    if rng.random() < 0.1:
        post = _legacy_both
    doc = (f"fuzz seed {seed} #{i}: {'binary' if binary else 'continuous'}, baseline agents {base_agents}, "
           f"candidate agents {cand_agents}, metrics {metrics}, partial {partial}, "
           f"legacy files {post is not None}")
    return Case(f"fuzz_{seed}_{i:03d}", doc, base, cand, args, post)


# ----------------------------------------------------------------------------------------------
# recording


def clean_env() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE",
                        "NEMO_GYM_EXTRA_ROOTS", "PYTHONWARNINGS")}
    env["TERM"] = "dumb"
    # Wide enough that rich does not wrap error messages at 80 columns (their wrap points would
    # depend on the temp path's length); argparse's usage lines come out unwrapped too.
    env["COLUMNS"] = "10000"
    return env


def record(case: Path, args: List[str]) -> int:
    expected = case / "expected"
    shutil.rmtree(expected, ignore_errors=True)
    expected.mkdir()
    (expected / "args").write_text("".join(a + "\n" for a in args), "utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = os.path.realpath(tmp)
        work = Path(tmp) / "case"
        shutil.copytree(case, work, ignore=shutil.ignore_patterns("expected", "README*"))
        out = Path(tmp) / "out"
        argv = [GYM, "eval", "compare", *[a.replace("<out>", str(out)) for a in args]]
        run = subprocess.run(argv, cwd=work, capture_output=True, text=True, env=clean_env())

        def scrub(text: str) -> str:
            return text.replace(str(work), "<dir>").replace(str(out), "<out>").replace(SITE_PACKAGES, "<site-packages>")

        (expected / "stdout").write_text(scrub(run.stdout), "utf-8")
        (expected / "stderr").write_text(scrub(run.stderr), "utf-8")
        (expected / "exit_code").write_text(f"{run.returncode}\n", "utf-8")
        report_dir = out if "--output-dir" in args else work / "candidate"
        for name in ("compare_report.json", "compare_report.md"):
            p = report_dir / name
            if p.exists():
                (expected / name).write_text(scrub(p.read_text("utf-8")), "utf-8")
    return run.returncode


def build(c: Case, out_dir: Path) -> str:
    case = out_dir / c.name
    shutil.rmtree(case, ignore_errors=True)
    case.mkdir(parents=True)
    (case / "README").write_text(" ".join(c.doc.split()) + "\n", "utf-8")
    c.baseline.write(case / "baseline")
    c.candidate.write(case / "candidate")
    if c.post:
        c.post(case)
    code = record(case, c.args)
    size = sum(f.stat().st_size for f in case.rglob("*") if f.is_file())
    return f"exit {code}, {size} bytes"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--fuzz", type=int, metavar="N", help="write N random pairs instead of the named cases")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("cases", nargs="*", help="subset of the named cases")
    args = ap.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.fuzz:
        todo = [lambda i=i: fuzz_case(args.seed, i) for i in range(args.fuzz)]
    else:
        byname = {f.__name__: f for f in CASES}
        for f in CASES:  # cases that reuse another's data carry their own name
            byname.setdefault(f().name, f)
        todo = [byname[n] for n in args.cases] if args.cases else CASES
    for make in todo:
        c = make()
        print(f"{c.name}: {build(c, args.out_dir)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
