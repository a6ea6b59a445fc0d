"""Oracle cases read from ``ctxtop render --jsonl``'s input, one JSON object a line.

The generator writes each tree once per budget, on consecutive lines, so a tree is parsed and
loaded only when it differs from the previous line's. A line is read by msgspec with its fields
left as JSON text: the tree is compared with the previous one as text, decoded only when it
changed, and that text is what its remembered counts are found by (as a tree file's bytes are).
A line msgspec refuses (NaN, 1e400 and lone surrogates, which the stdlib reads; a line that is
not an object with a tree) is read by ``json.loads`` as before, so every case reads the same.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from ctxtop.engine.render.count_memory import tree_identity
from ctxtop.engine.render.loader import TreeDocument, document_from_data

_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_VALUE = msgspec.json.Decoder()


class CaseReader:
    """Reads cases in order, remembering the last tree."""

    def __init__(self) -> None:
        self._text: bytes | None = None  # the last tree's JSON text (read by msgspec)
        self._tree: Any = None  # or the last tree's value (read by json.loads)
        self._identity = b""
        self._document: TreeDocument | None = None

    def read(self, line: str) -> tuple[dict[str, Any], TreeDocument]:
        """The case's fields (the tree left out when read by msgspec) and its tree's
        document; raises what ``json.loads`` and ``document_from_data`` raise."""
        try:
            fields = _FIELDS.decode(line)
            text = fields.pop("tree", None)
            case = {name: _VALUE.decode(value) for name, value in fields.items()}
            changed = self._document is None or text != self._text
            tree = _VALUE.decode(text) if changed and text is not None else None
        except msgspec.MsgspecError:
            text = None
        if text is None:
            return self._read_slowly(line)
        if changed:
            self._forget()
            self._document = document_from_data(tree)
            self._text = self._identity = bytes(text)
        assert self._document is not None
        return case, self._document

    def _read_slowly(self, line: str) -> tuple[dict[str, Any], TreeDocument]:
        case = json.loads(line)
        tree = case["tree"] if isinstance(case, dict) else None
        if self._document is None or self._text is not None or tree != self._tree:
            self._forget()
            self._document, self._tree = document_from_data(tree), tree
        return case, self._document

    def _forget(self) -> None:
        self._document, self._text, self._tree, self._identity = None, None, None, b""

    def identity(self) -> bytes:
        """What the current tree's remembered counts are found by (count_memory.recall)."""
        if not self._identity:
            self._identity = tree_identity(self._tree)
        return self._identity
