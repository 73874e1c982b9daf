"""Exceptions as Python code catches them (issue 57, docs/python.md "Errors"): one base,
`gymscope.GymscopeError`, and subclasses that are also the builtin `FileNotFoundError`,
`IsADirectoryError` and `ValueError` (with `.path`, `.line`, `.column`), from the API's own
reads and from the commands it runs alike. Messages carry no command-line usage text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import gymscope

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "assets" / "example-run" / "example_rollouts.jsonl"
INPUTS = RUN.with_name("example_rollouts_materialized_inputs.jsonl")


def is_ours(e: BaseException) -> None:
    assert isinstance(e, gymscope.GymscopeError)
    # The traceback names the package's class, not the extension's.
    assert type(e).__module__ == "gymscope" and "_native" not in type(e).__qualname__
    text = str(e)
    assert "Usage:" not in text and "--help" not in text and "tip:" not in text
    assert not text.startswith(("Error: ", "error: ")) and "\nError: " not in text


def test_a_missing_file_is_a_file_not_found_error(tmp_path: Path) -> None:
    missing = tmp_path / "no_such.jsonl"
    calls = [
        lambda: gymscope.rollouts(missing),
        lambda: gymscope.profile(INPUTS, missing),
        lambda: gymscope.profile(missing, RUN),
        lambda: gymscope.query(missing, "reward == 0"),
        lambda: gymscope.health(missing),
    ]
    for call in calls:
        with pytest.raises(FileNotFoundError) as caught:
            call()
        is_ours(caught.value)
        assert isinstance(caught.value, gymscope.NotFoundError)
        assert "no_such.jsonl" in str(caught.value) and caught.value.path.endswith("no_such.jsonl")
    # `except OSError` catches it too, as for open().
    with pytest.raises(OSError):
        gymscope.rollouts(missing)


def test_a_directory_is_an_is_a_directory_error(tmp_path: Path) -> None:
    for call in (lambda: gymscope.rollouts(tmp_path), lambda: gymscope.health(tmp_path)):
        with pytest.raises(IsADirectoryError) as caught:
            call()
        is_ours(caught.value)
        assert str(tmp_path) in str(caught.value)


def test_bad_data_is_a_value_error_with_the_path_line_and_column(tmp_path: Path) -> None:
    good = RUN.read_text().splitlines()
    bad = tmp_path / "bad_rollouts.jsonl"
    bad.write_text("\n".join(good[:2] + ['{"_ng_task_index": "x", "_ng_rollout_index": 0}'] + good[3:]) + "\n")
    shutil.copy(INPUTS, tmp_path / "bad_rollouts_materialized_inputs.jsonl")
    for call in (
        lambda: gymscope.rollouts(bad),
        lambda: gymscope.profile(tmp_path / "bad_rollouts_materialized_inputs.jsonl", bad),
        lambda: gymscope.query(bad, "reward == 0"),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        e = caught.value
        is_ours(e)
        assert isinstance(e, gymscope.DataError)
        assert (e.path, e.line) == (str(bad), 3), str(e)
        assert "_ng_task_index" in str(e)
    # Broken JSON: the column too.
    broken = tmp_path / "broken.jsonl"
    broken.write_text(good[0] + "\n" + '{"_ng_task_index": 1, \n')
    with pytest.raises(gymscope.DataError) as caught:
        gymscope.rollouts(broken)
    assert (caught.value.path, caught.value.line, caught.value.column) == (str(broken), 2, 22), str(caught.value)


def test_a_bad_expression_is_a_value_error_with_its_column() -> None:
    with pytest.raises(ValueError) as caught:
        gymscope.rollouts(RUN, query="reward >> 1")
    e = caught.value
    is_ours(e)
    assert isinstance(e, gymscope.QueryError) and e.column == 9 and e.path is None
    assert "expected a value after `>`" in str(e)
    with pytest.raises(gymscope.QueryError) as caught:
        gymscope.query(RUN, "reward >> 1")
    assert caught.value.column == 9


def test_a_bad_option_says_which_without_usage_text(tmp_path: Path) -> None:
    case = ROOT / "tests" / "fixtures" / "compare-v07" / "binary_flips"
    base, cand = case / "baseline" / "rollouts.jsonl", case / "candidate" / "rollouts.jsonl"
    with pytest.raises(gymscope.GymscopeError) as caught:
        gymscope.compare(base, cand, no_such_flag=1)
    is_ours(caught.value)
    assert "--no-such-flag" in str(caught.value)
    # An output that is an input is refused, and the input is untouched.
    p = gymscope.profile(INPUTS, RUN)
    before = RUN.read_bytes()
    with pytest.raises(gymscope.GymscopeError) as caught:
        p.write(RUN)
    is_ours(caught.value)
    assert RUN.read_bytes() == before
    # A command's warnings are not part of its error.
    assert json.dumps(str(caught.value)).count("Warning: ") == 0


def test_the_widget_without_anywidget_says_how_to_install_it() -> None:
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("anywidget") is not None:
        # Run where anywidget cannot be imported: a child with it hidden.
        code = "import sys; sys.modules['anywidget'] = None\n"
    else:
        code = ""
    code += "import gymscope\ntry:\n    gymscope.Inspector\nexcept ModuleNotFoundError as e:\n    print(e)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "pip install 'gymscope[notebook]'" in done.stdout, done.stdout + done.stderr
