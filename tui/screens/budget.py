"""``b``: the what-if window: analyse as if the model's window held this many tokens."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ctxtop.engine.tokens.amount import positive_amount
from ctxtop.tui import format as fmt
from ctxtop.tui.components.count_input import CountInput

# What the screen returns: a token count, or MODELS_OWN for the model's own window.
MODELS_OWN = 0


def parse_tokens(text: str) -> int | None:
    """ "20000", "20,000", "20k", "1.5m" -> tokens; "" -> MODELS_OWN; anything else None."""
    return MODELS_OWN if not text.strip() else positive_amount(text)


class BudgetScreen(ModalScreen[int | None]):
    """Dismissed with a token count, MODELS_OWN, or None when cancelled."""

    DEFAULT_CSS = """
    BudgetScreen { align: center middle; }
    BudgetScreen > Vertical {
        width: 60; max-width: 95%; height: auto; border: round $primary;
        background: $surface; padding: 0 1;
    }
    BudgetScreen #budget-error { color: $error; height: auto; }
    """
    AUTO_FOCUS = "#budget-input"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, current: int | None) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "What-if window"
            yield Static("The model's window in tokens (e.g. 64000 or 64k); empty: its own.")
            yield CountInput(
                value="" if self.current is None else str(self.current),
                placeholder="the model's own window",
                id="budget-input",
            )
            yield Static("", id="budget-error")

    @on(Input.Submitted, "#budget-input")
    def _submitted(self, event: Input.Submitted) -> None:
        tokens = parse_tokens(event.value)
        if tokens is None:
            self.query_one("#budget-error", Static).update(  # what was typed: never markup
                fmt.plain(f"not a token count: {event.value!r} (a positive number, e.g. 64k)")
            )
            return
        self.dismiss(tokens)

    def action_cancel(self) -> None:
        self.dismiss(None)
