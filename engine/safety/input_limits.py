"""Reading a command's input with a size limit: a file (a regular file only) or stdin.

``ctxtop count /dev/zero`` grew to 15 GB before this; a named pipe with no writer made it wait
forever. Every command that reads a whole input reads at most ``input_limit()`` bytes (64 MB,
``CTXTOP_MAX_INPUT_MB`` changes it) and refuses devices, named pipes and directories with one
line, as ``ctxtop report`` does.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ctxtop.engine.errors import CtxtopError, InputError
from ctxtop.engine.files import open_regular

LIMIT_VARIABLE = "CTXTOP_MAX_INPUT_MB"
DEFAULT_LIMIT_MB = 64
STDIN = "-"


def input_limit() -> int:
    """The limit in bytes: ``CTXTOP_MAX_INPUT_MB`` (a positive whole number) or 64 MB."""
    raw = os.environ.get(LIMIT_VARIABLE)
    if raw is None or not raw.strip():
        return DEFAULT_LIMIT_MB << 20
    try:
        megabytes = int(raw)
    except ValueError:
        megabytes = 0
    if megabytes <= 0:
        raise CtxtopError(f"{LIMIT_VARIABLE} must be a positive number of megabytes, not {raw!r}")
    return megabytes << 20


def too_large(path: str, limit: int, line: int | None = None) -> InputError:
    """The error for an input over ``limit`` bytes (the hint only where the variable applies)."""
    hint = f" ({LIMIT_VARIABLE} raises it)" if limit == input_limit() else ""
    return InputError(path, f"over {limit >> 20} MB, the input limit{hint}; not read", line)


def read_input(path: str, limit: int | None = None) -> bytes:
    """The bytes of ``path`` (``-``: stdin), at most ``limit`` (default ``input_limit()``)."""
    limit = input_limit() if limit is None else limit
    name = "stdin" if path == STDIN else path
    try:
        if path == STDIN:
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(open_regular(Path(path)), "rb") as handle:  # never waits on a named pipe
                data = handle.read(limit + 1)
    except OSError as error:
        raise InputError(name, f"cannot read: {error.strerror or error}") from None
    if len(data) > limit:
        raise too_large(name, limit)
    return data


def read_text(path: str, limit: int | None = None) -> str:
    """``read_input`` decoded as UTF-8; an error names the line of the first bad byte."""
    data = read_input(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        name = "stdin" if path == STDIN else path
        raise InputError(name, "not valid UTF-8", line) from None
