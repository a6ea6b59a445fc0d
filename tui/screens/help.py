"""``?``: the keys, and what the marks on the gauge, sections and prompt tree mean."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

LEGEND = """
Gauge
  █ used: green; yellow past the editing trigger; red past the
    compaction trigger or the agent's auto-compact point
  · free   ▒ the buffer the agent keeps free
  E editing trigger   C compaction trigger   A auto-compact point
  cache warm m:ss: until the prompt cache expires (5 min, or 1 h
    from the log's 1-hour writes or Claude Code's settings); next:
    the cached prefix read now, and written again after expiry
Figures
  no mark: reported by the API    ~ calibrated
  ≈ estimated by the tokenizer    * inferred (the rest of a total)
  = measured: counted from the request itself (ctxtop proxy)
  ≡ logged: counted from the prompt text the log holds
  ? unknown (no request reported a figure yet)
Fill per request
  ~N requests left (low–high) before the agent compacts, from the
  growth of the latest requests (mean, and mean ± one deviation)
Sections (layout profile: p)
  each section's tokens against the budget the profile's flex
  rules give it; red: over its budget. b: what-if budget (the
  window in tokens; empty: the model's own)
Prompt tree (v; / searches, enter: next match, n: next)
  tokens, pN priority (lower goes first), ⚑ a cache breakpoint
  follows this node, ✂ struck through: pruned at this budget
"""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%; max-width: 100; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    """
    AUTO_FOCUS = "*"  # the scroll view, for the arrow keys (the app's own is not on this screen)
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        text = Text()
        text.append("ctxtop keys\n\n", style="bold")
        for key, description in self.keys:
            text.append(f"  {key:<10}", style="bold")
            text.append(f"{description}\n")
        text.append(LEGEND)
        with VerticalScroll() as scroll:
            scroll.border_title = "Help (esc closes)"
            # At 80x24 the legend is below the fold: say that it is there.
            scroll.border_subtitle = "↑↓ pgup pgdn: scroll"
            yield Static(text)
