"""An agent's typed record stream: each decoded line of its log made one typed entry that says
what the line is to the agent (its kind, and the fields its readers use), by the agent's own
``records.entry``. The session reader, the fork writer and the compaction source all take
these entries, so a format's records are interpreted in one place. An entry keeps the line's
value as the agent wrote it (its ``record``): a fork re-serialises every field of it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

# (a line's decoded value, its 1-based line number) -> the agent's entry for it
EntryOf = Callable[[Any, int], Any]


def typed(records: Sequence[Any], entry_of: EntryOf) -> list[Any]:
    """``records`` (``session_records``: each line's value, or its bytes when it is blank or
    no JSON) with every value made its entry; a line kept as bytes stays bytes."""
    return [
        record if type(record) is bytes else entry_of(record, line)
        for line, record in enumerate(records, 1)
    ]
