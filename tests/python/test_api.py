"""`import gymscope` against the `gymscope` command installed by the same wheel: every result of
the API is the command's (docs/python.md). Run by scripts/wheel.sh in a fresh venv."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import gymscope

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
# Runs of several shapes: three agents with repeats, a multi-agent run with missing rollouts,
# a single-agent Gym example, a run whose usage fields override top-level ones.
RUNS = [
    ROOT / "assets" / "example-run" / "example_rollouts.jsonl",
    FIXTURES / "generated" / "multi_agent" / "rollouts.jsonl",
    FIXTURES / "gym-examples" / "ether0" / "example_rollouts.jsonl",
    FIXTURES / "generated" / "usage_overrides_top" / "rollouts.jsonl",
]


# Every Gym example (one agent each, as a Gym user's run) and a run that renames its agents: the
# profile's task table against the files.
PROFILE_RUNS = RUNS + sorted(FIXTURES.glob("gym-examples/*/example_rollouts.jsonl")) + [
    FIXTURES / "generated" / "agent_name_override" / "rollouts.jsonl",
]


def inputs_of(rollouts: Path) -> Path:
    return rollouts.with_name(rollouts.stem + "_materialized_inputs.jsonl")


def cli(*args: object, ok: bool = True) -> subprocess.CompletedProcess:
    exe = shutil.which("gymscope")
    assert exe, "the wheel installs the gymscope command"
    done = subprocess.run([exe, *map(str, args)], capture_output=True)
    if ok:
        assert done.returncode == 0, done.stderr.decode()
    return done


@pytest.mark.parametrize("rollouts", list(dict.fromkeys(PROFILE_RUNS)), ids=lambda p: p.parent.name)
def test_profile_write_is_byte_equal_to_the_cli(rollouts: Path, tmp_path: Path) -> None:
    done = cli("profile", "--inputs", inputs_of(rollouts), "--rollouts", rollouts, "--out-dir", tmp_path / "cli", ok=False)
    if done.returncode != 0:
        # A run the command refuses (an older Gym's rows, without the index keys): the same
        # message, as a ValueError naming the file and line.
        with pytest.raises(gymscope.DataError) as refused:
            gymscope.profile(inputs_of(rollouts), rollouts)
        assert f"Error: {refused.value}" in done.stderr.decode()
        assert refused.value.path == str(rollouts) and refused.value.line == 1
        return
    p = gymscope.profile(inputs_of(rollouts), rollouts)
    written = p.write(tmp_path / "py" / "deep")
    assert len(written) == 3
    for path in written:
        want = (tmp_path / "cli" / path.name).read_bytes()
        assert path.read_bytes() == want, path.name
    # The in-memory results are the files' contents.
    assert p.agents == json.loads((tmp_path / "cli" / written[1].name).read_text())
    assert p.repeats == json.loads((tmp_path / "cli" / written[2].name).read_text())
    rows = [json.loads(line) for line in written[0].read_text().splitlines()]
    tasks = p.tasks.to_pylist()
    assert len(tasks) == len(rows)
    # Every column of every row, the strings too: the task and its agent as the file has them
    # (a fan-out run's row label, else the sample's `agent_ref`), each statistic by its name,
    # None where the file's row has none.
    for t, r in zip(tasks, rows):
        agent_ref = r.get("agent_ref") or r.get("sample", {}).get("agent_ref") or {}
        want = {"task": r["_ng_task_index"], "agent": agent_ref.get("name")}
        assert want["agent"] is not None
        for k, v in t.items():
            expected = want[k] if k in want else r.get(k)
            if isinstance(expected, float):
                assert v == pytest.approx(expected, nan_ok=True), (t["task"], k)
            else:
                assert v == expected and type(v) is type(expected), (t["task"], k)
        # ... and every statistic of the file's row is a column.
        assert {k for k in r if "/" in k or k.endswith("_rollouts") or k.endswith("_pct")} <= set(t)


def cli_rows(rollouts: Path, expr: str, inputs: Path | None = None) -> list:
    args = ["query", "--format", "rows", "--rollouts", rollouts, expr]
    if inputs:
        args[1:1] = ["--inputs", inputs]
    out = cli(*args).stdout.decode()
    return [json.loads(line) for line in out.splitlines()]


def same_rows(table_rows: list, cli_rows: list) -> None:
    assert len(table_rows) == len(cli_rows)
    for mine, theirs in zip(table_rows, cli_rows):
        # The table has every row's numeric fields (None where a row lacks one); a CLI row
        # names only its own.
        assert {k: v for k, v in mine.items() if v is not None or k in theirs} == theirs


@pytest.mark.parametrize("rollouts", RUNS, ids=lambda p: p.parent.name)
@pytest.mark.parametrize(
    "expr",
    ["rollout >= 0", "reward == 0", "output ~ /the/i and tool_calls == 0", "health.truncated or reward > 0.5"],
)
def test_rollouts_rows_are_the_clis(rollouts: Path, expr: str) -> None:
    inputs = inputs_of(rollouts)
    table = gymscope.rollouts(rollouts, inputs=inputs, query=expr)
    same_rows(table.to_pylist(), cli_rows(rollouts, expr, inputs))
    if expr == "rollout >= 0":
        same_rows(gymscope.rollouts(rollouts, inputs=inputs).to_pylist(), cli_rows(rollouts, expr, inputs))


@pytest.mark.parametrize("rollouts", RUNS, ids=lambda p: p.parent.name)
def test_query_matches_are_the_clis(rollouts: Path) -> None:
    expr = "reward < 1 or output ~ /answer/i"
    doc = json.loads(cli("query", "--format", "json", "--rollouts", rollouts, expr).stdout)
    rows = gymscope.query(rollouts, expr)
    assert [[r["_ng_task_index"], r["_ng_rollout_index"]] for r in rows] == doc["keys"]
    jsonl = cli("query", "--format", "jsonl", "--rollouts", rollouts, expr).stdout.decode()
    assert rows == [json.loads(line) for line in jsonl.splitlines()]
    table = gymscope.query(rollouts, expr, arrow=True)
    assert [[r["task"], r["rollout"]] for r in table.to_pylist()] == doc["keys"]


def test_errors_name_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    good = RUNS[0].read_text().splitlines()
    bad = tmp_path / "bad_rollouts.jsonl"
    bad.write_text("\n".join(good[:2] + ['{"_ng_task_index": "x", "_ng_rollout_index": 0}'] + good[3:]) + "\n")
    with pytest.raises(gymscope.GymscopeError, match=r"bad_rollouts\.jsonl' line 3.*_ng_task_index"):
        gymscope.rollouts(bad)
    shutil.copy(inputs_of(RUNS[0]), tmp_path / "bad_rollouts_materialized_inputs.jsonl")
    with pytest.raises(gymscope.GymscopeError, match=r"bad_rollouts\.jsonl.*line 3"):
        gymscope.profile(tmp_path / "bad_rollouts_materialized_inputs.jsonl", bad)
    with pytest.raises(gymscope.GymscopeError, match=r"column 9: expected a value after `>`"):
        gymscope.rollouts(RUNS[0], query="reward >> 1")
    with pytest.raises(gymscope.GymscopeError, match=r"no_such\.jsonl"):
        gymscope.query(tmp_path / "no_such.jsonl", "reward == 0")
    # An output that is an input is refused, and the input is untouched.
    p = gymscope.profile(inputs_of(RUNS[0]), RUNS[0])
    before = RUNS[0].read_bytes()
    with pytest.raises(gymscope.GymscopeError):
        p.write(RUNS[0])
    assert RUNS[0].read_bytes() == before


def test_tables_go_to_pyarrow_polars_and_pandas_without_a_copy() -> None:
    import polars as pl
    import pyarrow as pa

    t = gymscope.rollouts(RUNS[0])
    arrow = pa.table(t)
    assert arrow.num_rows == t.num_rows == 120
    assert arrow.column_names == t.column_names
    assert arrow.schema.field("reward").type == pa.float64()
    assert arrow.schema.field("health.truncated").type == pa.bool_()
    assert t.to_pyarrow().equals(arrow)
    frame = t.to_pandas()
    assert frame.shape == (120, len(t.column_names))
    assert frame["agent"].nunique() == 3
    pframe = pl.DataFrame(t)
    assert pframe.shape == (120, len(t.column_names))
    assert t.to_polars().equals(pframe)
    tasks = gymscope.profile(inputs_of(RUNS[0]), RUNS[0]).tasks
    assert pa.table(tasks).column("task").to_pylist() == list(range(30))


def test_compare_is_the_clis_json(tmp_path: Path) -> None:
    case = FIXTURES / "compare-v07" / "binary_flips"
    base, cand = case / "baseline" / "rollouts.jsonl", case / "candidate" / "rollouts.jsonl"
    out = ["--output-dir", tmp_path / "cli"]
    want = json.loads(cli("compare", "--baseline", base, "--candidates", cand, "--format", "json", *out).stdout)
    assert gymscope.compare(base, cand, output_dir=tmp_path / "py") == want
    # The report files the command writes, the same (each records its own --output-dir).
    for f in (tmp_path / "cli").iterdir():
        mine = (tmp_path / "py" / f.name).read_bytes().replace(bytes(tmp_path / "py"), b"OUT")
        assert mine == f.read_bytes().replace(bytes(tmp_path / "cli"), b"OUT"), f.name
    with pytest.raises(gymscope.GymscopeError, match="--no-such-flag"):
        gymscope.compare(base, cand, no_such_flag=1)


def test_health_is_the_clis_json() -> None:
    rollouts = RUNS[0]
    want = json.loads(cli("health", "--rollouts", rollouts, "--format", "json", "--pass-threshold", "0.5").stdout)
    assert gymscope.health(rollouts, pass_threshold=0.5) == want


def test_validate_pivot_and_select_tasks_are_the_clis(tmp_path: Path) -> None:
    pivot = FIXTURES / "pivot" / "cases" / "a1a_agent_ref_list.jsonl"
    done = cli("validate-pivot", "--path", pivot, "--agent-ref", "pivot_agent", "--format", "json", ok=False)
    assert done.returncode == 1
    result = gymscope.validate_pivot(pivot, "pivot_agent")
    assert result == json.loads(done.stdout) and result["valid"] is False
    p = gymscope.profile(inputs_of(RUNS[0]), RUNS[0])
    [profiling, _, _] = p.write(tmp_path)
    cli("select-tasks", "--profile", profiling, "-o", tmp_path / "cli.jsonl", "--max-pass", "0.9", "--seed", "3")
    chosen = gymscope.select_tasks(profiling, tmp_path / "py.jsonl", max_pass=0.9, seed=3)
    assert (tmp_path / "py.jsonl").read_bytes() == (tmp_path / "cli.jsonl").read_bytes()
    assert chosen == json.loads((tmp_path / "cli.selection.json").read_text())
    assert chosen["kept"] == 19 and chosen["options"]["max_pass"] == 0.9


def test_the_inspector_takes_a_profile_or_the_files_and_ships_its_app() -> None:
    p = gymscope.profile(inputs_of(RUNS[0]), RUNS[0])
    from_profile = gymscope.Inspector(p)
    from_files = gymscope.Inspector(rollouts=RUNS[0], inputs=inputs_of(RUNS[0]))
    for w in (from_profile, from_files):
        assert w._files == [
            {"name": inputs_of(RUNS[0]).name, "size": inputs_of(RUNS[0]).stat().st_size},
            {"name": RUNS[0].name, "size": RUNS[0].stat().st_size},
        ]
        assert w.page == "profile" and w.height is None
        # The app's own build, from the package (offline): wasm starts with its magic number.
        assert w._app_wasm[:4] == w._worker_wasm[:4] == b"\0asm"
        assert b"module_or_path" in w._app_js and "wasm_bindgen" in w._worker_js.decode()
        assert w.selection == [] and w.selected == []
    with pytest.raises(TypeError):
        gymscope.Inspector()
    with pytest.raises(TypeError):
        gymscope.Inspector(p, rollouts=RUNS[0])
    with pytest.raises(ValueError, match="page='nosuchpage' is not one of the inspector's pages: profile, health"):
        gymscope.Inspector(p, page="nosuchpage")
    assert gymscope.Inspector(p, page="health", height=500).page == "health"
    with pytest.raises(gymscope.NotFoundError, match="nosuch.jsonl"):
        gymscope.Inspector(rollouts=RUNS[0].with_name("nosuch.jsonl"))
    with pytest.raises(gymscope.DirectoryError):
        gymscope.Inspector(rollouts=RUNS[0].parent)


def test_the_inspector_streams_the_run_to_its_frame_in_chunks(monkeypatch) -> None:
    # The run is not in the widget's state (which every front-end copies whole into the kernel's
    # messages, and marimo holds several times over): the frame asks for chunks (issue 57).
    from gymscope import widget

    monkeypatch.setattr(widget, "CHUNK", 5000)
    w = gymscope.Inspector(rollouts=RUNS[0], inputs=inputs_of(RUNS[0]))
    state = w.get_state()
    assert len(json.dumps(state["_files"])) < 500 and "data" not in state["_files"][1]
    sent = []
    monkeypatch.setattr(w, "send", lambda content, buffers=None: sent.append((content, buffers)))
    data = RUNS[0].read_bytes()
    parts = []
    for offset in range(0, len(data), 5000):
        w._on_message(w, {"kind": "read", "view": "v1", "file": 1, "offset": offset}, [])
        content, buffers = sent.pop()
        assert content == {"kind": "chunk", "view": "v1", "file": 1, "offset": offset}
        assert len(buffers[0]) <= 5000
        parts.append(buffers[0])
    assert b"".join(parts) == data
    # A file gone since: the frame is told why.
    w._paths[0] = RUNS[0].with_name("gone.jsonl")
    w._on_message(w, {"kind": "read", "view": "v2", "file": 0, "offset": 0}, [])
    assert sent.pop()[0]["kind"] == "error"
    w._on_message(w, {"kind": "something else"}, [])
    assert sent == []


def test_a_table_shows_its_first_rows_escaped_in_a_notebook(tmp_path: Path) -> None:
    t = gymscope.rollouts(RUNS[0])
    assert t.head(3).to_pylist() == t.to_pylist()[:3]
    assert t.head(1000).num_rows == 120 and t.head(0).num_rows == 0
    page = t._repr_html_()
    assert page.count("<tr>") == 11 and "110 more rows" in page
    # An agent's name is model-controlled text: shown as text.
    rows = RUNS[0].read_text().replace('"name":"math_with_judge_simple_agent"', '"name":"<img src=x onerror=alert(1)>"')
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(rows)
    page = gymscope.rollouts(hostile, query='agent ~ "onerror"')._repr_html_()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_the_profiles_warnings_are_the_clis(tmp_path: Path) -> None:
    rollouts = RUNS[1]  # repeats that miss rollouts for some tasks
    said = cli("profile", "--inputs", inputs_of(rollouts), "--rollouts", rollouts, "--out-dir", tmp_path)
    with pytest.warns(UserWarning) as caught:
        p = gymscope.profile(inputs_of(rollouts), rollouts)
    assert p.warnings and [str(w.message) for w in caught] == p.warnings
    for w in p.warnings:
        assert f"Warning: {w}" in said.stderr.decode()
