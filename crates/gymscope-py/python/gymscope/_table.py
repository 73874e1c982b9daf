"""``gymscope.Table``: gymscope's Arrow columns, handed to pyarrow, polars and pandas through
the Arrow PyCapsule interface (``__arrow_c_stream__``), without a copy."""

from __future__ import annotations

import html
from typing import Any, Dict, List, Optional

from . import _native


class Table:
    """A table of gymscope's results (``Profile.tasks``, ``rollouts()``).

    ``pyarrow.table(t)`` / ``t.to_pyarrow()``, ``polars.DataFrame(t)`` / ``t.to_polars()`` and
    ``t.to_pandas()`` read its Arrow columns; ``t.to_pylist()`` needs no dependency.
    """

    __slots__ = ("_native",)

    def __init__(self, native: "_native.Table") -> None:
        self._native = native

    @property
    def num_rows(self) -> int:
        return self._native.num_rows

    @property
    def column_names(self) -> List[str]:
        return self._native.column_names

    def __len__(self) -> int:
        return self._native.num_rows

    def __repr__(self) -> str:
        return repr(self._native)

    def __arrow_c_stream__(self, requested_schema: Optional[Any] = None) -> Any:
        return self._native.__arrow_c_stream__(requested_schema)

    def head(self, n: int = 5) -> "Table":
        """The first ``n`` rows (the same buffers, no copy)."""
        return Table(self._native.slice(0, max(0, n)))

    def _repr_html_(self) -> str:
        # A notebook's view: the first rows, every value escaped (model text is untrusted).
        shown = 10
        rows = self._native.slice(0, shown).to_pylist()
        cell = lambda v: "" if v is None else html.escape(str(v))  # noqa: E731
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.column_names)
        body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in r.values()) + "</tr>" for r in rows)
        more = f"<p>{self.num_rows - shown:,} more rows</p>" if self.num_rows > shown else ""
        return (f"<p>gymscope.Table: {self.num_rows:,} rows × {len(self.column_names)} columns</p>"
                f"<div style=\"overflow-x:auto\"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{more}")

    def to_pylist(self) -> List[Dict[str, Any]]:
        """The rows as dicts, column name to value (``None`` where missing)."""
        return self._native.to_pylist()

    def to_pyarrow(self) -> Any:
        """A ``pyarrow.Table`` over the same buffers (pyarrow >= 15)."""
        import pyarrow as pa

        return pa.RecordBatchReader.from_stream(self).read_all()

    def to_pandas(self, **kwargs: Any) -> Any:
        """A ``pandas.DataFrame`` (through pyarrow; ``kwargs`` go to ``pyarrow.Table.to_pandas``)."""
        return self.to_pyarrow().to_pandas(**kwargs)

    def to_polars(self) -> Any:
        """A ``polars.DataFrame`` over the same buffers."""
        import polars as pl

        return pl.DataFrame(self)
