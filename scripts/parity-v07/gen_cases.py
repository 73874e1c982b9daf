#!/usr/bin/env python3
"""Deterministic runs exercising what NeMo Gym v0.7.0's `gym eval profile` added (masked rollouts,
environment servers and fan-out, `_`-prefixed fields, floats >= 1e16, repeat-level metrics), in
the layout of `scripts/parity/gen_cases.py` (whose helpers it uses):

    tests/fixtures/generated-v07/<case>/rollouts_materialized_inputs.jsonl, rollouts.jsonl, args.txt

Expected outputs come from v0.7.0 itself: `scripts/parity-v07/record.py`. Standard library only.

    python3 scripts/parity-v07/gen_cases.py [--out tests/fixtures/generated-v07] [case ...]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "parity"))
from gen_cases import ABSENT, ROLLOUT, TASK, Case, rand_usage, usage, words  # noqa: E402


def row(t: int, r: int, prompt: str, agent: Any = ABSENT, server: Any = ABSENT, **extra: Any) -> Dict[str, Any]:
    """A materialized row; `agent`/`server` ABSENT leave `agent_ref`/`_ng_environment_server` out."""
    m: Dict[str, Any] = {"responses_create_params": {"input": [{"role": "user", "content": prompt}]}}
    m.update(extra)
    if agent is not ABSENT:
        m["agent_ref"] = {"type": "responses_api_agents", "name": agent}
    if server is not ABSENT:
        m["_ng_environment_server"] = server
    m[TASK] = t
    m[ROLLOUT] = r
    return m


def result(m: Dict[str, Any], reward: Any, fields: Optional[Dict[str, Any]] = None, use: Any = None,
           response: Any = "default") -> Dict[str, Any]:
    d: Dict[str, Any] = {"responses_create_params": m["responses_create_params"]}
    if response == "default":
        d["response"] = {"id": "x", "output": [], "usage": use}
    elif response is not ABSENT:
        d["response"] = response
    if reward is not ABSENT:
        d["reward"] = reward
    for k, v in (fields or {}).items():
        if v is not ABSENT:
            d[k] = v
    for k in ("agent_ref", "_ng_environment_server"):
        if k in m:
            d[k] = m[k]
    d[TASK] = m[TASK]
    d[ROLLOUT] = m[ROLLOUT]
    return d


def masked() -> Case:
    """Masks of every truthy and falsy kind; a fully masked task; agent "c" masked whole."""
    c = Case("masked", 2001)
    rng = c.rng
    marks = [True, False, 1, 0, "yes", "", [1], [], {"k": 1}, None, 0.5, ABSENT]
    k = 0
    for t in range(8):
        agent = ["a", "b", "c"][t % 3] if t != 7 else "c"
        for r in range(4):
            m = c.add_mat(row(t, r, f"m{t}", agent))
            if agent == "c":
                mark: Any = True
            elif t == 3:
                mark = 1  # every rollout of task 3: fully masked
            else:
                mark = marks[k % len(marks)]
                k += 1
            fields = {"mask_sample": mark, "passed": rng.random() < 0.5, "judge": round(rng.random() * 5, 2)}
            c.add_rollout(result(m, rng.choice([0.0, 0.5, 1.0]), fields, rand_usage(rng)))
    return c


def all_masked() -> Case:
    """Every rollout masked: no task rows, coverage-only agent entries."""
    c = Case("all_masked", 2002)
    for t in range(3):
        for r in range(2):
            m = c.add_mat(row(t, r, f"x{t}", "solo" if t < 2 else "duo"))
            c.add_rollout(result(m, 1.0, {"mask_sample": True}, usage(10, 5)))
    return c


def env_servers() -> Case:
    """Environment servers: two fronting agent "shared" (labelled by server), one per agent elsewhere,
    taskset rows without `agent_ref`, a server named like another run's agent."""
    c = Case("env_servers", 2003)
    rng = c.rng
    plan = [
        ("env_math_1", "shared"), ("env_math_2", "shared"), ("env_code", "coder"),
        ("episodes", ABSENT), ("coder2", "env_code"),
    ]
    for t in range(10):
        server, agent = plan[t % len(plan)]
        for r in range(3):
            m = c.add_mat(row(t, r, f"{server} {words(rng, 2)}", agent, server))
            c.add_rollout(result(m, rng.choice([0.0, 0.25, 1.0]), {"turns": rng.randint(1, 6)}, rand_usage(rng)))
    return c


def fan_out_servers() -> Case:
    """Fan-out: every task run through three environment servers (one of them without `agent_ref`),
    rollout indices continuing across copies, rows in interleaved order."""
    c = Case("fan_out_servers", 2004)
    rng = c.rng
    copies = [("env_b", "beta"), ("env_a", "alpha"), ("env_z", ABSENT)]
    for t in range(6):
        for rep in range(3):
            for i, (server, agent) in enumerate(copies):
                r = i * 3 + rep
                m = c.add_mat(row(t, r, f"fan {t}", agent, server))
                c.add_rollout(result(m, rng.choice([0.0, 1.0]), {"score": rng.randint(0, 9)}, rand_usage(rng)))
    return c


