"""A session's lines decoded: one line's JSON value (``decode_line``, the session reader's), and
every line of a session's bytes at once (``line_records``), which the session reader, the fork
writer and the compaction source of one loaded session share (engine/forks/transaction.py)."""

from __future__ import annotations

import json
from typing import Any

import msgspec

_decode = json.JSONDecoder().decode
# msgspec decodes a line in about half the time of the stdlib (a 100 MB log: bench/cold_report.py).
# It refuses what the stdlib takes (NaN, lone surrogate escapes, numbers beyond a float, a BOM):
# such a line, and every bad one, goes through the stdlib, so the values and the reasons given
# for a bad line are the stdlib's.
fast_decode = msgspec.json.Decoder().decode


def decode_line(raw: bytes) -> tuple[Any, str | None]:
    """The JSON value of one line, or (None, reason) when it can't be read."""
    try:
        return fast_decode(raw), None
    except (msgspec.DecodeError, ValueError, RecursionError):
        pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"invalid UTF-8 at byte {error.start}"
    try:
        # The decoder skips surrounding whitespace ("\r" of CRLF included) on its own.
        return _decode(text), None
    except json.JSONDecodeError as error:
        if text.isspace() or not text:
            return None, None  # a blank line
        return None, f"invalid JSON: {error.msg} (column {error.colno})"
    except RecursionError:
        return None, "invalid JSON: nested too deeply"


def opens_document(first: bytes, reason: str | None) -> bool:
    """Whether a file whose first line is ``first`` (``reason``: why it does not decode, None
    when it does) is one JSON document rather than JSON lines: an array, or a ``{`` line that is
    no whole value (pretty-printed)."""
    start = first.lstrip()
    return start.startswith(b"[") or (start.startswith(b"{") and reason is not None)


def line_record(raw: bytes) -> Any:
    """One line as the fork writer keeps it: its JSON value, or its raw bytes when it is blank or
    not JSON (a fork keeps such a line byte for byte)."""
    return _kept(raw, *decode_line(raw))


def _kept(raw: bytes, value: Any, reason: str | None) -> Any:
    return raw if reason is not None or (value is None and not raw.strip()) else value


def _lines(data: bytes) -> list[bytes]:
    """``data`` split at each newline; nothing for what follows the last one when it is empty."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def line_records(data: bytes) -> list[Any]:
    """Every line of ``data`` as ``line_record`` keeps it: ``records[n - 1]`` is line ``n``."""
    return [line_record(raw) for raw in _lines(data)]


def session_records(data: bytes) -> list[Any] | None:
    """``line_records`` of a session's bytes, each line decoded once; None for a file that is
    one JSON document (``opens_document``: told from its first line, before the rest is
    decoded), which the reader and the writer decode whole."""
    lines = _lines(data)
    if not lines:
        return []
    first = lines[0]
    value, reason = decode_line(first)
    if opens_document(first, reason):
        return None
    return [_kept(first, value, reason), *map(line_record, lines[1:])]
