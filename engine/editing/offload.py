"""Large results to files: the whole result goes to a new file and a pointer takes its place.

As VS Code Copilot Chat does with large tool results: JSON is written pretty-printed (easier
to read by line ranges) next to a schema inferred from it, and the pointer shows the schema.
Files go to ctxtop's data dir (``results/<fork session id>/``) or a directory the user names,
never among the agent's files; names come from the call id, cleaned so that no id from a log
can lead outside that directory. Nothing is written until ``write`` (after the plan is final).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxtop.engine.editing.atomic import write_new
from ctxtop.engine.editing.json_schema import schema_of
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.paths import data_dir
from ctxtop.engine.safety.secrets import SecretMasker

OFFLOADED_MARK = "[ctxtop: large tool result moved to a file"
SCHEMA_SHOWN_CHARS = 2000  # a longer schema is only named, not shown in the pointer
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def default_directory() -> Path:
    return data_dir() / "results"


def file_stem(call_id: str) -> str:
    """A plain file name from a call id: unsafe characters become ``_``, and a hash of the raw id
    keeps two ids that clean to the same text apart."""
    cleaned = _UNSAFE.sub("_", call_id).strip("_")[:80] or "result"
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{cleaned}-{digest}"


def _json_value(text: str) -> Any | None:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        return json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return None


@dataclass(slots=True)
class Offloader:
    """Plans files for large results under ``directory`` and writes them on ``write``."""

    directory: Path
    pending: dict[str, bytes] = field(default_factory=dict)  # file name -> contents
    # The files are exports of conversation text: known secret shapes are masked in them.
    masker: SecretMasker = field(default_factory=SecretMasker)

    def pointer(self, call_id: str, text: str, tokens: int) -> str:
        """The text that replaces ``text``; its file (and schema) are queued for ``write``."""
        stem = file_stem(call_id)
        text = self.masker.mask(text)
        value = _json_value(text)
        schema_text: str | None = None
        if value is not None:
            content = json.dumps(value, indent=2, ensure_ascii=False)
            try:
                schema_text = json.dumps(schema_of(value), ensure_ascii=False)
            except RecursionError:
                schema_text = None
            name = f"{stem}.json"
        else:
            content, name = text, f"{stem}.txt"
        self.pending[name] = content.encode("utf-8", "surrogatepass")
        lines = [
            f"{OFFLOADED_MARK} ({tokens} tokens, {len(self.pending[name]) // 1024} KB). "
            f"Read it at: {self.directory / name}"
        ]
        if schema_text is not None:
            schema_name = f"{stem}.schema.json"
            self.pending[schema_name] = schema_text.encode("utf-8")
            lines.append(f"Its JSON schema is at: {self.directory / schema_name}")
            if len(schema_text) <= SCHEMA_SHOWN_CHARS:
                lines.append(f"Schema: {schema_text}")
        return "\n".join(lines) + "]"

    def write(self) -> list[Path]:
        """Write the queued files, each a new file created atomically; their paths."""
        if not self.pending:
            return []
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as error:  # the results dir named is a file, or /proc/self
            raise CtxtopError(
                f"{self.directory.parent}: cannot make a directory for large results in it "
                f"({error.strerror or error}); nothing was written"
            ) from None
        root = self.directory.resolve()
        written: list[Path] = []
        try:
            for name, data in self.pending.items():
                path = write_new(self.directory, name, data, role="result")
                written.append(path)
                if path.resolve().parent != root:  # cannot happen with clean names; never allowed
                    raise CtxtopError(f"{path}: outside {root}, removed")
        except CtxtopError:
            for path in written:  # all the files or none (a full disk may stop half-way)
                with contextlib.suppress(OSError):
                    path.unlink()
            raise
        self.pending.clear()
        return written
