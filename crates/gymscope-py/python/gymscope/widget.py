"""``gymscope.Inspector``: the inspector as a notebook widget (anywidget; JupyterLab is the
front-end the tests run).

It runs the app's own WebAssembly (the same build as the browser app, shipped in this package:
nothing is fetched, it works offline) in an isolated frame of the output cell. The kernel reads
the run's files and sends their bytes, so a run on a remote notebook server works. A brush on
the scatter comes back to Python as ``inspector.selection``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, List, Optional, Tuple, Union

import anywidget
import traitlets

STATIC = Path(__file__).parent / "static"


def _static(name: str) -> bytes:
    path = STATIC / name
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: this gymscope was installed without its app "
            "(scripts/wheel.sh builds it into the wheel)"
        )
    return path.read_bytes()


class Inspector(anywidget.AnyWidget):
    """The inspector on a run: summary, reward × tokens plot keyed by task and rollout with its
    legend and brushing, the task table, the query bar and the rollout view.

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
    _files = traitlets.List().tag(sync=True)
    #: The brushed rollouts, as ``[task, rollout]`` pairs (empty when nothing is brushed).
    selection = traitlets.List().tag(sync=True)
    #: The frame's height in pixels.
    height = traitlets.Int(760).tag(sync=True)

    def __init__(
        self,
        profile: Optional[Any] = None,
        *,
        rollouts: Optional[Union[str, "os.PathLike[str]"]] = None,
        inputs: Optional[Union[str, "os.PathLike[str]"]] = None,
        height: int = 760,
    ) -> None:
        if profile is not None:
            if rollouts is not None or inputs is not None:
                raise TypeError("give a profile, or rollouts= and inputs=, not both")
            inputs, rollouts = profile._native.inputs, profile._native.rollouts
        if rollouts is None:
            raise TypeError("give rollouts= (and inputs=, the run's materialized inputs)")
        files = [Path(p) for p in (inputs, rollouts) if p is not None]
        super().__init__(
            _app_js=_static("app.js"),
            _app_wasm=_static("app_bg.wasm"),
            _worker_js=_static("worker.js"),
            _worker_wasm=_static("worker_bg.wasm"),
            _app_css=_static("app.css").decode("utf-8"),
            _files=[{"name": f.name, "data": f.read_bytes()} for f in files],
            height=height,
        )

    @property
    def selected(self) -> List[Tuple[int, int]]:
        """``selection`` as ``(task, rollout)`` tuples."""
        return [(int(t), int(r)) for t, r in self.selection]
