"""What replaces a file, buffer or image attachment in a kept message: what to re-read."""

from __future__ import annotations

MARK = "[ctxtop: "


def file_placeholder(name: str, what: str = "file") -> str:
    return (
        f"{MARK}the attached {what} {name} was removed at compaction. "
        f"Read {name} again if you need its content.]"
    )


def image_placeholder(detail: str = "") -> str:
    about = f" ({detail})" if detail else ""
    return (
        f"{MARK}an image{about} was removed at compaction. "
        "Ask the user to attach it again if you need to see it.]"
    )