def fan_out_agents() -> Case:
    """Fan-out by `agent_ref` alone (no server stamp): tasks 0-3 run by two agents, tasks 4-5 by one;
    a masked rollout and a missing one (partial)."""
    c = Case("fan_out_agents", 2005, partial=True)
    rng = c.rng
    for t in range(6):
        agents = ["zed", "Ann"] if t < 4 else ["zed"]
        r = 0
        for agent in agents:
            for _ in range(2):
                m = c.add_mat(row(t, r, f"agents {t}", agent))
                if (t, r) != (2, 1):
                    mark = True if (t, r) == (1, 0) else ABSENT
                    c.add_rollout(result(m, round(rng.random(), 3), {"mask_sample": mark, "k": rng.randint(1, 4)},
                                         rand_usage(rng)))
                r += 1
    return c


def underscore_fields() -> Case:
    """`_`-prefixed numbers at top level and in usage, null and missing `response`, rows without
    `agent_ref` in a run that has agents."""
    c = Case("underscore_fields", 2006)
    rng = c.rng
    for t in range(5):
        for r in range(2):
            m = c.add_mat(row(t, r, f"u{t}", "agent" if t != 4 else ABSENT))
            u = rand_usage(rng)
            u["_cached"] = 3
            fields = {"_ng_attempt_index": r, "_private": 1.5, "visible": rng.randint(0, 9), "__x": 2}
            response: Any = "default"
            if (t, r) == (1, 1):
                response = None
            if (t, r) == (2, 0):
                response = ABSENT
            c.add_rollout(result(m, rng.choice([0, 1]), fields, u, response=response))
    return c


def big_floats() -> Case:
    """Floats written with exponents: >= 1e16 (orjson 3.11.7+ writes `1e+16`), tiny ones, in fields,
    statistics and the sample."""
    c = Case("big_floats", 2007)
    for t in range(3):
        for r in range(3):
            m = c.add_mat(row(t, r, f"b{t}", "big", metadata={"scale": 1e16 * (t + 1), "eps": 1e-7}))
            fields = {"cost": [1e16, 2.5e17, 3e20][r] * (t + 1), "tiny": [1e-6, 2.5e-8, 3e-5][r], "huge": 1.5e300 / (r + 1)}
            c.add_rollout(result(m, 1e-7 * (r + 1), fields, usage(10 * r + 1, 2)))
    return c


def repeats_one_to_eight() -> Case:
    """Eight agents with 1 to 8 repeats; some repeats lack tasks (partial): missing_count and the warning."""
    c = Case("repeats_one_to_eight", 2008, partial=True)
    rng = c.rng
    for a in range(8):
        agent = f"agent_{a + 1}"
        for t in range(a * 5, a * 5 + 5):
            for r in range(a + 1):
                m = c.add_mat(row(t, r, f"r{t}", agent))
                if a >= 5 and (t + r) % 7 == 0:
                    continue  # never collected
                fields = {"acc": rng.random() < 0.6, "len": rng.randint(5, 500)}
                if r == a and a % 2:
                    fields["late_metric"] = rng.random()  # appears only in the last repeat
                c.add_rollout(result(m, round(rng.random(), 4), fields, rand_usage(rng)))
    return c


def metric_names() -> Case:
    """Column names that sort differently from their first appearance, and names that are not primary
    (`x/max`, `acc_ci_lower`, `num_repeats`, unicode)."""
    c = Case("metric_names", 2009)
    rng = c.rng
    for t in range(4):
        for r in range(3):
            m = c.add_mat(row(t, r, f"n{t}", "names"))
            fields = {"zeta": rng.random(), "Alpha": rng.randint(0, 3), "x/max": rng.random(), "acc_ci_lower": 0.1,
                      "num_repeats": 3, "émoji😀": rng.random(), "b": rng.random() if r else ABSENT}
            c.add_rollout(result(m, rng.choice([0.0, 1.0]), fields, rand_usage(rng)))
    return c


def wide_repeats() -> Case:
    """One agent, 2 repeats of 1,001 tasks in rows cut to the keys: t quantiles from the table's
    expansion region (df 1,000)."""
    c = Case("wide_repeats", 2010)
    rng = c.rng
    for t in range(1001):
        for r in range(2):
            m = c.add_mat({"agent_ref": {"name": "wide"}, TASK: t, ROLLOUT: r})
            c.add_rollout({"reward": rng.choice([0.0, 1.0]), "s": rng.randint(0, 1000) / 7, TASK: t, ROLLOUT: r})
    return c


# Issue 58: shapes an outside campaign found where gymscope drifted from v0.7.0.


