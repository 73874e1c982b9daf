#!/usr/bin/env python3
"""Random runs profiled by NeMo Gym v0.7.0 and by gymscope, compared byte for byte (stdout, the
three files, success or failure). A check to run by hand beside the venv, not a test:

    python3 scripts/parity-v07/fuzz.py [N] [SEED]     (GYM and GYMSCOPE name the two binaries)
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

GYM = os.environ.get("GYM", str(Path.home() / ".cache/gym07/bin/gym"))
GYMSCOPE = os.environ.get("GYMSCOPE", "target/release/gymscope")
SUFFIXES = ("_reward_profiling.jsonl", "_agent_metrics.json", "_repeat_level_metrics.json")


# Issue 58's shapes, each drawn for some runs: zeros of both signs, indices of other types (bool,
# integral float, in either file), numeric fields named like derived columns, and numeric fields
# named like the keys gymscope writes itself.
DERIVED_NAMES = ("mean/already", "max/reward", "std/", "median/x", "rollout_infos_n")
OWN_NAMES = ("agent_name", "rollout_id", "num_rollouts", "sample", "expected_num_rollouts")


def odd_index(rng: random.Random, v: int, shape: set):
    if "index_types" not in shape:
        return v
    return rng.choice([v, v, float(v)] + ([bool(v)] if v in (0, 1) else []))


def make_run(rng: random.Random):
    shape = {s for s in ("signed_zeros", "index_types", "derived_names", "own_names") if rng.random() < 0.3}
    numeric_agents = "own_names" in shape and rng.random() < 0.5
    agents = [f"ag{i}" for i in range(rng.randint(1, 4))]
    servers = [f"env{i}" for i in range(rng.randint(0, 3))]
    rows, results = [], []
    partial = rng.random() < 0.3
    fan = rng.random() < 0.3
    for t in rng.sample(range(-5, 200), rng.randint(1, rng.choice([12, 40, 150]))):
        copies = rng.sample(agents, rng.randint(1, len(agents))) if fan else [rng.choice(agents)]
        r = 0
        for agent in copies:
            server = rng.choice(servers + [None]) if servers else None
            no_ref = rng.random() < 0.1 and server is not None
            for _ in range(rng.randint(1, rng.choice([3, 8]))):
                m = {"responses_create_params": {"input": [{"role": "user", "content": f"t{t}"}]}}
                if not no_ref:
                    m["agent_ref"] = {"type": "responses_api_agents", "name": agent}
                if server is not None:
                    m["_ng_environment_server"] = server
                m["_ng_task_index"], m["_ng_rollout_index"] = odd_index(rng, t, shape), odd_index(rng, r, shape)
                rows.append(m)
                r += 1
                if partial and rng.random() < 0.2:
                    continue
                d = {"reward": rng.choice([0.0, 1.0, 0.5, 1, 0, True, rng.random()])}
                if rng.random() < 0.8:
                    d["response"] = {"usage": {"input_tokens": rng.randint(1, 999), "output_tokens": rng.randint(0, 99)}}
                for name in ("acc", "judge", "x/max", "_ng_attempt_index", "late", "Zed"):
                    if rng.random() < 0.5:
                        d[name] = rng.choice([rng.random(), rng.randint(-3, 3), rng.random() * 1000, False])
                if rng.random() < 0.15:
                    d["mask_sample"] = rng.choice([True, 1, "y", False, 0, None])
                if "signed_zeros" in shape:
                    d["reward"] = rng.choice([-0.0, 0, 0.0, d["reward"]])
                    d["z"] = rng.choice([-0.0, 0, 0.0, -0.0, 1])
                if "derived_names" in shape:
                    for name in rng.sample(DERIVED_NAMES, rng.randint(1, 3)):
                        d[name] = rng.choice([rng.random(), rng.randint(0, 5)])
                if "own_names" in shape:
                    for name in rng.sample(OWN_NAMES[1:], rng.randint(0, 2)):
                        d[name] = rng.randint(0, 9)
                    if numeric_agents:
                        where = d.setdefault("response", {}).setdefault("usage", {}) if rng.random() < 0.3 else d
                        where["agent_name"] = agents.index(agent) + rng.choice([0, 0.5])
                d["_ng_task_index"] = odd_index(rng, t, shape)
                d["_ng_rollout_index"] = odd_index(rng, r - 1, shape)
                results.append(d)
    rng.shuffle(results)
    return rows, results, partial


def documented(out):
    """An outcome with the documented difference taken out: a repeat-level quartile's sign of
    zero where `-0.0` and `0.0` tie (docs/parity.md, "Not copied")."""
    ok, stdout, files = out
    if files is None:
        return out
    quartile = re.compile(rb'("p(?:25|75)/(?:[^"\\]|\\.)*"):-0\.0(?=[,}])')
    return ok, stdout, [quartile.sub(rb"\1:0.0", f) if f is not None else None for f in files]


def run(argv, cwd):
    p = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    bad = known = 0
    for i in range(n):
        rng = random.Random(seed * 100_000 + i)
        rows, results, partial = make_run(rng)
        outs = []
        for tool in (GYM, os.path.abspath(GYMSCOPE)):
            with tempfile.TemporaryDirectory() as tmp:
                Path(tmp, "r_materialized_inputs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
                Path(tmp, "r.jsonl").write_text("".join(json.dumps(x) + "\n" for x in results))
                argv = [tool, "eval", "profile"] if tool == GYM else [tool, "profile"]
                argv += ["--inputs", "r_materialized_inputs.jsonl", "--rollouts", "r.jsonl"]
                if partial:
                    argv.append("++allow_partial_rollouts=True")
                code, out = run(argv, tmp)
                files = [Path(tmp, "r" + s).read_bytes() if Path(tmp, "r" + s).exists() else None for s in SUFFIXES]
                outs.append((code == 0, out if code == 0 else "", files if code == 0 else None))
        if i and i % 10 == 0:
            print(f"after {i}: {i - bad - known} equal, {known} only as documented, {bad} differ", flush=True)
        if outs[0] != outs[1] and documented(outs[0]) == documented(outs[1]):
            known += 1
            print(f"case {i}: differs only in a quartile's zero sign (docs/parity.md)")
        elif outs[0] != outs[1]:
            bad += 1
            print(f"case {i}: differs (ok: {outs[0][0]} / {outs[1][0]})")
            for name, a, b in zip(SUFFIXES, outs[0][2] or [], outs[1][2] or []):
                if a != b:
                    a, b = a or b"", b or b""
                    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                    lo = max(0, at - 150)
                    print("  ", name, f"from byte {at}", "\n   v0.7:", a[lo:at + 150], "\n   ours:", b[lo:at + 150])
            if outs[0][1] != outs[1][1]:
                print("   stdout v0.7:", outs[0][1], "\n   ours:", outs[1][1])
    print(f"{n - bad - known} of {n} equal, {known} differ only as documented, {bad} differ", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
