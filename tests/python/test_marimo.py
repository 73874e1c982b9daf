"""`gymscope.Inspector` in marimo (from PyPI), as an app (`marimo run`, headless on 127.0.0.1)
in real Chromium: the profile page alone, sized to its cell with no horizontal scrollbar, the
run streamed from the kernel to the frame, a brush within the data that comes back to Python
(`mo.ui.anywidget`'s value, which a second cell writes out); and a cell whose Inspector raises
(a file that does not exist) shows marimo's error notice, not a blank page, while the other
cells still show. Needs what test_notebook.py needs, and marimo (requirements.txt)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("marimo")

from test_notebook import (  # noqa: E402 - after the skip
    INPUTS,
    ROLLOUTS,
    browsing,
    check_selection,
    check_view,
    free_port,
    stop_server,
    wait_for,
)

# marimo draws outputs inside shadow roots: the frames are found through them.
FRAMES = """
const out = [];
const walk = (root) => {
  for (const e of root.querySelectorAll('*')) {
    if (e.matches('iframe.gymscope-inspector')) out.push(e);
    if (e.shadowRoot) walk(e.shadowRoot);
  }
};
walk(document);
return out;
"""

# All the page's text, shadow roots included.
TEXT = """
const parts = [];
const walk = (root) => {
  for (const e of root.querySelectorAll('*')) {
    if (e.shadowRoot) { parts.push(e.shadowRoot.textContent); walk(e.shadowRoot); }
  }
};
walk(document);
return document.body.innerText + '\\n' + parts.join('\\n');
"""


def app(out: Path) -> str:
    return textwrap.dedent(
        f'''
        import marimo

        app = marimo.App(width="medium")


        @app.cell
        def _():
            import json

            import marimo as mo

            import gymscope

            inspector = mo.ui.anywidget(
                gymscope.Inspector(rollouts={str(ROLLOUTS)!r}, inputs={str(INPUTS)!r})
            )
            inspector
            return gymscope, inspector, json, mo


        @app.cell
        def _(inspector, json):
            _selection = inspector.value.get("selection", [])
            open({str(out)!r}, "w").write(json.dumps(_selection))
            return


        @app.cell
        def _(gymscope):
            gymscope.Inspector(rollouts={str(ROLLOUTS.with_name("no_such_rollouts.jsonl"))!r})
            return


        @app.cell
        def _(mo):
            mo.md("after the failing cell")
            return


        if __name__ == "__main__":
            app.run()
        '''
    )


@pytest.fixture()
def marimo_app(tmp_path: Path):
    out = tmp_path / "selection.json"
    notebook = tmp_path / "inspector_app.py"
    notebook.write_text(app(out))
    port = free_port()
    log = open(tmp_path / "marimo.log", "wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "marimo", "run", str(notebook), "--headless", "--host", "127.0.0.1",
         "--port", str(port), "--no-token"],
        stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for("marimo", lambda: urllib.request.urlopen(f"{url}/health", timeout=2).status == 200)
        yield url, out
    finally:
        stop_server(server, log)
        print((tmp_path / "marimo.log").read_text(errors="replace")[-3000:])


def test_the_inspector_in_a_marimo_app(marimo_app, tmp_path: Path) -> None:
    url, out = marimo_app
    with browsing(tmp_path) as browser:
        browser.get(url)
        frame = wait_for("the inspector's frame", lambda: browser.execute_script(FRAMES))[0]
        # The failing cell is not blank: an app hides a raised exception's text unless the app
        # shows tracebacks (`[tool.marimo.runtime] show_tracebacks = true`, docs/python.md), and
        # says so; the cells after it still show.
        wait_for("the failing cell's error", lambda: (
            lambda t: "An internal error occurred" in t and "after the failing cell" in t and t)(
                browser.execute_script(TEXT)))
        said = check_view(browser, frame)
        selection = wait_for("the kernel's selection", lambda: out.exists() and json.loads(out.read_text()))
    check_selection(said, selection)
