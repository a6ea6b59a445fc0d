"""``?``: the keys of the screen it is pressed on, and what its marks mean (the dashboard's:
the gauge, sections and prompt tree; the sessions table's: its columns and states)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEY_NAMES = {"question_mark": "?", "slash": "/", "escape": "esc"}
Keys = list[tuple[str, str]]


def binding_keys(bindings: Iterable[BindingType], titles: dict[str, str] | None = None) -> Keys:
    """(key, what it does) of each binding, once a key (the first binding of a key is the one
    that acts when it may): its description, or ``titles``' by action name."""
    keys: Keys = []
    seen: set[str] = set()
    for binding in bindings:
        if not isinstance(binding, Binding) or binding.key in seen:
            continue
        seen.add(binding.key)
        titles = titles or {}
        name = binding.action.split("(", 1)[0]  # sort(1): by its own, else by the action's
        description = titles.get(binding.action, titles.get(name, binding.description))
        keys.append((", ".join(KEY_NAMES.get(k, k) for k in binding.key.split(",")), description))
    return keys


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
  rules give it; red: over its budget. b: what-if window (the
  window in tokens; empty: the model's own)
Events
  enter on a compaction: what it held, kept and dropped, and
  the user messages its summary forgot (ctxtop compactions);
  there r forks the session from just before it, w with its
  summary and the forgotten messages re-added (ctxtop restore)
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

    def __init__(self, keys: Keys, title: str = "ctxtop keys", legend: str = LEGEND) -> None:
        super().__init__()
        self.keys = keys
        self.title = title
        self.legend = legend

    def compose(self) -> ComposeResult:
        text = Text()
        text.append(f"{self.title}\n\n", style="bold")
        for key, description in self.keys:
            text.append(f"  {key:<10}", style="bold")
            text.append(f"{description}\n")
        text.append(self.legend)
        with VerticalScroll() as scroll:
            scroll.border_title = "Help (esc closes)"
            # At 80x24 the legend is below the fold: say that it is there.
            scroll.border_subtitle = "↑↓ pgup pgdn: scroll"
            yield Static(text)
