#!/usr/bin/env python3
"""Run the REAL upstream NeMo Gym reward profiler as an oracle over the generated cases.

Upstream is not vendored: the `nemo_gym` package is imported from $NEMO_GYM_SRC (a directory that
contains the upstream `nemo_gym/` source). Only `nemo_gym/reward_profile.py` (RewardProfiler) runs for
real; what it imports but cannot load here is stubbed:
  * `wandb` (always stubbed): `Histogram(data)` calls `numpy.histogram(data, bins=64)` like
    wandb.Histogram does, so upstream's "Too many bins" crash is kept.
  * `nemo_gym.global_config` / `nemo_gym.config_types` (stubbed only if the real module fails to import,
    e.g. hydra/ray/rich/omegaconf missing): the three key-name constants (read from upstream's
    global_config.py source) and minimal pydantic `BaseNeMoGymCLIConfig` / `AggregateMetrics`.

For every case dir (with rollouts.jsonl, rollouts_materialized_inputs.jsonl, args.txt) this repeats what
`reward_profile()` in nemo_gym/cli/eval.py does (read both files line by line with orjson, sort results
by (task, rollout), RewardProfiler().profile_from_data, profile_completion_summary, write_to_disk, print
the summary) on a copy of the inputs in a temp dir, and writes <case>/expected/:
  rollouts_reward_profiling.jsonl, rollouts_agent_metrics.json, stdout.txt (temp dir -> "<dir>")
or, if upstream raises, only expected/error.txt ("<ExceptionType>: <message>\n").

    NEMO_GYM_SRC=/tmp/nemo-gym-src python scripts/parity/upstream_expected.py [--cases-dir DIR] [case ...]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import types
import warnings
from pathlib import Path

import numpy as np
import orjson
import pandas
import pydantic

KEY_DEFAULTS = {
    "TASK_INDEX_KEY_NAME": "_ng_task_index",
    "ROLLOUT_INDEX_KEY_NAME": "_ng_rollout_index",
    "AGENT_REF_KEY_NAME": "agent_ref",
}


def _stub_wandb() -> None:
    wandb = types.ModuleType("wandb")

    class Histogram:
        """Stand-in for wandb.Histogram: same numpy call (and so the same errors), nothing logged."""

        MAX_LENGTH = 512

        def __init__(self, sequence=None, np_histogram=None, num_bins=64):
            if np_histogram is not None:
                self.histogram, self.bins = np_histogram
            else:
                self.histogram, self.bins = np.histogram(sequence, bins=num_bins)
            self.histogram = list(self.histogram)
            self.bins = list(self.bins)
            if len(self.histogram) > self.MAX_LENGTH:
                raise ValueError("The maximum length of a histogram is %i" % self.MAX_LENGTH)
            if len(self.histogram) + 1 != len(self.bins):
                raise ValueError("len(bins) must be len(histogram) + 1")

    wandb.Histogram = Histogram
    sys.modules["wandb"] = wandb


def _key_constants(src: Path) -> dict:
    consts = dict(KEY_DEFAULTS)
    text = (src / "nemo_gym" / "global_config.py").read_text("utf-8")
    for name in consts:
        m = re.search(rf'^{name}\s*=\s*"([^"]*)"', text, re.M)
        if m:
            consts[name] = m.group(1)
    return consts


def load_upstream(src: Path):
    """Import nemo_gym.reward_profile from `src`; returns (module, key constants, list of stubbed modules)."""
    if not (src / "nemo_gym" / "reward_profile.py").is_file():
        sys.exit(f"NEMO_GYM_SRC={src} has no nemo_gym/reward_profile.py")
    sys.path.insert(0, str(src))
    _stub_wandb()
    stubbed = ["wandb"]
    consts = _key_constants(src)

    import nemo_gym  # noqa: F401  (real package __init__: stdlib-only)

    try:
        import nemo_gym.global_config as gc  # noqa: F401
    except ImportError:
        gc = types.ModuleType("nemo_gym.global_config")
        for k, v in consts.items():
            setattr(gc, k, v)
        sys.modules["nemo_gym.global_config"] = gc
        stubbed.append("nemo_gym.global_config")
    for k, v in consts.items():
        assert getattr(gc, k) == v, (k, getattr(gc, k), v)

    try:
        import nemo_gym.config_types  # noqa: F401
    except ImportError:
        ct = types.ModuleType("nemo_gym.config_types")

        class BaseNeMoGymCLIConfig(pydantic.BaseModel):
            pass

        class AggregateMetrics(pydantic.BaseModel):
            group_level_metrics: list = []
            agent_metrics: dict = {}
            key_metrics: dict = {}

        class ConfigError(Exception):
            pass

        ct.BaseNeMoGymCLIConfig = BaseNeMoGymCLIConfig
        ct.AggregateMetrics = AggregateMetrics
        ct.ConfigError = ConfigError
        sys.modules["nemo_gym.config_types"] = ct
        stubbed.append("nemo_gym.config_types")

    import nemo_gym.reward_profile as rp_mod

    return rp_mod, consts, stubbed


class ConfigError(Exception):
    """What nemo_gym.rollout_collection.loads_jsonl_line raises (the CLI prints it as `Error: ...`)."""


def loads_jsonl_line(raw, fpath, line_no: int):
    # Same as nemo_gym.rollout_collection.loads_jsonl_line (not imported: that module pulls in tqdm,
    # omegaconf and the server stack).
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise ConfigError(f"Malformed JSON in '{fpath}' at line {line_no}: {e}") from e


def reward_profile(rp_mod, consts, materialized_inputs_jsonl_fpath: str, rollouts_jsonl_fpath: str, allow_partial: bool) -> str:
    """Body of nemo_gym.cli.eval.reward_profile after config parsing; returns what it prints."""
    task_key, rollout_key = consts["TASK_INDEX_KEY_NAME"], consts["ROLLOUT_INDEX_KEY_NAME"]

    with open(materialized_inputs_jsonl_fpath) as f:
        rows = [loads_jsonl_line(line, materialized_inputs_jsonl_fpath, i) for i, line in enumerate(f, 1)]

    with open(rollouts_jsonl_fpath) as f:
        results = [loads_jsonl_line(line, rollouts_jsonl_fpath, i) for i, line in enumerate(f, 1)]

    # Results may be out of order.
    results.sort(key=lambda r: (r[task_key], r[rollout_key]))

    rp = rp_mod.RewardProfiler()
    group_level_metrics, agent_level_metrics = rp.profile_from_data(rows, results, allow_partial_rollouts=allow_partial)
    completion_summary = rp.profile_completion_summary(rows, results)
    reward_profiling_fpath, agent_level_metrics_fpath = rp.write_to_disk(
        group_level_metrics, agent_level_metrics, Path(rollouts_jsonl_fpath)
    )

    # print() adds the final newline
    return f"""Profiling outputs:
