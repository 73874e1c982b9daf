"""``gymscope.Inspector``: the inspector as a notebook widget (anywidget; JupyterLab is the
front-end the tests run).

It runs the app's own WebAssembly (the same build as the browser app, shipped in this package:
nothing is fetched, it works offline) in an isolated frame of the output cell, showing one page
of the app alone (the reward profile unless ``page=`` names another), as wide as the cell and as
tall as its page. The run's files stay out of the widget's state: the frame asks the kernel for
them a chunk at a time (``CHUNK`` bytes, custom messages), so a run on a remote notebook server
works and the kernel holds one chunk, not the run. A brush on the scatter comes back to Python as
``inspector.selection``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, List, Optional, Tuple, Union

import anywidget
import traitlets

from ._errors import DirectoryError, NotFoundError

STATIC = Path(__file__).parent / "static"

#: The bytes the kernel reads and sends per request of the frame.
CHUNK = 4 << 20

#: The pages ``page=`` opens: the app's own names (its URL hash's).
PAGES = ("profile", "health", "compare", "pivot", "pivot-build")


def _static(name: str) -> bytes:
    path = STATIC / name
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: this gymscope was installed without its app "
            "(scripts/wheel.sh builds it into the wheel)"
        )
    return path.read_bytes()


class Inspector(anywidget.AnyWidget):
    """The inspector on a run, as a view of the notebook: the reward profile page alone (key
    figures, the query bar, reward × tokens plot keyed by task and rollout with its legend and
    brushing, the agents, the task table and the rollout view), without the app's tabs and file
    zone. ``page="health"`` (or ``"compare"``, ``"pivot"``, ``"pivot-build"``) shows that page
    instead; ``height=`` fixes the frame's height (by default it is as tall as the page).

        inspector = gymscope.Inspector(rollouts="run/rollouts.jsonl",
                                       inputs="run/rollouts_materialized_inputs.jsonl")
        inspector            # shows it
        inspector.selection  # the brushed rollouts' (task, rollout) keys

    ``gymscope.Inspector(profile)`` shows the run a ``gymscope.profile(…)`` was made from.
    """

    _esm = Path(__file__).parent / "widget.js"
    _app_js = traitlets.Bytes().tag(sync=True)
    _app_wasm = traitlets.Bytes().tag(sync=True)
    _worker_js = traitlets.Bytes().tag(sync=True)
    _worker_wasm = traitlets.Bytes().tag(sync=True)
    _app_css = traitlets.Unicode().tag(sync=True)
    #: The run's files as the frame asks for them: ``[{name, size}]`` (the bytes come by message).
    _files = traitlets.List().tag(sync=True)
    _chunk = traitlets.Int(CHUNK).tag(sync=True)
    #: The brushed rollouts, as ``[task, rollout]`` pairs (empty when nothing is brushed).
    selection = traitlets.List().tag(sync=True)
    #: The page shown (``PAGES``).
    page = traitlets.Unicode("profile").tag(sync=True)
    #: The frame's height in pixels; ``None`` (the default): as tall as its page.
    height = traitlets.Int(None, allow_none=True).tag(sync=True)

    def __init__(
        self,
        profile: Optional[Any] = None,
        *,
        rollouts: Optional[Union[str, "os.PathLike[str]"]] = None,
        inputs: Optional[Union[str, "os.PathLike[str]"]] = None,
        page: str = "profile",
        height: Optional[int] = None,
    ) -> None:
        if page not in PAGES:
            raise ValueError(f"page={page!r} is not one of the inspector's pages: {', '.join(PAGES)}")
        if profile is not None:
            if rollouts is not None or inputs is not None:
                raise TypeError("give a profile, or rollouts= and inputs=, not both")
            inputs, rollouts = profile._native.inputs, profile._native.rollouts
        if rollouts is None:
            raise TypeError("give rollouts= (and inputs=, the run's materialized inputs)")
        files = [Path(p) for p in (inputs, rollouts) if p is not None]
        for f in files:
            if not f.is_file():
                if f.is_dir():
                    raise DirectoryError(f"{f}: is a folder, not a run's file", str(f))
                raise NotFoundError(f"{f}: no such file", str(f))
        self._paths = [f.resolve() for f in files]
        super().__init__(
            _app_js=_static("app.js"),
            _app_wasm=_static("app_bg.wasm"),
            _worker_js=_static("worker.js"),
            _worker_wasm=_static("worker_bg.wasm"),
            _app_css=_static("app.css").decode("utf-8"),
            _files=[{"name": f.name, "size": f.stat().st_size} for f in self._paths],
            _chunk=CHUNK,
            page=page,
            height=height,
        )
        self.on_msg(self._on_message)

    def _on_message(self, _widget: Any, content: Any, buffers: Any = None) -> None:
        """Sends the chunk of a file the frame asks for (``{kind: "read", view, file, offset}``)."""
        if not isinstance(content, dict) or content.get("kind") != "read":
            return
        view = content.get("view")
        try:
            path = self._paths[int(content["file"])]
            offset = int(content["offset"])
            with open(path, "rb") as f:
                f.seek(offset)
                data = f.read(CHUNK)
        except (OSError, LookupError, TypeError, ValueError) as e:
            self.send({"kind": "error", "view": view, "message": f"reading the run: {e}"})
            return
        self.send({"kind": "chunk", "view": view, "file": content["file"], "offset": offset}, [data])

    @property
    def selected(self) -> List[Tuple[int, int]]:
        """``selection`` as ``(task, rollout)`` tuples."""
        return [(int(t), int(r)) for t, r in self.selection]