def signed_zeros() -> Case:
    """Columns of -0.0 and 0 (and missing values): pandas' max/min of them is numpy's reduction,
    whose lanes pick the sign; tasks of 3 rollouts, an agent of 75 (past numpy's 64-value step).
    Within a repeat a zero has one sign: the quartiles of a tie of both signs follow numpy's
    partition, which gymscope does not copy (docs/parity.md)."""
    c = Case("signed_zeros", 2011)
    rng = c.rng
    for t in range(25):
        for r in range(3):
            m = c.add_mat(row(t, r, f"z{t}", "zero"))
            fields = {"val": [0, 0, -0.0][r], "only_neg": -0.0,
                      "gappy": [-0.0, -0.0, 0][r] if rng.random() < 0.8 else ABSENT,
                      "mixed": rng.choice([[0, -0.0, -0.0][r], 1, 0.5])}
            c.add_rollout(result(m, [-0.0, 0, 0][r], fields, usage(5, 0)))
    return c


def index_types() -> Case:
    """Integral float and bool indices, as read: `_ng_task_index` 1.0 (the whole column becomes
    floats in pandas) and `_ng_rollout_index` true/false."""
    c = Case("index_types", 2012)
    rng = c.rng
    for t in range(3):
        for r in range(2):
            task: Any = float(t) if t == 1 else t
            rollout: Any = bool(r) if t == 2 else r
            m = c.add_mat(row(task, rollout, f"i{t}", "idx"))
            c.add_rollout(result(m, rng.choice([0.0, 1.0]), {"k": rng.randint(0, 5)}, usage(3, 4)))
    return c


def index_types_mixed() -> Case:
    """Bools among numeric task indices (pandas' object column): task 1's first row says `True`,
    its second `1.0`; a result keyed `2.0` for a materialized `2`; the keys' index is then floats."""
    c = Case("index_types_mixed", 2015)
    rng = c.rng
    for t in range(4):
        for r in range(2):
            task: Any = {(1, 0): True, (1, 1): 1.0}.get((t, r), t)
            m = c.add_mat(row(task, r, f"m{t}", "mix"))
            res = result(m, rng.choice([0.0, 1.0]), None, usage(2, 3))
            if t == 2:
                res["_ng_task_index"] = 2.0
            c.add_rollout(res)
    return c


def index_types_merged() -> Case:
    """A bool task index that is not its task's first (`1.0` then `True`): the object column's
    keys are all numbers, and pandas writes every task row's index as a float."""
    c = Case("index_types_merged", 2016)
    rng = c.rng
    for t in range(3):
        for r in range(2):
            task: Any = {(1, 0): 1.0, (1, 1): True}.get((t, r), t)
            m = c.add_mat(row(task, r, f"g{t}", "merged"))
            c.add_rollout(result(m, rng.choice([0.0, 1.0]), None, usage(2, 3)))
    return c


def derived_names() -> Case:
    """Numeric fields named like derived columns (`mean/already`, `max/x`, `std/`), first in the
    row: columns `mean/mean/already`, …, not a profile file."""
    c = Case("derived_names", 2013)
    rng = c.rng
    for t in range(4):
        for r in range(2):
            m = c.add_mat(row(t, r, f"d{t}", "derived"))
            d = {"mean/already": round(rng.random(), 3), "max/x": rng.randint(0, 9), "std/": 1.5,
                 "rollout_infos_count": 2}
            res = result(m, rng.choice([0.0, 1.0]), None, usage(3, 4))
            c.add_rollout({**d, **res})
    return c


def numeric_agent_name() -> Case:
    """A numeric `agent_name` on every rollout (top level, or in `response.usage`, which wins):
    the agent is the number, and `agent_name` a column of the repeat-level file."""
    c = Case("numeric_agent_name", 2014)
    rng = c.rng
    for t in range(6):
        for r in range(3):
            m = c.add_mat(row(t, r, f"a{t}", "named"))
            u = usage(3, rng.randint(1, 9))
            top = {"agent_name": 7 if t % 2 else 9}
            if t >= 4:
                u["agent_name"] = 2.5
                top = {"agent_name": "text"}
            c.add_rollout(result(m, rng.choice([0.0, 1.0]), top, u))
    return c


CASES: Dict[str, Callable[[], Case]] = {
    f.__name__: f
    for f in [masked, all_masked, env_servers, fan_out_servers, fan_out_agents, underscore_fields, big_floats,
              repeats_one_to_eight, metric_names, wide_repeats, signed_zeros, index_types, index_types_mixed, index_types_merged,
              derived_names,
              numeric_agent_name]
}


def main() -> int:
    here = Path(__file__).resolve()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=here.parents[2] / "tests" / "fixtures" / "generated-v07")
    ap.add_argument("cases", nargs="*", help=f"subset of: {', '.join(CASES)}")
    args = ap.parse_args()
    for name in args.cases or CASES:
        size = CASES[name]().write(args.out)
        print(f"{name}: {size} bytes of inputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
