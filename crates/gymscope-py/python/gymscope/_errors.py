"""gymscope's exceptions: one base, ``GymscopeError``, and subclasses that are also the builtin
exceptions Python code catches (docs/python.md, "Errors")."""

from __future__ import annotations

import errno
import re
from typing import Optional

__all__ = ["GymscopeError", "NotFoundError", "DirectoryError", "DataError", "QueryError"]


class GymscopeError(Exception):
    """Any error of gymscope. Its message is the command's: it names the file, the line and
    the field."""

    __module__ = "gymscope"


class NotFoundError(GymscopeError, FileNotFoundError):
    """An input file that does not exist (also a ``FileNotFoundError``)."""

    __module__ = "gymscope"

    def __init__(self, message: str, path: Optional[str] = None) -> None:
        super().__init__(message)
        self.errno = errno.ENOENT
        self.path = path


class DirectoryError(GymscopeError, IsADirectoryError):
    """A directory where a file was expected (also an ``IsADirectoryError``)."""

    __module__ = "gymscope"

    def __init__(self, message: str, path: Optional[str] = None) -> None:
        super().__init__(message)
        self.errno = errno.EISDIR
        self.path = path


class DataError(GymscopeError, ValueError):
    """Bad data in a file (also a ``ValueError``): ``path``, ``line`` (1-based) and ``column``
    say where, each ``None`` when the message does not name it."""

    __module__ = "gymscope"

    def __init__(
        self,
        message: str,
        path: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.column = column


class QueryError(DataError):
    """A query expression that does not parse, or names a field no row has with
    ``strict=True``: ``column`` is where in the expression (``path`` and ``line`` are None)."""

    __module__ = "gymscope"


# The core's messages name places as `'FILE' line N`, `'FILE' line N: column C` or `in 'FILE' at
# line N, column C`.
_WHERE = re.compile(r"'(?P<path>[^']+)'(?: at)? line (?P<line>\d+)(?:[,:] column (?P<column>\d+))?")
_QUOTED = re.compile(r"'(?P<path>[^']+)'")
# clap's usage text after a bad flag: `\n\nUsage: …` and `For more information, try '--help'.`
_USAGE = re.compile(r"\n\s*\n(Usage:|For more information).*", re.S)


def clean(message: str) -> str:
    """A command's stderr as an exception message: without clap's usage text, the `Error: `
    prefix, or the warnings printed before the error."""
    message = _USAGE.sub("", message)
    lines = [
        line
        for line in message.strip().splitlines()
        if not line.startswith("Warning: ") and not line.strip().startswith("tip: ")
    ]
    out = []
    for line in lines:
        for prefix in ("Error: ", "error: "):
            if line.startswith(prefix):
                line = line[len(prefix):]
        out.append(line)
    return "\n".join(out).strip()


def from_message(message: str, kind: str = "") -> GymscopeError:
    """The exception for a core error: ``kind`` is the failing I/O error's, when there is one
    (``not_found``, ``is_a_directory``); the message gives the rest."""
    message = clean(message)
    quoted = _QUOTED.search(message)
    path = quoted.group("path") if quoted else None
    if kind == "not_found" or message.startswith("Input file not found"):
        return NotFoundError(message, path)
    if kind == "is_a_directory" or "is a directory" in message:
        return DirectoryError(message, path)
    where = _WHERE.search(message)
    if where:
        column = where.group("column")
        return DataError(message, where.group("path"), int(where.group("line")), column and int(column))
    if "the run has no field" in message:
        return QueryError(message)
    if message.startswith("the expression, column "):
        column = re.match(r"the expression, column (\d+)", message)
        return QueryError(message, column=int(column.group(1)) if column else None)
    return GymscopeError(message)
