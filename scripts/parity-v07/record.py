#!/usr/bin/env python3
"""Records what NeMo Gym v0.7.0's `gym eval profile` writes for each case folder, as the expected
files gymscope's tests compare with (byte for byte):

    <case>/expected/<stem>_reward_profiling.jsonl, <stem>_agent_metrics.json,
    <stem>_repeat_level_metrics.json, stdout.txt   (the temp folder printed as `<dir>`)
    or <case>/expected/error.txt                    (the exception's last line, if v0.7.0 fails)

A case folder holds `*_materialized_inputs.jsonl`, the rollouts file beside it and an optional
`args.txt` (`--allow-partial-rollouts`). Inputs are copied to a temp folder first: upstream writes
beside the rollouts file.

    GYM=~/.cache/gym07/bin/gym python3 scripts/parity-v07/record.py tests/fixtures/generated-v07/*

(`../shared/oracle/gym07-venv.sh` makes the venv.) Tests and CI never run this.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

GYM = os.environ.get("GYM", str(Path.home() / ".cache/gym07/bin/gym"))


def record(case: Path) -> str:
    inputs = next(case.glob("*_materialized_inputs.jsonl"))
    stem = inputs.name[: -len("_materialized_inputs.jsonl")]
    rollouts = case / f"{stem}.jsonl"
    args_file = case / "args.txt"
    partial = args_file.exists() and "--allow-partial-rollouts" in args_file.read_text()
    expected = case / "expected"
    shutil.rmtree(expected, ignore_errors=True)
    expected.mkdir()
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(inputs, tmp)
        shutil.copy(rollouts, tmp)
        argv = [GYM, "eval", "profile", "--inputs", f"{tmp}/{inputs.name}", "--rollouts", f"{tmp}/{rollouts.name}"]
        if partial:
            argv.append("++allow_partial_rollouts=True")
        # cwd: Hydra writes outputs/ into its working folder; keep it in the temporary one.
        run = subprocess.run(argv, capture_output=True, text=True, cwd=tmp)
        if run.returncode != 0:
            lines = [l for l in run.stderr.splitlines() if l.strip()]
            (expected / "error.txt").write_text(lines[-1] if lines else f"exit {run.returncode}")
            return f"error: {lines[-1] if lines else run.returncode}"
        (expected / "stdout.txt").write_text(run.stdout.replace(tmp, "<dir>"))
        for suffix in ("_reward_profiling.jsonl", "_agent_metrics.json", "_repeat_level_metrics.json"):
            shutil.copy(Path(tmp) / f"{stem}{suffix}", expected / f"{stem}{suffix}")
    return "ok"


def main() -> int:
    for arg in sys.argv[1:]:
        case = Path(arg)
        if case.is_dir() and any(case.glob("*_materialized_inputs.jsonl")):
            print(f"{case}: {record(case)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
