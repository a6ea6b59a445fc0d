"""Log text printed to a terminal: control characters shown, never obeyed.

A log's strings (a model name, a title, a tool's name, a cwd) can hold escape sequences that
clear the screen, set the window title, write the clipboard (OSC 52) or reorder text (bidi
overrides). The text commands print them as visible escapes instead: ``\\x1b``, ``\\u202e``.
"""

from __future__ import annotations

import re

# C0 controls but newline and tab, DEL, C1 controls, bidi embeddings/overrides/isolates, and
# the line/paragraph separators some terminals treat as newlines.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character (but newline and tab) written out visibly."""
    return _CONTROL.sub(_visible, text)


def one_line(text: str) -> str:
    """``printable``, newlines and tabs written out too: an error message stays one line even
    when the file name in it holds a newline."""
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")


def without_controls(text: str) -> str:
    """``text`` with every control character (but newline and tab) removed: for text ctxtop
    writes into an agent's session, where a visible ``\\x1b`` would be noise."""
    return _CONTROL.sub("", text)
