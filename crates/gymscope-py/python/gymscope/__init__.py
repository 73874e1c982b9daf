"""gymscope in Python: NeMo Gym runs read by gymscope's Rust core, in process.

    import gymscope
    p = gymscope.profile("run/rollouts_materialized_inputs.jsonl", "run/rollouts.jsonl")
    p.tasks.to_pandas()                      # one row per task
    t = gymscope.rollouts("run/rollouts.jsonl", query="reward == 0")
    gymscope.Inspector(rollouts="run/rollouts.jsonl")   # the inspector in a notebook cell

Every function is the `gymscope` command of the same name, computed by the same code (the
wheel also installs the command). Errors raise a `GymscopeError` with the command's message,
which names the file, the line and the field: a `NotFoundError` (also a `FileNotFoundError`),
a `DirectoryError` (an `IsADirectoryError`) or a `DataError` (a `ValueError`, with `.path`,
`.line` and `.column`). Ctrl-C raises `KeyboardInterrupt` at once. Tables are Arrow (`Table`): `pyarrow.table(t)`,
`polars.DataFrame(t)` and `t.to_pandas()` take them without a copy. See docs/python.md.
"""

from __future__ import annotations

import atexit
import json
import os
import warnings as _warnings
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _native
from ._errors import DataError, DirectoryError, GymscopeError, NotFoundError, QueryError
from ._errors import from_message as _error
from ._native import __version__
from ._table import Table

# A command interrupted by Ctrl-C finishes or removes its files before the interpreter exits.
atexit.register(_native.finish_stopped)

__all__ = [
    "DataError",
    "DirectoryError",
    "GymscopeError",
    "NotFoundError",
    "QueryError",
    "Inspector",
    "Profile",
    "Table",
    "__version__",
    "compare",
    "health",
    "profile",
    "query",
    "rollouts",
    "run",
    "select_tasks",
    "validate_pivot",
]

PathLike = Union[str, "os.PathLike[str]"]


def run(*args: Any) -> bytes:
    """Runs ``gymscope ARGS…`` in this process and returns what it printed on stdout.

    Raises a GymscopeError with the command's message when it exits with an error.
    """
    code, out, err = _native.run([os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args])
    if code != 0:
        raise _failure(err, code, args)
    return out


def _failure(err: str, code: int, args: Sequence[Any]) -> GymscopeError:
    """A command's failure as the package's exception (its stderr without usage text)."""
    e = _error(err)
    if not str(e):
        e = GymscopeError(f"gymscope {args[0] if args else ''} exited with code {code}")
    return e


def _flags(options: Dict[str, Any]) -> List[str]:
    """Keyword arguments as the command's flags: ``min_pass=0.2`` is ``--min-pass 0.2``,
    ``drop_saturated=True`` is ``--drop-saturated``, a list repeats its values."""
    out: List[str] = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            out.append(flag)
            out.extend(os.fspath(v) if isinstance(v, os.PathLike) else str(v) for v in value)
        else:
            out.extend([flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)])
    return out


class Profile:
    """A run's reward profile, as ``gymscope profile`` (NeMo Gym v0.7.0's ``gym eval profile``)
    computes it."""

    def __init__(self, native: "_native.Profile") -> None:
        self._native = native

    @property
    def warnings(self) -> List[str]:
        """What the read handled that NeMo Gym would have failed on (also issued as
        ``UserWarning``s by ``profile()``, as ``gymscope profile`` prints them)."""
        return list(self._native.warnings)

    @property
    def tasks(self) -> Table:
        """One row per task with a rollout: the task, its agent, every statistic and count of
        ``*_reward_profiling.jsonl``."""
        return Table(self._native.tasks())

    @property
    def agents(self) -> List[Dict[str, Any]]:
        """``*_agent_metrics.json``: one entry per agent."""
        return json.loads(self._native.agent_metrics())

    @property
    def repeats(self) -> List[Dict[str, Any]]:
        """``*_repeat_level_metrics.json``: per agent and repeat, the mean reward and its spread."""
        return json.loads(self._native.repeat_level_metrics())

    def write(self, out_dir: Optional[PathLike] = None) -> List[Path]:
        """Writes the files ``gymscope profile`` writes, beside the rollouts or in ``out_dir``
        (created); returns their paths."""
        return [Path(p) for p in self._native.write(None if out_dir is None else os.fspath(out_dir))]

    def __repr__(self) -> str:
        return f"<gymscope.Profile of {self.tasks.num_rows} tasks, {len(self.agents)} agents>"


def profile(inputs: PathLike, rollouts: PathLike, *, partial: bool = False) -> Profile:
    """Profiles a run: its materialized inputs and its rollouts (``gymscope profile``).

    ``partial`` allows tasks with fewer rollouts than expected (``--allow-partial-rollouts``).
    """
    p = Profile(_native.Profile(os.fspath(inputs), os.fspath(rollouts), partial))
    for warning in p.warnings:
        _warnings.warn(warning, UserWarning, stacklevel=2)
    return p


