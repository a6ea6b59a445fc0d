"""Sections of the prompt by layout profile: each one's tokens against its flex budget, as bars.

A figure's mark says where it comes from (``≈`` tokenizer estimate, ``*`` inferred, ``~``
calibrated); a section over its budget is drawn in the critical colour. Below them, when the
agent logged its own split of the last prompt (VS Code Copilot Chat), that split: each part's
share of the prompt as the agent counted it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.widgets import Static

from ctxtop.engine.analysis.snapshot import Analysis, Section
from ctxtop.engine.sessions.prompt_parts import AgentPart
from ctxtop.tui import format as fmt

LABEL_WIDTH = 12  # at least
MIN_BAR = 5
FIGURE_WIDTH = 15
SHORT_FIGURE_WIDTH = 8
# Not parts of the prompt: what the agent keeps free and what is left.
SPARE = ("autocompact_buffer", "output_reserve", "free")
NOT_LOGGED = "not_logged"
DIFFERENCE = "difference"
EXTRA = (NOT_LOGGED, DIFFERENCE)  # rows the panel adds: no budget of their own
SHOWN_DIFFERENCE = 100  # tokens: less is within the rounding of the sections' figures
# The agent's count less ctxtop's estimates of the parts (signed): the panels' name for it too.
TOKENIZER_DIFFERENCE = "tokenizer difference"
# Before the agent's own split of the last prompt (the report's text says it on each row).
AGENT_SPLIT = "agent's split:"


def shown_sections(analysis: Analysis) -> list[Section]:
    """The analysis' sections, and a row for what they do not account for, so that the parts
    add up to the context figure the gauge shows: after a compaction, the part of the agent's
    "after" the log does not show yet (it writes the summary right after); else the difference
    between the agent's count and ctxtop's tokenizer estimates since the first request."""
    sections = list(analysis.sections)
    residual = analysis.residual_tokens
    row = None
    if analysis.context_source == "compaction" and residual > 0:
        row = Section(
            NOT_LOGGED, "not in the log yet (after compaction)", 0, residual, 0.0, "inferred"
        )
    elif analysis.context_source != "estimated" and abs(residual) >= SHOWN_DIFFERENCE:
        # Short: a label with a parenthesis longer than the others' would shorten them all.
        row = Section(DIFFERENCE, TOKENIZER_DIFFERENCE, 0, residual, 0.0, "inferred")
    if row is not None:
        parts = [index for index, section in enumerate(sections) if section.name not in SPARE]
        sections.insert(parts[-1] + 1 if parts else 0, row)
    return sections


def wrapped(label: str, width: int) -> list[str]:
    """``label`` in lines of ``width`` at most, broken between words where it can be."""
    lines: list[str] = []
    while len(label) > width:
        cut = label.rfind(" ", 0, width + 1)
        cut = cut if cut > 0 else width
        lines.append(label[:cut].rstrip())
        label = label[cut:].lstrip()
    return [*lines, label]


def split_lines(split: tuple[AgentPart, ...], width: int) -> list[str]:
    """The agent's split in as few lines of ``width`` as whole parts allow (first, so that it
    is on screen however few rows the panel has): "agent's split: Messages 555* (2.3%) · …"
    (``*``: the agent's share of the reported prompt, inferred)."""
    lines: list[str] = []
    line = AGENT_SPLIT
    for number, part in enumerate(split):
        label = fmt.shown(part.label or part.category)
        item = f"{label} {fmt.tokens(part.tokens)}* ({part.percent:g}%)"  # *: inferred
        joined = f"{line} {item}" if not number else f"{line} · {item}"
        if len(joined) > width and number:
            lines.append(line)
            joined = f"  {item}"
        line = joined
    return [*lines, line] if split else []


def signed(section: Section) -> str:
    """A section's figure; the difference row's with its sign."""
    if section.name != DIFFERENCE:
        return fmt.tokens(section.tokens)
    return fmt.signed_tokens(section.tokens)


class SectionsPanel(Static):
    DEFAULT_CSS = """
    SectionsPanel { border: round $primary; height: 1fr; padding: 0 1; }
    SectionsPanel.lagging { text-opacity: 60%; }
    SectionsPanel > .sections--used { color: $success; }
    SectionsPanel > .sections--over { color: $error; }
    SectionsPanel > .sections--spare { color: $foreground 40%; }
    SectionsPanel > .sections--budget { color: $foreground 25%; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "sections--used",
        "sections--over",
        "sections--spare",
        "sections--budget",
    }

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.border_title = "Sections"
        self.analysis: Analysis | None = None
        self.problem: str | None = None
        self.agent_split: tuple[AgentPart, ...] = ()
        self.budget_text = ""

    def show(
        self,
        analysis: Analysis | None,
        problem: str | None = None,
        foreign: bool = False,
        agent_split: tuple[AgentPart, ...] = (),
    ) -> None:
        """``foreign``: the profile is not the one of the agent that wrote the session;
        ``agent_split``: the agent's own split of the last prompt (empty: it logged none)."""
        if (
            analysis is self.analysis
            and problem == self.problem
            and agent_split == self.agent_split
        ):
            return
        self.analysis, self.problem, self.agent_split = analysis, problem, agent_split
        if analysis is not None:
            profile = fmt.in_markup(analysis.profile)
            self.border_title = f"Sections · {profile} profile" + (
                ", not the agent's" if foreign else ""
            )
            budget = f"budget {fmt.tokens(analysis.budget)}"
            if analysis.budget_overridden:  # b: the window the user asked about, less the reserve
                budget = f"what-if window {fmt.tokens(analysis.thresholds.window)} · {budget}"
            self.budget_text = budget
            if not self.has_class("lagging"):
                self.border_subtitle = budget
        self.refresh()

    def mark_lagging(self, lagging: bool) -> None:
        """The figures on screen are newer than this analysis (it is on its way): dimmed, and
        the subtitle says so."""
        if lagging == self.has_class("lagging"):
            return
        self.set_class(lagging, "lagging")
        self.border_subtitle = "analysing new lines …" if lagging else self.budget_text

    def render(self) -> Text:
        analysis = self.analysis
        if analysis is None:
            return Text(self.problem or "analysing …", no_wrap=True, overflow="ellipsis")
        # Whole labels if they fit beside a short bar; else without their parenthesis (the
        # mark says "inferred"); else without the budgets (the bar is the share of it).
        sections = shown_sections(analysis)
        labels = {section.name: fmt.shown(section.label) for section in sections}
        budgets = True
        room = self.content_size.width - FIGURE_WIDTH - 2
        if max(map(len, labels.values())) > room - MIN_BAR:
            labels = {name: label.split(" (")[0] for name, label in labels.items()}
        if max(map(len, labels.values())) > room - MIN_BAR:
            budgets = False
            room = self.content_size.width - SHORT_FIGURE_WIDTH - 2
        label_width = max(LABEL_WIDTH, min(max(map(len, labels.values())), room - MIN_BAR))
        width = max(3, room - label_width)
        figure_width = FIGURE_WIDTH if budgets else SHORT_FIGURE_WIDTH
        used = self.get_component_rich_style("sections--used")
        over = self.get_component_rich_style("sections--over")
        spare = self.get_component_rich_style("sections--spare")
        empty = self.get_component_rich_style("sections--budget")
        lines = [
            Text(line, style=spare, no_wrap=True, overflow="ellipsis")
            for line in split_lines(self.agent_split, self.content_size.width)
        ]
        for section in sections:
            # A label longer than its column goes on under it (a profile's own labels, e.g.
            # Codex's, can be long): never cut.
            label, *rest = wrapped(labels[section.name], label_width)
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(f"{label:<{label_width}} ")
            if section.name in SPARE or section.name in EXTRA:
                # Not a part with a budget of its own: its share of the whole budget. A
                # negative difference (the rows above count more than the agent) fills nothing.
                tokens = max(section.tokens, 0)
                fill = tokens / analysis.budget if analysis.budget else 0.0
                style = spare
            else:
                # Anything in a section with no budget is over it.
                budget = section.budget
                fill = section.tokens / budget if budget else 2.0 * bool(section.tokens)
                style = over if fill > 1 else used
            cells = min(width, round(fill * width))
            if section.tokens > 0 and not cells:
                cells = 1
            line.append("█" * cells, style=style)
            line.append("·" * (width - cells), style=empty)
            figure = f"{signed(section)}{fmt.mark(section.provenance)}"
            if section.name not in (*SPARE, *EXTRA) and budgets:
                figure += f" / {fmt.tokens(section.budget)}"
            line.append(f" {figure:>{figure_width}}")
            lines.append(line)
            lines.extend(Text(f"  {more}", no_wrap=True, overflow="ellipsis") for more in rest)
        if analysis.pruned:
            gone = sum(item.tokens for item in analysis.pruned)
            lines.append(
                Text(f"pruned at this budget: {len(analysis.pruned)} ({fmt.tokens(gone)}≈)")
            )
        return Text("\n", no_wrap=True, overflow="ellipsis").join(lines)
