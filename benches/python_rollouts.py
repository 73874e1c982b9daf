"""`gymscope.rollouts()` against `pandas.read_json(lines=True)` on a generated run of about
`--gb` GB (docs/python.md "Memory and speed"): each read in a fresh process, its wall time and
peak RSS printed. Needs the wheel installed (scripts/wheel.sh), and pandas for the comparison.

    python benches/python_rollouts.py --gb 1 [--dir bench-data] [--skip-pandas] [--threads]

`--threads` also times, in one fresh process, one `rollouts()` call and then two at once on two
threads (issue 57: they ran one at a time behind a process-wide lock): the two-call wall time
against the one-call time. Each call reads on every core, so on a machine of few cores the two
share them; the figure is for docs/python.md, not a test.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

WORDS = ("the answer is step check value compute result tool call return sum "
         "therefore because we first then finally note that so thus").split()


def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


class Texts:
    """Texts of a few lengths, made once and picked from (a GB of fresh random words would
    take minutes to make)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pools = {n: [text(rng, n) for _ in range(64)] for n in (8, 150, 200, 900)}

    def __call__(self, _rng: random.Random, n: int) -> str:
        return self.rng.choice(self.pools[n])


def generate(path: Path, gb: float, seed: int = 7) -> int:
    """A three-agent, four-repeat run in Gym's rollout shape, rows of about 10 KB."""
    rng = random.Random(seed)
    text = Texts(rng)  # noqa: F811 - the pooled texts
    target = int(gb * (1 << 30))
    agents = ["math_agent", "tool_agent", "code_agent"]
    written = rows = 0
    with path.open("w") as out:
        task = 0
        while written < target:
            for rollout in range(4):
                agent = agents[task % 3]
                reward = rng.choice([0.0, 1.0, 1.0, 0.5])
                calls = rng.randint(0, 3)
                output = []
                for c in range(calls):
                    output.append({"type": "function_call", "name": "search", "call_id": f"c{c}",
                                   "arguments": json.dumps({"q": text(rng, 8)})})
                    output.append({"type": "function_call_output", "call_id": f"c{c}", "output": text(rng, 200)})
                output.append({"type": "message", "role": "assistant",
                               "content": [{"type": "output_text", "text": text(rng, 900)}]})
                tokens = rng.randint(200, 4000)
                row = {
                    "responses_create_params": {"input": [{"role": "user", "content": text(rng, 150)}]},
                    "response": {"output": output,
                                 "usage": {"input_tokens": 300, "output_tokens": tokens, "total_tokens": 300 + tokens}},
                    "reward": reward,
                    "num_passed": rng.randint(0, 5),
                    "_ng_task_index": task,
                    "_ng_rollout_index": rollout,
                    "agent_ref": {"name": agent},
                }
                line = json.dumps(row) + "\n"
                out.write(line)
                written += len(line)
                rows += 1
            task += 1
    return rows


READERS = {
    "gymscope.rollouts": "import gymscope; t = gymscope.rollouts(sys.argv[1]); n = t.num_rows",
    "pandas.read_json": "import pandas as pd; n = len(pd.read_json(sys.argv[1], lines=True))",
}

MEASURE = """
import resource, sys, time
start = time.perf_counter()
{code}
print(n, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


THREADS = """
import sys, threading, time
import gymscope
path = sys.argv[1]
gymscope.rollouts(path)  # warm: the file in the page cache
start = time.perf_counter()
gymscope.rollouts(path)
one = time.perf_counter() - start
calls = [threading.Thread(target=gymscope.rollouts, args=(path,)) for _ in range(2)]
start = time.perf_counter()
for t in calls:
    t.start()
for t in calls:
    t.join()
two = time.perf_counter() - start
print(f"one call {one:.2f} s, two calls on two threads {two:.2f} s ({two / one:.2f}x)")
"""


def measure_threads(path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", THREADS, str(path)], capture_output=True, text=True)
    print(f"{'threads':>18}: {done.stdout.strip() or done.stderr.strip().splitlines()[-1:]}")


def measure(name: str, path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", MEASURE.format(code=READERS[name]), str(path)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{name:>18}: failed: {done.stderr.strip().splitlines()[-1:]}")
        return
    n, seconds, rss_kb = done.stdout.split()
    print(f"{name:>18}: {int(n):>9,} rows in {float(seconds):6.2f} s, peak RSS {int(rss_kb) / 1024:8.1f} MB")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--dir", type=Path, default=Path("bench-data"))
    ap.add_argument("--skip-pandas", action="store_true")
    ap.add_argument("--threads", action="store_true")
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    path = args.dir / f"python_rollouts_{args.gb:g}gb.jsonl"
    if not path.exists():
        start = time.perf_counter()
        rows = generate(path, args.gb)
        print(f"generated {path} ({path.stat().st_size / (1 << 30):.2f} GB, {rows:,} rows) in {time.perf_counter() - start:.0f} s")
    print(f"{path}: {path.stat().st_size / (1 << 30):.2f} GB")
    measure("gymscope.rollouts", path)
    if args.threads:
        measure_threads(path)
    if not args.skip_pandas:
        measure("pandas.read_json", path)


if __name__ == "__main__":
    main()