def rollouts(
    rollouts: PathLike,
    *,
    inputs: Optional[PathLike] = None,
    query: Optional[str] = None,
    pass_threshold: float = 1.0,
    single_step: bool = False,
    strict: bool = False,
) -> Table:
    """One row per rollout, in file order: task, rollout, agent, reward, the token counts, tool
    calls, turns, the health flags, then every numeric field of the rows.

    ``query`` keeps the rows where the expression holds (the query language of ``gymscope
    query``, docs/query.md); ``inputs`` names the agent of rows without ``agent_ref``.
    Each column is the query language's field of the same name (``gymscope query --format
    rows`` prints the same rows).

    A field the query names that no row of the run has makes a comparison false: a
    ``UserWarning`` says so, and with ``strict=True`` it is a ``QueryError`` instead (``gymscope
    query --strict``).
    """
    table, warning = _native.rollouts(
        os.fspath(rollouts),
        None if inputs is None else os.fspath(inputs),
        query,
        pass_threshold,
        single_step,
        strict,
    )
    if warning:
        _warnings.warn(warning, UserWarning, stacklevel=2)
    return Table(table)


def query(
    rollouts: PathLike,
    expr: str,
    *,
    inputs: Optional[PathLike] = None,
    arrow: bool = False,
    strict: bool = False,
) -> Union[List[Dict[str, Any]], Table]:
    """The rollout rows where ``expr`` holds, in file order: each row as the file has it (a
    dict), or with ``arrow=True`` as ``rollouts(…, query=expr)``'s table. ``strict=True``
    refuses a field no row has (``QueryError``), as ``gymscope query --strict`` does; without
    it a ``UserWarning`` names such a field."""
    if arrow:
        return globals()["rollouts"](rollouts, inputs=inputs, query=expr, strict=strict)
    args = ["query", "--format", "jsonl", "--rollouts", rollouts]
    if inputs is not None:
        args += ["--inputs", inputs]
    if strict:
        args.append("--strict")
    code, out, err = _native.run([os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in [*args, expr]])
    if code != 0:
        raise _failure(err, code, args)
    if not strict:
        # The same check as rollouts()': the run is read for its field names only when the
        # expression names a field that no match has.
        matches = [json.loads(line) for line in out.splitlines() if line.strip()]
        _native_warn(rollouts, expr, matches)
        return matches
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _native_warn(rollouts: PathLike, expr: str, matches: List[Dict[str, Any]]) -> None:
    fields = {name.split(".")[0] for name in _native.query_fields(expr)}
    unseen = [f for f in fields if not any(f in m for m in matches)]
    if unseen:
        warning = _native.missing_fields(os.fspath(rollouts), expr)
        if warning:
            _warnings.warn(warning, UserWarning, stacklevel=3)


def compare(baseline: PathLike, *candidates: PathLike, **options: Any) -> Dict[str, Any]:
    """Compares runs (``gymscope compare --format json``): the baseline's rollouts against
    each candidate's, paired by task. Options are the command's flags (``pair_by="index"``,
    ``alpha=0.05``, ``agent="…"``)."""
    if not candidates:
        raise GymscopeError("give a baseline and at least one candidate run")
    out = run(
        "compare", "--baseline", baseline, "--candidates", *candidates, "--format", "json", *_flags(options)
    )
    return json.loads(out)


def health(
    rollouts: PathLike,
    *,
    inputs: Optional[PathLike] = None,
    **options: Any,
) -> Dict[str, Any]:
    """A run's health (``gymscope health --format json``): rates per agent against their
    thresholds, outcome buckets, findings and the worst rollouts. Options are the command's
    flags (``pass_threshold=0.5``, ``single_step=True``)."""
    args = ["health", "--rollouts", rollouts, "--format", "json"]
    if inputs is not None:
        args += ["--inputs", inputs]
    return json.loads(run(*args, *_flags(options)))


def validate_pivot(path: PathLike, agent_ref: str, **options: Any) -> Dict[str, Any]:
    """Checks a pivot dataset (``gymscope validate-pivot --format json``); a file with errors
    is a result (its ``errors``), not an exception. Options are the command's flags."""
    code, out, err = _native.run(
        ["validate-pivot", "--path", os.fspath(path), "--agent-ref", agent_ref, "--format", "json", *_flags(options)]
    )
    if out.strip():
        return json.loads(out)
    raise _failure(err, code, ["validate-pivot"])


def select_tasks(profile: PathLike, output: PathLike, **options: Any) -> Dict[str, Any]:
    """Chooses tasks from a reward profile (``gymscope select-tasks``): writes the kept tasks to
    ``output`` and returns the selection's record (``<output stem>.selection.json``: counts and
    options). Options are the command's flags (``min_pass=0.1``, ``max_pass=0.9``,
    ``max_tasks=100``, ``seed=0``)."""
    run("select-tasks", "--profile", profile, "--output", output, *_flags(options))
    out = Path(output)
    return json.loads(out.with_name(out.stem + ".selection.json").read_text())


def __getattr__(name: str) -> Any:
    # The widget needs anywidget: imported when first asked for, so the API does not.
    if name == "Inspector":
        try:
            from .widget import Inspector
        except ModuleNotFoundError as e:
            if e.name not in ("anywidget", "traitlets"):
                raise
            raise ModuleNotFoundError(
                f"gymscope.Inspector needs {e.name}: pip install 'gymscope[notebook]'", name=e.name
            ) from e
        return Inspector
    raise AttributeError(f"module 'gymscope' has no attribute {name!r}")
