#!/usr/bin/env python3
"""Deterministic generator of edge-case inputs for `gymscope profile` parity tests.

Writes, for every case, into <out>/<case>/:
  rollouts_materialized_inputs.jsonl  one row per (task, rollout), repeats of a task contiguous
  rollouts.jsonl                      the rollout results, in shuffled ("completion") order
  args.txt                            "" or "--allow-partial-rollouts" (no trailing newline)

Expected outputs are NOT written here: run upstream_expected.py afterwards (see README.md).
Only the standard library is used; every case has its own fixed seed, so reruns are byte-identical.

    python3 scripts/parity/gen_cases.py [--out tests/fixtures/generated] [case ...]
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

TASK = "_ng_task_index"
ROLLOUT = "_ng_rollout_index"
AGENT_TYPE = "responses_api_agents"

ABSENT = object()  # sentinel: leave the key out entirely

WORDS = "alpha beta gamma delta sum of the two primes find x solve card hit stand grid cell".split()


def dumps(obj: Any) -> str:
    # Compact, key order as built, non-ASCII raw. Floats via repr (valid JSON: 1e-07, -0.0, 1e+16).
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def mat_row(t: int, r: int, agent: Any, prompt: str, extra: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    row: Dict[str, Any] = {"responses_create_params": {"input": [{"role": "user", "content": prompt}]}}
    if extra:
        row["responses_create_params"].update(extra)
    row["agent_ref"] = {"type": AGENT_TYPE, "name": agent}
    row[TASK] = t
    row[ROLLOUT] = r
    return row


def usage(inp: int, out: int, **extra: Any) -> Dict[str, Any]:
    u = {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": inp + out,
    }
    u.update(extra)
    return u


def rollout(
    m: Dict[str, Any],
    reward: Any,
    fields: Optional[Dict[str, Any]] = None,
    use: Any = None,
    text: str = "ok",
) -> Dict[str, Any]:
    """A rollout result for materialized row `m`. `use`: usage dict, None (-> null) or ABSENT."""
    response: Dict[str, Any] = {
        "id": "x",
        "output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}],
    }
    if use is not ABSENT:
        response["usage"] = use
    d: Dict[str, Any] = {"responses_create_params": m["responses_create_params"], "response": response}
    if reward is not ABSENT:
        d["reward"] = reward
    for k, v in (fields or {}).items():
        if v is not ABSENT:
            d[k] = v
    d[TASK] = m[TASK]
    d[ROLLOUT] = m[ROLLOUT]
    d["agent_ref"] = m["agent_ref"]
    return d


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def rand_usage(rng: random.Random, lo: int = 20, hi: int = 400) -> Dict[str, Any]:
    return usage(rng.randint(lo, hi), rng.randint(1, hi))


class Case:
    def __init__(self, name: str, seed: int, partial: bool = False):
        self.name = name
        self.rng = random.Random(seed)
        self.partial = partial
        self.mat_lines: List[str] = []
        self.rollout_lines: List[str] = []

    def add_mat(self, row: Dict[str, Any], raw: Optional[str] = None) -> Dict[str, Any]:
        self.mat_lines.append(raw if raw is not None else dumps(row))
        return row

    def add_rollout(self, row: Dict[str, Any], raw_subst: Optional[Dict[str, str]] = None) -> None:
        line = dumps(row)
        # raw_subst replaces a JSON string placeholder ("@@1E2@@") with a raw number spelling (1E2)
        for placeholder, raw in (raw_subst or {}).items():
            line = line.replace(dumps(placeholder), raw)
        self.rollout_lines.append(line)

    def write(self, out: Path) -> int:
        d = out / self.name
        d.mkdir(parents=True, exist_ok=True)
        lines = list(self.rollout_lines)
        self.rng.shuffle(lines)  # completion order
        (d / "rollouts_materialized_inputs.jsonl").write_text("".join(l + "\n" for l in self.mat_lines), "utf-8")
        (d / "rollouts.jsonl").write_text("".join(l + "\n" for l in lines), "utf-8")
        (d / "args.txt").write_text("--allow-partial-rollouts" if self.partial else "", "utf-8")
        return sum(f.stat().st_size for f in d.iterdir() if f.is_file())


# ----------------------------------------------------------------------------------------------
# cases


def many_repeats() -> Case:
    """40 tasks x 16 repeats, two agents (320 rollouts each: > numpy's 128-element pairwise block)."""
    c = Case("many_repeats", 1001)
    rng = c.rng
    for t in range(40):
        agent = "math" if t % 2 == 0 else "code"
        prompt = f"q{t}"
        for r in range(16):
            m = c.add_mat(mat_row(t, r, agent, prompt))
            fields = {
                "is_correct": rng.random() < 0.6,
                "format_ok": rng.random() < 0.9,
                "num_turns": rng.randint(1, 9),
                # present in ~85% of rollouts: NaN holes inside long columns
                "judge_score": rng.random() * 10 if rng.random() < 0.85 else ABSENT,
            }
            c.add_rollout(rollout(m, rng.random(), fields, rand_usage(rng)))
    return c


def partial() -> Case:
    """Partial collection; negative and non-contiguous task indices; sample from lowest *matched* rollout."""
    c = Case("partial", 1002, partial=True)
    rng = c.rng
    tasks = [-3, 0, 1, 2, 5, 9, 12]
    missing = {
        -3: {0, 2},  # rollouts 1, 3 left
        0: {0},  # sample comes from rollout 1 (rows differ by a per-rollout seed)
        1: {0, 1, 2, 3},  # no rollouts at all -> dropped
        2: {3},
        5: set(),  # complete
        9: {0, 1, 2, 3},  # none
        12: {0, 1, 3},  # exactly one matched rollout: std fill rule
    }
    for t in tasks:
        agent = "policy" if t % 2 else "baseline"
        for r in range(4):
            m = c.add_mat(mat_row(t, r, agent, f"task {t}: {words(rng, 3)}", {"metadata": {"seed": 100 * t + r}}))
            if r in missing[t]:
                continue
            fields = {
                "passed": rng.random() < 0.5,
                "latency_s": round(rng.uniform(0.2, 9.0), 3),
                "retries": rng.randint(0, 3) if (t, r) != (12, 2) else ABSENT,
            }
            c.add_rollout(rollout(m, round(rng.random(), 4), fields, rand_usage(rng)))
    return c


def multi_agent() -> Case:
    """Agents "beta", "Alpha", "zeta" (code point order: Alpha < beta < zeta); task 9 mixes agents."""
    c = Case("multi_agent", 1003)
    rng = c.rng
    agents = ["beta", "Alpha", "zeta"]
    for t in range(9):
        agent = agents[t % 3]
        for r in range(3):
            m = c.add_mat(mat_row(t, r, agent, f"{agent} {words(rng, 2)}"))
            c.add_rollout(rollout(m, rng.choice([0.0, 0.25, 0.5, 1.0]), {"steps": rng.randint(1, 20)}, rand_usage(rng)))
    mixed = ["zeta", "beta", "Alpha", "zeta"]
    for r, agent in enumerate(mixed):
        m = c.add_mat(mat_row(9, r, agent, "shared prompt"))
        c.add_rollout(rollout(m, rng.choice([0.0, 1.0]), {"steps": rng.randint(1, 20)}, rand_usage(rng)))
    return c


def missing_fields() -> Case:
    c = Case("missing_fields", 1004)
    rng = c.rng
    for t in range(6):
        agent = "solver" if t < 3 else "critic"
        for r in range(4):
            m = c.add_mat(mat_row(t, r, agent, f"p{t} {words(rng, 2)}"))
            kind = (t + r) % 3
            use: Any = rand_usage(rng) if kind == 0 else (None if kind == 1 else ABSENT)
            fields = {
                # only in some rollouts, and never in task 4
                "bonus": round(rng.uniform(0, 2), 2) if (t != 4 and rng.random() < 0.5) else ABSENT,
                # int in some rollouts, float in others
                "mixed_num": rng.randint(0, 5) if r % 2 == 0 else rng.randint(0, 5) + 0.5,
                # verifier field only one agent produces
                "critic_score": round(rng.uniform(-1, 1), 3) if agent == "critic" else ABSENT,
                "label": "some string",
                "details": {"nested": 1},
                "nothing": None,
            }
            c.add_rollout(rollout(m, rng.choice([0.0, 0.5, 1.0]), fields, use))
    return c


def single_rollout() -> Case:
    c = Case("single_rollout", 1005)
    rng = c.rng
    for t in range(5):
        agent = "solo"
        m = c.add_mat(mat_row(t, 0, agent, f"one shot {t}"))
        fields = {
            "score": round(rng.uniform(0, 100), 2),
            # missing in task 3's only rollout: all-NaN column in that task
            "aux": rng.randint(1, 9) if t != 3 else ABSENT,
        }
        c.add_rollout(rollout(m, rng.choice([0.0, 1.0]), fields, rand_usage(rng)))
    # 3 rollouts, "rare" only in rollout 1: no std/rare key (other columns have a real std)
    for r in range(3):
        m = c.add_mat(mat_row(5, r, "solo", "three shots"))
        fields = {"score": round(rng.uniform(0, 100), 2), "aux": rng.randint(1, 9), "rare": 42.5 if r == 1 else ABSENT}
        c.add_rollout(rollout(m, rng.choice([0.0, 1.0]), fields, rand_usage(rng)))
    # an agent with exactly one rollout: agent-level std fill rule
    m = c.add_mat(mat_row(6, 0, "lonely", "only one"))
    c.add_rollout(rollout(m, 0.75, {"score": 12.5, "aux": 3}, rand_usage(rng)))
    return c


def all_int() -> Case:
    """Every numeric field an int or bool in every rollout: max/min stay ints, exact above 2^53."""
    c = Case("all_int", 1006)
    rng = c.rng
    huge = 9007199254740993  # 2^53 + 1, not representable as a double
    for t in range(5):
        agent = "ints_a" if t < 3 else "ints_b"
        for r in range(3):
            m = c.add_mat(mat_row(t, r, agent, f"int task {t}"))
            if t == 0 and r == 1:
                big = huge
            else:
                big = huge - 2 * rng.randint(10**14, 10**15)  # odd, > 2^52, range wide enough for histogram
            fields = {
                "passed": rng.random() < 0.5,
                "steps": rng.randint(-5, 50),
                "big_id": big,
            }
            c.add_rollout(rollout(m, rng.randint(0, 1), fields, rand_usage(rng)))
    return c


RAW_SAMPLE = (
    '{"responses_create_params":{"input":[{"role":"user","content":'
    '"caf\\u00e9 \\ud83d\\ude00 line\\u2028sep a\\/b ctl\\u0001x tab\\tq\\"uote back\\\\slash del\\u007f"}],'
    '"metadata":{"dup":1,"n":1E2,"z":-0,"e":1.5E-7,"f":-0.0,"dup":{"second":true},"big":18446744073709551615}},'
    '"agent_ref":{"type":"responses_api_agents","name":"edge"},"_ng_task_index":0,"_ng_rollout_index":0}'
)


def number_edges() -> Case:
    c = Case("number_edges", 1007)
    rng = c.rng
    # task 0: constant 0.1 reward (4x: mean exactly 0.1), constant -0.0, tiny and huge magnitudes (std of
    # "huge" overflows to inf -> null); rollout 0's row is the raw sample. No column mixes -0.0 and 0.0:
    # numpy's max/min then returns either zero depending on SIMD lane order (seen: 0.0 per task, -0.0 per agent).
    raw_row = json.loads(RAW_SAMPLE)
    for r in range(4):
        if r == 0:
            m = c.add_mat(raw_row, raw=RAW_SAMPLE)
        else:
            m = c.add_mat(mat_row(0, r, "edge", "plain"))
        fields = {
            "neg_zero": -0.0,
            "tiny": [1e-7, 2.5e-8, 1e-7, 1.2345e-5][r],
            "big": [1e16, 2e16, 1.2345e16, 3e16][r],
            "huge": [1.5e300, 1e300, 1.5e300, 1e299][r],
            "fmt": "@@FMT@@",
        }
        if r == 0:
            fields["output_tokens"] = 999  # usage key also present at top level
        raw_fmt = ["1E2", "-0", "2.50e1", "0.00001"][r]
        c.add_rollout(rollout(m, 0.1, fields, rand_usage(rng)), {"@@FMT@@": raw_fmt})
    # task 1: odd reward values (verbatim in rollout_infos, bool->1 / dropped in metrics)
    for r, reward in enumerate([None, "1", True, 0.5]):
        m = c.add_mat(mat_row(1, r, "edge", "odd rewards"))
        fields = {"tiny": [1e-7, 3e-7, 2e-7, 5e-7][r]}
        c.add_rollout(rollout(m, reward, fields, rand_usage(rng)))
    # task 2: a rollout without a reward key; top-level usage-named key on a later rollout
    for r in range(3):
        m = c.add_mat(mat_row(2, r, "edge", "no reward key"))
        fields = {"input_tokens": 5 if r == 2 else ABSENT, "tiny": [4e-6, 5e-6, 6e-6][r]}
        c.add_rollout(rollout(m, ABSENT if r == 1 else 1e-7 * (r + 1), fields, rand_usage(rng)))
    # task 3: constant 0.1 over 3 rollouts: mean 0.10000000000000002, std 1.6996749443881478e-17 (not 0)
    for r in range(3):
        m = c.add_mat(mat_row(3, r, "edge", "constant tenth"))
        c.add_rollout(rollout(m, 0.1, {"tiny": [7e-7, 8e-7, 9e-7][r]}, rand_usage(rng)))
    return c


def agent_name_override() -> Case:
    c = Case("agent_name_override", 1008)
    rng = c.rng
    for t in range(3):
        agent = "alpha" if t < 2 else "beta"
        for r in range(3):
            m = c.add_mat(mat_row(t, r, agent, f"ov {t}"))
            fields: Dict[str, Any] = {"quality": round(rng.uniform(0, 1), 3)}
            if (t, r) == (1, 1):
                fields["agent_name"] = 7  # numeric: replaces agent_ref.name for agent grouping
            if (t, r) == (2, 0):
                fields["agent_name"] = 2.5
            if (t, r) == (0, 2):
                fields["agent_name"] = "not numeric"  # string: ignored
            c.add_rollout(rollout(m, rng.choice([0.0, 1.0]), fields, rand_usage(rng)))
    return c


def usage_overrides_top() -> Case:
    c = Case("usage_overrides_top", 1009)
    rng = c.rng
    for t in range(2):
        for r in range(3):
            m = c.add_mat(mat_row(t, r, "ov", f"usage {t}"))
            u = rand_usage(rng, 10, 50)
            u["x"] = rng.randint(1, 100)  # numeric in usage, string at top level
            u["y"] = "str"  # string in usage, numeric at top level
            u["z"] = rng.randint(1000, 2000)  # numeric in both: usage wins in df, top level in rollout_infos
            u["cost"] = round(rng.uniform(0.001, 0.01), 5)
            fields = {"x": "s", "y": rng.randint(1, 9), "z": rng.randint(1, 9)}
            c.add_rollout(rollout(m, round(rng.random(), 3), fields, u))
    return c


CASES: Dict[str, Callable[[], Case]] = {
    f.__name__: f
    for f in [
        many_repeats,
        partial,
        multi_agent,
        missing_fields,
        single_rollout,
        all_int,
        number_edges,
        agent_name_override,
        usage_overrides_top,
    ]
}


def main() -> int:
    here = Path(__file__).resolve()
    default_out = here.parents[2] / "tests" / "fixtures" / "generated"
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=default_out)
    ap.add_argument("cases", nargs="*", help=f"subset of: {', '.join(CASES)}")
    args = ap.parse_args()
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s): {unknown}")
    for name in args.cases or CASES:
        size = CASES[name]().write(args.out)
        print(f"{name}: {size} bytes of inputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
