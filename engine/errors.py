"""Errors that the CLI prints as one line, without a traceback."""

from __future__ import annotations


class CtxtopError(Exception):
    """A user-facing failure: its message is one line that says what to do."""


class InputError(CtxtopError):
    """Bad input: the message names the file and, where known, the line."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
