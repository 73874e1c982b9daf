"""``gymscope.Table``: gymscope's Arrow columns, handed to pyarrow, polars and pandas through
the Arrow PyCapsule interface (``__arrow_c_stream__``), without a copy."""

from __future__ import annotations

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
