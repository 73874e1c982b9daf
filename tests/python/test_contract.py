"""The file contract (docs/files.md) from Python (issue 56, item 5): each entry point of the API
given each hostile shape of file ends in a `gymscope.GymscopeError` that names the file, or in a
result; never an abort of the interpreter, a hang or a changed input. Each call runs in its own
interpreter, so a crash is seen as one instead of ending the suite."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "assets" / "example-run"

# One call per entry point, the path under test as PATH; the other files are the example run's.
CALLS = {
    "profile --rollouts": "gymscope.profile(INPUTS, PATH)",
    "profile --inputs": "gymscope.profile(PATH, RUN)",
    "rollouts": "gymscope.rollouts(PATH)",
    "query": "gymscope.query(PATH, 'reward == 0')",
    "health": "gymscope.health(PATH)",
    "compare": "gymscope.compare(RUN, PATH)",
    "validate_pivot": "gymscope.validate_pivot(PATH, 'a')",
    "select_tasks": "gymscope.select_tasks(PATH, OUT)",
}

RUNNER = """
import json, sys, gymscope
RUN, INPUTS, PATH, OUT = sys.argv[1:5]
try:
    eval(sys.argv[5])
    print(json.dumps({"ok": True}))
except gymscope.GymscopeError as e:
    print(json.dumps({"ok": False, "type": type(e).__name__, "message": str(e)}))
"""


def shape(kind: str, tmp: Path) -> str:
    """The path a hostile shape stands for."""
    target = tmp / "x_rollouts.jsonl"
    if kind == "missing":
        return str(tmp / "missing" / "x.jsonl")
    if kind == "directory":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind in ("/dev/zero", "/dev/null"):
        return kind
    elif kind == "symlink loop":
        (tmp / "a").symlink_to(tmp / "b")
        (tmp / "b").symlink_to(tmp / "a")
        return str(tmp / "a" / "x.jsonl")
    elif kind == "empty":
        target.write_bytes(b"")
    elif kind == "no final newline":
        target.write_bytes((EXAMPLE / "example_rollouts.jsonl").read_bytes().rstrip(b"\n"))
    return str(target)


SHAPES = ["missing", "directory", "fifo", "/dev/zero", "/dev/null", "symlink loop", "empty", "no final newline"]


@pytest.mark.parametrize("kind", SHAPES)
@pytest.mark.parametrize("call", sorted(CALLS))
def test_every_entry_point_names_the_file_or_succeeds(call: str, kind: str, tmp_path: Path) -> None:
    work = tmp_path / "run"
    shutil.copytree(EXAMPLE, work)
    before = {p.name: p.read_bytes() for p in work.iterdir() if p.is_file()}
    path = shape(kind, tmp_path)
    run, inputs = work / "example_rollouts.jsonl", work / "example_rollouts_materialized_inputs.jsonl"
    out = tmp_path / "out" / "tasks.jsonl"
    # An address-space cap: an unbounded read would show as an abort, not as swapping.
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30));"
    proc = subprocess.run(
        [sys.executable, "-c", limit + RUNNER, str(run), str(inputs), path, str(out), CALLS[call]],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, f"{call} on {kind}: the interpreter ended with {proc.returncode}: {proc.stderr[-2000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if not result["ok"]:
        message = result["message"]
        named = path in message or Path(path).name in message
        # An empty input gets the command's own word on it (docs/files.md).
        assert named or kind in ("empty", "/dev/null", "no final newline"), f"{call} on {kind}: {message}"
    after = {p.name: p.read_bytes() for p in work.iterdir() if p.is_file()}
    assert {k: v for k, v in after.items() if k in before} == before, f"{call} on {kind} changed an input"
