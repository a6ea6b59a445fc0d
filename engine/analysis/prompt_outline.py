"""The prompt as a tree to browse: sections > turns (or tool-call rounds) > messages > tools.

Built from the session's context and its ``Analysis`` (in the same thread, after the analysis has
counted every block): each node carries its tokens, the priority of the prompt node it is, whether
the layout prunes it at the analysed budget (pruned nodes take their contents with them) and the
cache breakpoints that follow it; a tool result ctxtop's editing cleared (a fork's) is marked
``cleared``. Node ids stay the same across updates, so a view can keep what
was expanded.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ctxtop.engine.analysis.profiles import Profile, SectionSpec
from ctxtop.engine.analysis.sections import content_names, is_typed_user_message
from ctxtop.engine.analysis.snapshot import Analysis, Breakpoint
from ctxtop.engine.editing.placeholder import cleared_by_ctxtop
from ctxtop.engine.sessions.ledger import Ledger, encoding_for
from ctxtop.engine.sessions.model import Block, Message, SessionState, ToolCall
from ctxtop.engine.sessions.tokenizer_factor import TokenizerFactor

SNIPPET = 60
SECTION, ROUND, MESSAGE = "section", "round", "message"


@dataclass(frozen=True, slots=True)
class OutlineNode:
    id: str
    parent: str | None
    kind: str  # section | round | message | tool_call | tool_result | text | thinking | ...
    label: str
    tokens: int
    priority: int | None = None
    pruned: bool = False  # gone at the analysed budget (itself or what holds it)
    breakpoint: str | None = None  # the cache breakpoints right after this node
    call_id: str | None = None  # a tool call's or result's tool_call_id
    cleared: bool = False  # a tool result ctxtop's editing replaced (placeholder, skeleton, cut)
    provenance: str = "estimated"  # of ``tokens``: a section's is the analysis's


@dataclass(frozen=True, slots=True)
class Outline:
    nodes: tuple[OutlineNode, ...]  # depth first, in prompt order
    # Indexes built with the outline (in the worker thread, not by the view that shows it).
    _children: dict[str | None, list[OutlineNode]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _parents: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for node in self.nodes:
            self._children.setdefault(node.parent, []).append(node)
            self._parents[node.id] = node.parent

    def children(self) -> dict[str | None, list[OutlineNode]]:
        """Each node's children by parent id (None: the sections)."""
        return self._children

    def ancestors(self, node_id: str) -> list[str]:
        """The ids from the section down to ``node_id``'s parent."""
        chain: list[str] = []
        parent = self._parents.get(node_id)
        while parent is not None:
            chain.append(parent)
            parent = self._parents.get(parent)
        return chain[::-1]

    def search(self, text: str) -> list[OutlineNode]:
        """Nodes whose label holds ``text`` (any case), in prompt order."""
        wanted = text.casefold()
        return [node for node in self.nodes if wanted in node.label.casefold()]


def _one_line(text: str) -> str:
    return " ".join(text[: SNIPPET * 2].split())[:SNIPPET]


def _block_label(block: Block, tool_names: Mapping[str, str]) -> str:
    name = block.tool_name or tool_names.get(block.tool_call_id or "", "")
    if block.kind == "tool_use":
        return f"tool call {name or '?'}"
    if block.kind == "tool_result":
        return f"tool result {name or '?'}" + (" (error)" if block.is_error else "")
    if block.text:
        return f"{block.kind}: {_one_line(block.text)}"
    if isinstance(block.raw, dict) and isinstance(block.raw.get("type"), str):
        what = str(block.raw["type"])  # e.g. an attachment's type
        return what if block.kind == "other" else f"{block.kind}: {what}"
    return block.kind


def _message_label(message: Message, tool_names: Mapping[str, str]) -> str:
    kinds = {block.kind for block in message.blocks}
    if "tool_result" in kinds:
        results = [b for b in message.blocks if b.kind == "tool_result"]
        return ", ".join(_block_label(b, tool_names) for b in results[:3])
    if "tool_use" in kinds:
        calls = [b for b in message.blocks if b.kind == "tool_use"]
        return f"{message.role}: " + ", ".join(_block_label(b, tool_names) for b in calls[:3])
    kind = message.kind.replace("_", " ")
    who = message.role if message.kind == "message" else kind
    if message.kind not in ("message", "attachment") and message.role != "user":
        who = f"{message.role} {kind}"
    text = next((b.text for b in message.blocks if b.kind == "text" and b.text), "")
    if not text and message.blocks:
        text = _block_label(message.blocks[0], tool_names)
    return f"{who}: {_one_line(text)}" if text else who


