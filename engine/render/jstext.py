"""JavaScript text semantics the library relies on: its whitespace class and ``\\s+`` splitting.

Python's ``\\s`` differs from JavaScript's on ``\\x1c-\\x1f``, ``\\x85`` and ``\\ufeff``, so the
JS class is spelled out; user ``breakOn`` regexes are translated to use it too.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ctxtop.engine.render.elements import JsRegex

JS_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_NON_SPACE_RUN = re.compile(f"[^{JS_SPACE}]+")
_HAS_NON_SPACE = re.compile(f"[^{JS_SPACE}]")
WHITESPACE_RUN = re.compile(f"[{JS_SPACE}]+")


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness (empty lists and objects are truthy)."""
    if value is None or value is False:
        return False
    if isinstance(value, str):
        return value != ""
    if isinstance(value, int | float):
        return value == value and value != 0
    return True


def js_number(value: float) -> str:
    """A number as JavaScript prints it in a template string."""
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value == int(value) and abs(value) < 1e21:
            return str(int(value))
    return str(value)


def word_count(text: str) -> int:
    """Matches of JavaScript ``/\\S+/g``."""
    if not text:
        return 0
    return len(_NON_SPACE_RUN.findall(text))


def is_blank(text: str) -> bool:
    """JavaScript ``!/\\S/.test(text)``."""
    return _HAS_NON_SPACE.search(text) is None


_ESCAPES = {
    "s": f"[{JS_SPACE}]",
    "S": f"[^{JS_SPACE}]",
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[A-Za-z0-9_]",
    "W": "[^A-Za-z0-9_]",
}


def _translate(source: str) -> str:
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(source):
        char = source[i]
        if char == "\\" and i + 1 < len(source):
            escaped = source[i + 1]
            if escaped in _ESCAPES:
                replacement = _ESCAPES[escaped]
                # inside [...] only the class body fits; negated classes cannot be nested
                if in_class and replacement.startswith("[^"):
                    raise ValueError(f"\\{escaped} inside a character class is not supported")
                out.append(replacement[1:-1] if in_class else replacement)
            else:
                out.append(char + escaped)
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        out.append(char)
        i += 1
    return "".join(out)


def js_regex(source: str, flags: str = "g") -> JsRegex:
    """A JavaScript regex as a Python pattern (``i``, ``m``, ``s`` translated; ``g`` kept)."""
    py_flags = 0
    for flag in flags:
        if flag == "i":
            py_flags |= re.IGNORECASE
        elif flag == "m":
            py_flags |= re.MULTILINE
        elif flag == "s":
            py_flags |= re.DOTALL
        elif flag not in "guyd":
            raise ValueError(f"unsupported regex flag {flag!r}")
    return JsRegex(source, flags, re.compile(_translate(source), py_flags))
