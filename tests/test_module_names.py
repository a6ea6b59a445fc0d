"""One vocabulary: no two modules of one name in different packages, but those of one role that
every agent's folder (or its base) has, and the editing vocabulary says turn, not cycle."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The same role in each agent's folder, and the base class of that role.
SAME_ROLE = {
    "__init__",
    "__main__",
    "plugin",
    "reader",
    "writer",
    "source",
    "rules",
    "settings",
    "entries",  # an agent's typed record stream, and engine/sessions/entries.py its base
}


def test_module_names_say_which_module() -> None:
    places: dict[str, list[str]] = defaultdict(list)
    for folder in ("engine", "tui"):
        for path in (ROOT / folder).rglob("*.py"):
            places[path.stem].append(path.relative_to(ROOT).as_posix())
    repeated = {
        name: sorted(paths)
        for name, paths in places.items()
        if len(paths) > 1 and name not in SAME_ROLE
    }
    assert repeated == {}


def test_a_user_turn_is_a_turn_in_code() -> None:
    cycles = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("engine", "tui")
        for path in (ROOT / folder).rglob("*.py")
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if re.search(r"\b(keep_cycles|cycles|cycle)\b", line.split("#", 1)[0])
        and "CodeCompanion" not in line
        and "--keep-cycles" not in line
    ]
    assert cycles == []
