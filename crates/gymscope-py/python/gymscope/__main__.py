"""The wheel's ``gymscope`` command, and ``python -m gymscope``: the command line, served by the
extension (one copy of the core in the wheel; docs/python.md)."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    from . import _native

    # The command's own Ctrl-C, as the binary has it: the process ends (its temporary files are
    # removed by its handler), where Python's would wait for the call to return.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    sys.exit(_native.main(["gymscope", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