Labels = tuple[str, tuple[str, ...]]  # a message's label and its blocks' labels


def message_labels(message: Message, tool_names: Mapping[str, str]) -> Labels:
    return (
        _message_label(message, tool_names),
        tuple(_block_label(block, tool_names) for block in message.blocks),
    )


class Outliner:
    """``prompt_outline`` for a live session: the labels of messages seen before are kept
    (making them is most of the cost on a long context), those of the last outline's messages
    only (a message a compaction took off the context is not labelled again)."""

    def __init__(self) -> None:
        self._labels: dict[str, tuple[tuple[int, int, int], Labels]] = {}
        self._used: dict[str, tuple[tuple[int, int, int], Labels]] = {}  # by this outline

    def _labels_of(self, message: Message, tool_names: Mapping[str, str]) -> Labels:
        blocks = message.blocks
        # A message changes by blocks added or its text growing (logs that patch messages).
        key = (
            len(blocks),
            len(blocks[0].text) if blocks else 0,
            len(blocks[-1].text) if blocks else 0,
        )
        known = self._used.get(message.id) or self._labels.get(message.id)
        if known is not None and known[0] == key:
            self._used[message.id] = known
            return known[1]
        labels = message_labels(message, tool_names)
        self._used[message.id] = (key, labels)
        return labels

    def outline(
        self,
        state: SessionState,
        profile: Profile,
        analysis: Analysis,
        tokens_of: Callable[[Block], int] | None = None,
    ) -> Outline:
        try:
            return prompt_outline(state, profile, analysis, self._labels_of, tokens_of)
        finally:
            self._labels, self._used = self._used, {}


def _rounds(
    spec: SectionSpec, members: Sequence[int], context: Sequence[Message]
) -> list[list[int]]:
    """A conversation section's messages by round: from each message the user typed, or in the
    current tool-call rounds from each assistant turn that follows a result."""
    rounds: list[list[int]] = []
    previous: Message | None = None
    for index in members:
        message = context[index]
        if spec.content == "current_rounds":
            starts = message.role == "assistant" and (
                previous is None or previous.role != "assistant"
            )
        else:
            starts = is_typed_user_message(message)
        if not rounds or starts:
            rounds.append([])
        rounds[-1].append(index)
        previous = message
    return rounds


def _breakpoint_positions(
    breakpoints: Sequence[Breakpoint], system: int, sizes: Sequence[int]
) -> dict[int, list[Breakpoint]]:
    """The context index each breakpoint follows (-1: the system prompt), from the prefix it
    protects: the first message whose end reaches it."""
    ends = list(itertools.accumulate(sizes, initial=system))[1:]
    found: dict[int, list[Breakpoint]] = {}
    for point in breakpoints:
        if point.protected_tokens <= system or not ends:
            index = -1
        else:
            index = next(
                (i for i, end in enumerate(ends) if end >= point.protected_tokens), len(ends) - 1
            )
        found.setdefault(index, []).append(point)
    return found


def _breakpoint_text(points: Sequence[Breakpoint] | None) -> str | None:
    if not points:
        return None
    return "; ".join(f"{point.after} ({point.protected_tokens:,} cached)" for point in points)


def prompt_outline(
    state: SessionState,
    profile: Profile,
    analysis: Analysis,
    labels_of: Callable[[Message, Mapping[str, str]], Labels] = message_labels,
    tokens_of: Callable[[Block], int] | None = None,
) -> Outline:
    """``tokens_of``: a block's token count, as the analysis counted it (the session's ledger;
    None: counted here)."""
    if tokens_of is None:
        ledger = Ledger()
        ledger.message_sizes(state.context, encoding_for(state))
        tokens_of = ledger.counted
    builder = _OutlineBuilder(state, profile, analysis, labels_of, tokens_of)
    for spec in profile.sections:
        builder.section(spec)
    return Outline(tuple(builder.nodes))


class _ToolNames(Mapping[str, str]):
    """The tool's name of each call id, read from the session's calls when a label asks (a copy
    of every call's name on each update grew with the session's history)."""

    def __init__(self, tools: Mapping[str, ToolCall]) -> None:
        self._tools = tools

    def __getitem__(self, call_id: str) -> str:
        return self._tools[call_id].name

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)


