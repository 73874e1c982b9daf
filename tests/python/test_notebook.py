"""`gymscope.Inspector` in real notebooks: JupyterLab and Notebook 7 (from PyPI) headless on
127.0.0.1, a notebook showing the inspector on the example run (three agents, four repeats) in
real Chromium (marimo: test_marimo.py). The profile page renders alone (no tabs, no file zone),
as wide and as tall as its cell, with no horizontal scrollbar; the plot, its legend and the task
table come from the package's own wasm (no network: the server and the page only talk on
loopback); a brush on the plot reads within the data and comes back to the kernel as
`inspector.selection`; `page="health"` shows the Health page. Run by scripts/wheel.sh; needs
Chromium and ChromeDriver (scripts/setup.sh --browser) and the notebook's packages
(requirements.txt).

`GYMSCOPE_DOCS_SHOTS=1` also writes docs/screenshots/notebook.png."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

import gymscope

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "assets" / "example-run"
ROLLOUTS = RUN / "example_rollouts.jsonl"
INPUTS = RUN / "example_rollouts_materialized_inputs.jsonl"
TOKEN = "gymscope-test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_server(server: subprocess.Popen, log) -> None:
    """Stops a server a fixture started (killed if it has not stopped in 20 s); closes its log."""
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


def wait_for(what: str, check, timeout: float = 120.0, every: float = 0.25):
    end = time.time() + timeout
    last = None
    while time.time() < end:
        try:
            last = check()
            if last:
                return last
        except Exception as e:  # noqa: BLE001 - retried until the deadline
            last = e
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def notebook(out: Path) -> dict:
    cells = [
        "import gymscope\n"
        f"inspector = gymscope.Inspector(rollouts={str(ROLLOUTS)!r}, inputs={str(INPUTS)!r})\n"
        "inspector",
        f"import json\nopen({str(out)!r}, 'w').write(json.dumps(inspector.selection))",
        f"gymscope.Inspector(rollouts={str(ROLLOUTS)!r}, inputs={str(INPUTS)!r}, page='health')",
    ]
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [
            {"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [], "source": src}
            for i, src in enumerate(cells)
        ],
    }


# How each front-end is started, where it opens a notebook, and its app object in the page
# (both are JupyterLab's application: `jupyterapp`).
FRONT_ENDS = {
    "jupyterlab": (["jupyterlab", "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
                    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"], "lab/tree"),
    "notebook7": (["notebook", "--JupyterNotebookApp.expose_app_in_browser=True"], "notebooks"),
}


@pytest.fixture(params=sorted(FRONT_ENDS))
def lab(request, tmp_path: Path):
    command, path = FRONT_ENDS[request.param]
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_DATA_DIR": str(Path(sys.prefix) / "share" / "jupyter"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
    }
    # No news prompt over the notebook (nothing would be fetched anyway: loopback only).
    notification = tmp_path / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    root = tmp_path / "notebooks"
    root.mkdir()
    log = open(tmp_path / "server.log", "wb")
    server = subprocess.Popen(
        [
            sys.executable, "-m", *command, "--no-browser", "--allow-root",
            "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={root}",
        ],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(request.param, lambda: urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2).status == 200)
        yield f"{url}/{path}", root
    finally:
        stop_server(server, log)


def chromium():
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1440,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if binary:
        options.binary_location = binary
    driver = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
    assert driver, "ChromeDriver is needed (scripts/setup.sh --browser)"
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


# Drags a brush over the scatter, in fractions of its canvas (as tests/browser/plots.rs does).
DRAG = """
const c = document.querySelector('[data-testid=scatter]');
const r = c.getBoundingClientRect();
const at = (fx, fy) => ({clientX: r.left + fx * r.width, clientY: r.top + fy * r.height, bubbles: true});
const [x0, y0, x1, y1] = arguments;
c.dispatchEvent(new MouseEvent('mousedown', at(x0, y0)));
c.dispatchEvent(new MouseEvent('mousemove', at((x0 + x1) / 2, (y0 + y1) / 2)));
c.dispatchEvent(new MouseEvent('mousemove', at(x1, y1)));
c.dispatchEvent(new MouseEvent('mouseup', at(x1, y1)));
"""

# Every element from the frame up to the page (through shadow roots) that scrolls sideways.
SIDEWAYS = """
const out = [];
for (let e = arguments[0]; e; e = e.parentElement || (e.getRootNode() || {}).host) {
  const s = getComputedStyle(e);
  if (e.scrollWidth > e.clientWidth + 1 && !['hidden', 'clip', 'visible'].includes(s.overflowX))
    out.push(`${e.tagName}.${e.className} ${e.scrollWidth}>${e.clientWidth}`);
}
const d = document.scrollingElement;
if (d.scrollWidth > d.clientWidth + 1) out.push(`page ${d.scrollWidth}>${d.clientWidth}`);
return out;
"""


def inspector_frames(browser, count: int = 1):
    return wait_for(f"{count} inspector frame(s)", lambda: (
        lambda f: len(f) >= count and f)(browser.find_elements(By.CSS_SELECTOR, "iframe.gymscope-inspector")))


def check_view(browser, frame) -> str:
    """Checks the inspector in `frame` (the browser in the host page; left there): the profile
    page alone, rendered, sized to its page with no sideways scrolling, and a brush from the
    plot's left edge, whose readout is returned ("brushed output tokens 310.5–1,822, reward
    0.6571–1.05: 17 tasks")."""
    browser.execute_script("arguments[0].scrollIntoView()", frame)
    browser.switch_to.frame(frame)
    status = lambda: browser.find_element(By.CSS_SELECTOR, "[data-testid=status]").text  # noqa: E731
    assert "Profile ready" in wait_for("the profile", lambda: "Profile ready" in status() and status()), status()
    # The page alone: no header with its tabs, no file zone.
    alone = browser.execute_script(
        "const z = document.querySelector('[data-testid=drop-zone]');"
        "return [document.querySelectorAll('header, nav, [data-testid^=tab-]').length,"
        " !!z && z.getClientRects().length, !!document.querySelector('main.embedded')];")
    assert alone == [0, 0, True], alone
    # The plot, drawn; its legend with the three agents; the task table's 30 tasks.
    drawn = wait_for("the plot's pixels", lambda: browser.execute_script(
        "const c = document.querySelector('[data-testid=scatter]'); if (!c || !c.width) return 0;"
        "const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;"
        "for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n;"))
    assert drawn > 1000, drawn
    agents = browser.execute_script(
        "return Array.from(document.querySelectorAll('[data-testid=plot-legend-item]')).map(e => e.dataset.agent)")
    assert agents == ["code_gen_simple_agent", "example_single_tool_call_simple_agent", "math_with_judge_simple_agent"]
    colours = browser.execute_script(
        "return Array.from(document.querySelectorAll('[data-testid=plot-legend-item] .swatch'),"
        " e => getComputedStyle(e).backgroundColor)")
    assert len(set(colours)) == 3, colours
    count = browser.find_element(By.CSS_SELECTOR, "[data-testid=task-count]").text
    assert count == "30 of 30 tasks", count
    assert browser.execute_script("return document.querySelectorAll('[data-testid=task-table] tbody tr').length") > 0
    inner = browser.execute_script(
        "const d = document.documentElement; return [d.scrollWidth, d.clientWidth,"
        " Math.ceil(d.getBoundingClientRect().height), document.querySelector('[data-testid=scatter]')"
        ".getBoundingClientRect().top];")
    assert inner[0] <= inner[1] + 1, f"the page scrolls sideways in its frame: {inner}"
    # A brush from the plot's left edge (left of the least token count) over the successes.
    browser.execute_script(DRAG, 0.0, 0.02, 0.5, 0.3)
    said = wait_for("the brush", lambda: browser.find_element(By.CSS_SELECTOR, "[data-testid=brush-status]").text)
    page = lambda: browser.execute_script("return document.documentElement.getBoundingClientRect().height")  # noqa: E731
    browser.switch_to.default_content()
    # Sized to the page (no inner scrollbar, nothing cut), the plot on the first screen, and
    # nothing in the notebook scrolls sideways.
    heights = []

    def fitted():
        outer = frame.size["height"]
        browser.switch_to.frame(frame)
        try:
            heights[:] = [outer, page()]
        finally:
            browser.switch_to.default_content()
        return abs(heights[0] - heights[1]) <= 4

    wait_for("the frame's fitted height", fitted, timeout=30)
    outer = heights[0]
    assert inner[3] < 600, f"the plot starts {inner[3]} px down its frame"
    assert browser.execute_script(SIDEWAYS, frame) == [], (outer, inner)
    return said


