"""Cyclic garbage collection held off while prompt trees are read, rendered and written.

A render builds tens of thousands of long-lived objects (elements, nodes, messages) and frees
almost none until it ends, so the collector's passes over them find nothing: on a 2,000-round
agent tree they cost 10-20 % of the render and half of writing its JSON. Nodes point to their
parents, so what a render leaves is cyclic garbage: ``collected_between`` collects it before
the next case of a stream.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

Item = TypeVar("Item")


@contextmanager
def collections_paused(*, age_on_exit: bool = False) -> Iterator[None]:
    """No automatic collection inside; the previous setting comes back on the way out.

    ``age_on_exit``: what exists then is first moved to the oldest generation (``gc.freeze``
    then ``gc.unfreeze``). Left young, all of it would be walked by the very next automatic
    pass (0.1 s after a 2,000-round tree), which a command about to exit need not pay; the
    next full collection still frees its garbage.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if age_on_exit:
            gc.freeze()
            gc.unfreeze()
        if collecting:
            gc.enable()


def collected_between(items: Iterable[Item]) -> Iterator[Item]:
    """``items`` with no automatic collection while each is handled; the garbage of one is
    collected before the next is handed out, none after the last.

    The objects that exist when the stream starts (modules, functions) are set aside for its
    duration (``gc.freeze``), so each collection walks only what the cases made.
    """
    with collections_paused(age_on_exit=True):
        gc.freeze()
        for number, item in enumerate(items):
            if number:
                gc.collect()
            yield item


def left_to_exit() -> None:
    """When the interpreter exits, what is still alive is left to the operating system.

    Python's last collection at exit walks every object left (0.05-0.1 s after a 2,000-round
    tree) only to free memory the process gives back anyway; frozen objects are not walked.
    Registered as an exit handler, so a caller that goes on (a test) keeps collecting.
    """
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