class _OutlineBuilder:
    """The outline's nodes, section by section, from the context and its analysis."""

    def __init__(
        self,
        state: SessionState,
        profile: Profile,
        analysis: Analysis,
        labels_of: Callable[[Message, Mapping[str, str]], Labels],
        tokens_of: Callable[[Block], int],
    ) -> None:
        context = self.context = state.context
        self.tokens_of = tokens_of
        self.members: dict[str, list[int]] = {spec.content: [] for spec in profile.sections}
        for index, content in enumerate(content_names(profile, context)):
            if content in self.members:
                self.members[content].append(index)
        # The tokenizer's counts times the session's factor, as the analysis's sections have
        # them (engine/sessions/tokenizer_factor.py).
        self.factor = TokenizerFactor(analysis.tokenizer_factor)
        self.counted = "calibrated" if analysis.tokenizer_factor != 1 else "estimated"
        self.sizes = self.factor.spread(
            [sum(tokens_of(block) for block in message.blocks) for message in context]
        )
        self.section_tokens = {section.name: section.tokens for section in analysis.sections}
        self.provenance = {section.name: section.provenance for section in analysis.sections}
        system_spec = next((s for s in profile.sections if s.content == "system"), None)
        system = self.section_tokens.get(system_spec.name, 0) if system_spec else 0
        self.marks = _breakpoint_positions(analysis.breakpoints, system, self.sizes)
        self.priorities = {node.id: node.priority for node in analysis.nodes}
        self.pruned_ids = {item.id for item in analysis.pruned}
        self.tool_names = _ToolNames(state.tools)
        self.labels_of = labels_of
        self.nodes: list[OutlineNode] = []
        self.seen: set[str] = set()

    def section(self, spec: SectionSpec) -> None:
        indices = self.members.get(spec.content, [])
        gone = spec.name in self.pruned_ids  # the renderer emptied the whole section
        self.nodes.append(
            OutlineNode(
                spec.name,
                None,
                SECTION,
                spec.label,
                self.section_tokens.get(spec.name, sum(self.sizes[i] for i in indices)),
                spec.priority,
                gone,
                _breakpoint_text(self.marks.get(-1)) if spec.content == "system" else None,
                provenance=self.provenance.get(spec.name, "estimated"),
            )
        )
        if spec.content not in ("messages", "history", "current_rounds"):
            for index in indices:
                self.message(index, spec.name, gone)
            return
        context = self.context
        for number, group in enumerate(_rounds(spec, indices, context), start=1):
            round_id = f"{spec.name}/round-{number}"
            pruned = gone or round_id in self.pruned_ids
            first = next((context[i] for i in group if is_typed_user_message(context[i])), None)
            # A group from a message the user typed is a turn; the current tool-call rounds are
            # rounds (one model response and its results each).
            label = f"{'round' if spec.content == 'current_rounds' else 'turn'} {number}"
            if first is not None:
                text = next((b.text for b in first.blocks if b.kind == "text"), "")
                label += f": {_one_line(text)}"
            size = sum(self.sizes[i] for i in group)
            priority = self.priorities.get(round_id)
            self.nodes.append(
                OutlineNode(
                    round_id,
                    spec.name,
                    ROUND,
                    label,
                    size,
                    priority,
                    pruned,
                    provenance=self.counted,
                )
            )
            for index in group:
                self.message(index, round_id, pruned)

    def message(self, index: int, parent: str, parent_pruned: bool) -> None:
        message = self.context[index]
        rendered = f"m:{message.id}"  # the renderer's element id
        node_id = rendered if rendered not in self.seen else f"m:{message.id}#{index}"
        self.seen.add(node_id)
        pruned = parent_pruned or rendered in self.pruned_ids
        label, block_labels = self.labels_of(message, self.tool_names)
        self.nodes.append(
            OutlineNode(
                node_id,
                parent,
                MESSAGE,
                label,
                self.sizes[index],
                self.priorities.get(rendered),
                pruned,
                _breakpoint_text(self.marks.get(index)),
                provenance=self.counted,
            )
        )
        blocks = message.blocks
        if len(blocks) > 1 or any(b.kind in ("tool_use", "tool_result") for b in blocks):
            for number, block in enumerate(blocks):
                self.nodes.append(
                    OutlineNode(
                        f"{node_id}/{number}",
                        node_id,
                        block.kind,
                        block_labels[number],
                        self.factor.apply(self.tokens_of(block)),
                        None,
                        pruned,
                        call_id=block.tool_call_id,
                        provenance=self.counted,
                        cleared=block.kind == "tool_result" and cleared_by_ctxtop(block.content()),
                    )
                )