def brushed(said: str):
    """The readout's numbers: x0, x1, y0, y1 and the count of tasks."""
    found = re.search(r"brushed .* (\S+)–(\S+), reward (\S+)–(\S+): (\d+) tasks", said)
    assert found, said
    x0, x1, y0, y1 = (float(t.replace(",", "")) for t in found.groups()[:4])
    return x0, x1, y0, y1, int(found.group(5))


def check_selection(said: str, selection) -> None:
    """The brushed rollouts the kernel got, against the rows (output tokens × reward): every row
    well inside the shown rectangle is selected, and no row outside it; the readout is within
    the data (issue 57: it read "output tokens -309.29–…")."""
    x0, x1, y0, y1, tasks = brushed(said)
    tol = 1e-3
    rows = {(r["task"], r["rollout"]): r for r in gymscope.rollouts(ROLLOUTS).to_pylist()}
    xs = [r["output_tokens"] for r in rows.values() if r["output_tokens"] is not None]
    assert x0 >= min(xs) - tol and x1 <= max(xs) + tol, (said, min(xs), max(xs))
    assert y0 >= min(r["reward"] for r in rows.values()) - tol, said

    def inside(r, margin):
        x, y = r["output_tokens"], r["reward"]
        return x is not None and x0 + margin <= x <= x1 - margin and y0 + margin <= y <= y1 - margin

    chosen = {tuple(k) for k in selection}
    assert chosen, said
    assert all(inside(rows[k], -tol) for k in chosen), said
    assert {k for k, r in rows.items() if inside(r, tol)} <= chosen, said
    assert len({t for t, _ in chosen}) == tasks, said