Reward profile completion: {completion_summary["completed_rollout_rows"]}/{completion_summary["expected_rollout_rows"]} rollout rows ({completion_summary["reward_profile_completion_pct"]:.2f}%)
Input rows: {completion_summary["total_input_rows"]} total; {completion_summary["complete_input_rows"]} complete; {completion_summary["partial_input_rows"]} partial; {completion_summary["missing_input_rows"]} without rollouts dropped from output.
Reward profiling outputs: {reward_profiling_fpath}
Agent-level metrics: {agent_level_metrics_fpath}
"""


def run_case(rp_mod, consts, case_dir: Path) -> str:
    args = (case_dir / "args.txt").read_text("utf-8").split() if (case_dir / "args.txt").exists() else []
    unknown = [a for a in args if a != "--allow-partial-rollouts"]
    if unknown:
        raise SystemExit(f"{case_dir}/args.txt: unknown args {unknown}")
    allow_partial = "--allow-partial-rollouts" in args

    expected = case_dir / "expected"
    if expected.exists():
        shutil.rmtree(expected)
    expected.mkdir()

    with tempfile.TemporaryDirectory(prefix="gymscope-parity-") as tmp:
        inputs = Path(tmp) / "rollouts_materialized_inputs.jsonl"
        rollouts = Path(tmp) / "rollouts.jsonl"
        shutil.copyfile(case_dir / "rollouts_materialized_inputs.jsonl", inputs)
        shutil.copyfile(case_dir / "rollouts.jsonl", rollouts)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                stdout = reward_profile(rp_mod, consts, str(inputs), str(rollouts), allow_partial)
            except Exception as e:  # upstream crashed: record it like the gym-examples fixtures do
                (expected / "error.txt").write_text(f"{type(e).__name__}: {e}\n", "utf-8")
                return f"RAISED {type(e).__name__}: {e}"
        for name in ("rollouts_reward_profiling.jsonl", "rollouts_agent_metrics.json"):
            shutil.copyfile(Path(tmp) / name, expected / name)
        (expected / "stdout.txt").write_text(stdout.replace(tmp, "<dir>"), "utf-8")
    notes = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    return "ok" + "".join(f"\n    warning: {n}" for n in notes)


def check_versions(src: Path) -> None:
    """Warn when the numeric stack differs from upstream's uv.lock (if $NEMO_GYM_SRC/uv.lock exists)."""
    lock = src / "uv.lock"
    have = {"pandas": pandas.__version__, "numpy": np.__version__, "orjson": orjson.__version__}
    print("oracle versions: " + ", ".join(f"{k} {v}" for k, v in have.items()) + f", python {sys.version.split()[0]}")
    if not lock.exists():
        return
    text = lock.read_text("utf-8")
    for pkg, ver in have.items():
        m = re.search(rf'^name = "{pkg}"\nversion = "([^"]+)"', text, re.M)
        if m and m.group(1) != ver:
            print(f"WARNING: {pkg} {ver} here, upstream uv.lock pins {m.group(1)}", file=sys.stderr)


def main() -> int:
    here = Path(__file__).resolve()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases-dir", type=Path, default=here.parents[2] / "tests" / "fixtures" / "generated")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()

    src = os.environ.get("NEMO_GYM_SRC")
    if not src:
        sys.exit("set NEMO_GYM_SRC to a directory holding the upstream nemo_gym/ package source")
    src_path = Path(src).resolve()
    rp_mod, consts, stubbed = load_upstream(src_path)
    print(f"upstream: {rp_mod.__file__} (stubbed: {', '.join(stubbed)})")
    check_versions(src_path)

    case_dirs = [args.cases_dir / c for c in args.cases] or sorted(
        d for d in args.cases_dir.iterdir() if (d / "rollouts.jsonl").exists()
    )
    for d in case_dirs:
        print(f"{d.name}: {run_case(rp_mod, consts, d)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
