"""``enter`` on a compaction in the Events panel: what it held just before, kept and dropped,
and how much of each user message its summary carries (the inspector's result,
engine/forks/compactions.py, in the words of ``ctxtop compactions``); ``r`` and ``w`` write
the forks of ``ctxtop restore`` (from just before it; its summary with the forgotten
instructions re-added)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.forks.compaction_output import inspection_lines
from ctxtop.engine.forks.compactions import CompactionHistory, inspect_file
from ctxtop.engine.forks.restore import FORGOTTEN, RestoreDetails, restore_session
from ctxtop.engine.forks.transaction import Outcome
from ctxtop.engine.sessions.model import Compaction
from ctxtop.engine.tokens.short import short_tokens
from ctxtop.tui import format as fmt


def compaction_view(history: CompactionHistory, line: int) -> Text:
    """The compaction logged at ``line``, and how the summaries grew before it."""
    found = [item for item in history.compactions if item.line == line]
    if not found:
        return Text(f"no compaction at line {line} in this sample of the session")
    item = found[0]
    lines = inspection_lines(item, str(history.path), history.restore_refused is None)
    text = Text()
    text.append(fmt.shown(lines[0]) + "\n", style="bold")
    for shown in lines[1:]:
        text.append(fmt.shown(shown) + "\n", style="bold red" if "forgotten" in shown else "")
    growth = [s for s in history.summary_growth[: item.number] if s is not None]
    if len(growth) > 1:
        text.append("summaries so far: " + " -> ".join(f"{short_tokens(s)}≈" for s in growth))
        text.append("\n")
    if history.restore_refused:
        text.append(fmt.shown(history.restore_refused), style="dim")
    return text


class CompactionScreen(ModalScreen[Outcome[RestoreDetails] | None]):
    """Dismissed with the outcome of a restore fork it wrote (None: closed)."""

    DEFAULT_CSS = """
    CompactionScreen { align: center middle; }
    CompactionScreen > VerticalScroll {
        width: 95%; max-width: 140; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    """
    AUTO_FOCUS = "*"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close"),
        Binding("r", "restore", "Fork from before it"),
        Binding("w", "restore_forgotten", "Fork re-adding forgotten"),
    ]

    def __init__(
        self, path: Path, line: int, upto: int | None, decided: Sequence[Compaction]
    ) -> None:
        super().__init__()
        self.path, self.line, self.upto, self.decided = path, line, upto, tuple(decided)
        self.body = Static(Text(f"inspecting the compaction at line {line} …"), id="body")
        self.history: CompactionHistory | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = f"Compaction at line {self.line} (esc closes)"
            scroll.border_subtitle = (
                "r: fork from before it · w: with the forgotten re-added · ↑↓ scroll"
            )
            yield self.body

    def on_mount(self) -> None:
        self.inspect()

    @work(thread=True, exclusive=True)
    def inspect(self) -> None:
        try:
            history = inspect_file(self.path, self.upto, self.decided)
            shown = compaction_view(history, self.line)
        except CtxtopError as error:
            history, shown = None, Text(fmt.shown(str(error)), style="red")
        self.app.call_from_thread(self._shown, history, shown)

    def _shown(self, history: CompactionHistory | None, shown: Text) -> None:
        self.history = history
        self.body.update(shown)

    def _number(self) -> int | None:
        history = self.history
        found = [c for c in history.compactions if c.line == self.line] if history else []
        return found[0].number if found else None

    def action_restore(self) -> None:
        number = self._number()
        if number is not None:
            self.restore(number, ())

    def action_restore_forgotten(self) -> None:
        number = self._number()
        if number is None or self.history is None:
            return
        if not self.history.compactions[number - 1].forgotten:
            self.notify("Its summary forgot no instruction: nothing to re-add.")
            return
        self.restore(number, (FORGOTTEN,))

    @work(thread=True, exclusive=True, group="restore")
    def restore(self, number: int, wanted: tuple[str, ...]) -> None:
        """``ctxtop restore``'s fork, written; the screen closes with its outcome."""
        try:
            outcome = restore_session(self.path, number, wanted)
        except CtxtopError as error:
            self.app.call_from_thread(
                self.notify, fmt.shown(str(error)), severity="error", markup=False
            )
            return
        self.app.call_from_thread(self.dismiss, outcome)