@contextlib.contextmanager
def browsing(tmp_path: Path):
    """Chromium for a test's body: a failure inside reports the console and a screenshot; it quits
    either way."""
    browser = chromium()
    try:
        yield browser
    except BaseException:
        report_failure(browser, tmp_path)
        raise
    finally:
        browser.quit()


def report_failure(browser, tmp_path: Path) -> None:
    for entry in browser.get_log("browser"):
        print("console:", entry.get("level"), entry.get("message"))
    browser.switch_to.default_content()
    browser.save_screenshot(str(tmp_path / "failure.png"))
    print("screenshot:", tmp_path / "failure.png")


def test_the_inspector_is_a_view_of_the_notebook_and_a_brush_reaches_the_kernel(lab, tmp_path: Path) -> None:
    url, root = lab
    out = tmp_path / "selection.json"
    (root / "inspect.ipynb").write_text(json.dumps(notebook(out)))
    with browsing(tmp_path) as browser:
        browser.get(f"{url}/inspect.ipynb?token={TOKEN}")
        wait_for("the notebook", lambda: browser.execute_script(
            "const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            "return !!(w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel"
            " && w.sessionContext.session.kernel.status === 'idle');"))
        browser.execute_script("return window.jupyterapp.commands.execute('notebook:run-all-cells')")
        wait_for("the selection file", out.exists)
        frame, health = inspector_frames(browser, 2)[:2]
        said = check_view(browser, frame)
        # Nothing between the frame and the notebook's own scroller scrolls up and down.
        scrollers = browser.execute_script(
            "const out = []; for (let e = arguments[0]; e; e = e.parentElement) { const s = getComputedStyle(e);"
            " if (e.scrollHeight > e.clientHeight + 1 && ['auto', 'scroll'].includes(s.overflowY))"
            " out.push(`${e.tagName}.${e.className} ${e.scrollHeight}>${e.clientHeight}`); } return out;", frame)
        assert len(scrollers) == 1 and "WindowedPanel" in scrollers[0], scrollers
        if os.environ.get("GYMSCOPE_DOCS_SHOTS") == "1" and "/lab/" in url:
            browser.execute_script("arguments[0].scrollIntoView()", frame)
            browser.save_screenshot(str(ROOT / "docs" / "screenshots" / "notebook.png"))
        # page="health": that page alone, on the same run.
        browser.execute_script("arguments[0].scrollIntoView()", health)
        browser.switch_to.frame(health)
        shown = wait_for("the Health page", lambda: browser.execute_script(
            "const h = document.querySelector('[data-testid=page-health]');"
            "const p = document.querySelector('[data-testid=scatter]');"
            "return h && h.getClientRects().length && h.innerText.includes('rollouts')"
            " && [h.innerText.slice(0, 200), !!p && p.getClientRects().length];"))
        assert shown[1] == 0, shown
        browser.switch_to.default_content()
        out.unlink()
        browser.execute_script(
            "const nb = window.jupyterapp.shell.currentWidget.content; nb.activeCellIndex = 1;"
            "return window.jupyterapp.commands.execute('notebook:run-cell');")
        selection = wait_for("the kernel's selection", lambda: out.exists() and json.loads(out.read_text()))
    check_selection(said, selection)
