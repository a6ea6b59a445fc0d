"""Skeleton benchmark: outline size and time per test source file, and on files 10x and 40x
as long (the same file repeated). Prints figures; it asserts nothing.

Run: python bench/skeleton.py
"""

from __future__ import annotations

import time
from pathlib import Path

from ctxtop.engine.editing.skeleton import language_for_path, skeleton
from ctxtop.engine.tokens import get_encoding

SOURCES = Path(__file__).resolve().parents[1] / "tests" / "editing" / "skeleton_sources"
BUDGET_SHARE = 4  # outline budget: a quarter of the file, as ctxtop edit's default 25 %


def main() -> None:
    count = get_encoding("o200k_base").count
    header = ("lines", "tokens", "budget", "outline", "shrinks", "ms")
    print(f"{'file':<26} " + " ".join(f"{name:>7}" for name in header))
    for path in sorted(SOURCES.iterdir()):
        language = language_for_path(path.name)
        if language is None:
            continue
        text = path.read_text(encoding="utf-8")
        for times in (1, 10, 40):
            big = text * times
            tokens = count(big)
            budget = tokens // BUDGET_SHARE
            started = time.perf_counter()
            outline = skeleton(big, language, budget, count)
            elapsed = (time.perf_counter() - started) * 1000
            label = path.name if times == 1 else f"  x{times}"
            print(
                f"{label:<26} {big.count(chr(10)):>7} {tokens:>7} {budget:>7} "
                f"{outline.tokens:>7} {outline.shrinks:>7} {elapsed:>7.1f}"
            )


if __name__ == "__main__":
    main()
