"""The prompt tree: sections > turns (or tool-call rounds) > messages > tools, collapsible.

Each node shows its tokens (with their provenance mark: ``≈`` estimated, ``*`` inferred) and
priority; nodes the layout prunes at the analysed budget are struck through and marked ``✂``; a
cache breakpoint is marked ``⚑`` on the node it follows; a tool result ctxtop's editing cleared
(in a fork) is marked ``⌫``, and after a fork is written from this session the results it cleared
are marked ``⌫ cleared in fork`` (before the label). Before anything is written, the newest
preview of the editing or compaction panel marks what it would change: ``⌫ would clear`` on the
results an edit would clear, ``◌ would summarise`` on the calls and results of the rounds a
compaction would summarise (the rest is kept); a collapsed node holding such calls shows the
note with their count (``◌ would summarise ×4``). Only expanded nodes are built as tree nodes
(a long session has thousands of messages); an update relabels the built ones and rebuilds a
node's children only when they changed. ``/`` searches every node's label.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Tree
from textual.widgets.tree import TreeNode

from ctxtop.engine.analysis.prompt_outline import ROUND, SECTION, Outline, OutlineNode
from ctxtop.tui import format as fmt
from ctxtop.tui.format import CLEARED_MARK

BREAKPOINT_MARK = "⚑"  # a cache breakpoint follows this node
PRUNED_MARK = "✂"  # pruned at this budget (also struck through)
IN_FORK_NOTE = f"{CLEARED_MARK} cleared in fork"  # cleared in the fork written from this session
AUTO_OPEN_LIMIT = 200
MARKED_KINDS = ("tool_use", "tool_result")  # the outline's kinds of a call and its result


def node_label(node: OutlineNode, leaf_section: bool = False, note: str | None = None) -> Text:
    """Figures first (a long label is cut at the panel's edge), then the label. A section with
    nothing under it has no arrow: ``leaf_section`` pads it to its siblings' column; ``note``:
    what a fork written from this session did to this call, or a preview would do."""
    text = Text("  " if leaf_section else "", no_wrap=True, overflow="ellipsis")
    figure = f"{fmt.tokens(node.tokens)}{fmt.mark(node.provenance)}"
    text.append(f"{figure:>6}", style="bold" if node.kind == SECTION else "")
    if node.priority is not None:
        text.append(f" p{node.priority}", style="italic")
    if node.breakpoint:
        text.append(f" {BREAKPOINT_MARK}", style="bold reverse")
    if node.pruned:
        text.append(f" {PRUNED_MARK}", style="bold")
    if node.cleared:
        text.append(f" {CLEARED_MARK}", style="bold")
    if note:  # before the label: a narrow panel cuts the label, not the note
        text.append(f" {note}", style="dim")
    text.append(" ")
    # Log text: never markup, control characters shown.
    style = "strike dim" if node.pruned else "dim" if node.cleared else ""
    text.append(fmt.shown(node.label), style=style)
    return text


class OutlineTree(Tree[str]):
    """The tree widget proper; ``data`` of each node is the outline node's id."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_match", "Next match", show=False),
        # Space pauses the dashboard everywhere, the tree's "toggle node" is off (enter opens
        # and closes nodes): a binding never enabled, so that the app's space acts and keeps
        # its place in the footer.
        Binding("space", "app_key", show=False),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action != "app_key" and super().check_action(action, parameters)

    def __init__(self, **kwargs: object) -> None:
        super().__init__("prompt", **kwargs)  # type: ignore[arg-type]
        self.show_root = False
        self.guide_depth = 2
        self.forget_session()

    def forget_session(self) -> None:
        """Start over (another session): nothing built, nothing opened or searched."""
        self.clear()
        self.outline = Outline(())
        self.children_of: dict[str | None, list[OutlineNode]] = {}
        self.expanded_ids: set[str] = set()
        self.sections_seen: dict[str, str | None] = {}  # section id -> its newest round
        self.built: dict[str, TreeNode[str]] = {}
        self.shown: dict[str, OutlineNode] = {}  # what each built node's label shows
        self.matches: list[str] = []
        self.marked: frozenset[str] = frozenset()  # tool_call_ids with ``mark_note``
        self.mark_note = ""
        self.marked_below: dict[str, int] = {}  # node id -> marked calls under it

    def mark_calls(self, note: str, call_ids: frozenset[str]) -> None:
        """Note ``note`` on the calls and results with these ids (replacing the last marks),
        and on each node holding some, with how many: shown while it is collapsed."""
        self.marked, self.mark_note = call_ids, note
        self.marked_below = self._count_marked()
        for node_id, built in self.built.items():
            built.set_label(self._label(self.shown[node_id]))

    def _count_marked(self) -> dict[str, int]:
        """How many marked calls each node holds (a call and its result count once)."""
        if not self.marked:
            return {}
        below: dict[str, set[str]] = {}
        for node in self.outline.nodes:
            if node.kind in MARKED_KINDS and node.call_id in self.marked:
                for ancestor in self.outline.ancestors(node.id):
                    below.setdefault(ancestor, set()).add(node.call_id)
        return {node_id: len(calls) for node_id, calls in below.items()}

    def _label(self, node: OutlineNode) -> Text:
        leaf_section = node.parent is None and not self.children_of.get(node.id)
        note = None
        if node.kind in MARKED_KINDS and node.call_id in self.marked:
            note = self.mark_note
        elif node.id not in self.expanded_ids and node.id in self.marked_below:
            # Collapsed: the marks below it would not show at all.
            note = f"{self.mark_note} ×{self.marked_below[node.id]}"
        return node_label(node, leaf_section, note)

    def _relabel(self, node_id: str) -> None:
        built = self.built.get(node_id)
        if built is not None:
            built.set_label(self._label(self.shown[node_id]))

    def show(self, outline: Outline) -> None:
        self.outline = outline
        self.children_of = outline.children()
        for section in self.children_of.get(None, []):
            rounds = [n.id for n in self.children_of.get(section.id, []) if n.kind == ROUND]
            newest = rounds[-1] if rounds else None
            if section.id not in self.sections_seen:
                # The conversation's sections start expanded down to their newest round.
                self.sections_seen[section.id] = newest
                if newest is not None and self._small(section.id):
                    self.expanded_ids.add(section.id)
                    if self._small(newest):
                        self.expanded_ids.add(newest)
            elif newest != self.sections_seen[section.id]:
                # A new round: open it if the one before was open (following the session).
                if self.sections_seen[section.id] in self.expanded_ids and newest is not None:
                    self.expanded_ids.add(newest)
                self.sections_seen[section.id] = newest
        counted, self.marked_below = self.marked_below, self._count_marked()
        self._sync(self.root, None)
        for node_id in counted.keys() ^ self.marked_below.keys():
            self._relabel(node_id)  # a count that came or went with the new nodes
        for node_id in counted.keys() & self.marked_below.keys():
            if counted[node_id] != self.marked_below[node_id]:
                self._relabel(node_id)

    def _small(self, node_id: str) -> bool:
        """Few enough children to open without being asked (each one is a line to build)."""
        return len(self.children_of.get(node_id, ())) <= AUTO_OPEN_LIMIT

    def _add(self, parent: TreeNode[str], node: OutlineNode) -> None:
        has_children = bool(self.children_of.get(node.id))
        child = parent.add(self._label(node), data=node.id, allow_expand=has_children)
        self.built[node.id] = child
        self.shown[node.id] = node
        if has_children and node.id in self.expanded_ids:
            child.expand()
            self._sync(child, node.id)

    def _sync(self, parent: TreeNode[str], parent_id: str | None) -> None:
        """Make ``parent``'s built children match the outline's: new ones are added after the
        ones there (a session grows at the end), changed ones relabelled, else all rebuilt."""
        wanted = self.children_of.get(parent_id, [])
        current = list(parent.children)
        if [child.data for child in current] != [node.id for node in wanted[: len(current)]]:
            for child in current:
                self._forget(child)
            parent.remove_children()
            current = []
        for child, node in zip(current, wanted, strict=False):
            has_children = bool(self.children_of.get(node.id))
            if self.shown.get(node.id) != node:
                self.shown[node.id] = node
                child.set_label(self._label(node))
                child.allow_expand = has_children
            if child.is_expanded and has_children:
                self._sync(child, node.id)
        for node in wanted[len(current) :]:
            self._add(parent, node)

    def _forget(self, node: TreeNode[str]) -> None:
        if node.data is not None:
            self.built.pop(node.data, None)
            self.shown.pop(node.data, None)
        for child in node.children:
            self._forget(child)

    @on(Tree.NodeExpanded)
    def _expanded(self, event: Tree.NodeExpanded[str]) -> None:
        node_id = event.node.data
        if node_id is not None:
            self.expanded_ids.add(node_id)
            self._sync(event.node, node_id)
            self._relabel(node_id)  # its count gives way to the marks below it

    @on(Tree.NodeCollapsed)
    def _collapsed(self, event: Tree.NodeCollapsed[str]) -> None:
        if event.node.data is not None:
            self.expanded_ids.discard(event.node.data)
            self._relabel(event.node.data)

    def reveal(self, node_id: str) -> None:
        """Expand what holds ``node_id`` and put the cursor on it."""
        for ancestor in self.outline.ancestors(node_id):
            built = self.built.get(ancestor)
            if built is None:
                return
            self.expanded_ids.add(ancestor)
            if not built.is_expanded:
                built.expand()
            self._sync(built, ancestor)
            self._relabel(ancestor)
        target = self.built.get(node_id)
        if target is not None:
            # Lines are numbered lazily (on idle); number them now for the node just opened.
            self._tree_lines  # noqa: B018
            self.move_cursor(target)
            self.scroll_to_node(target, animate=False)

    def search(self, text: str) -> int:
        """Go to the first node whose label holds ``text``; the number of such nodes."""
        self.matches = [node.id for node in self.outline.search(text)] if text else []
        if self.matches:
            self.reveal(self.matches[0])
        return len(self.matches)

    def action_next_match(self) -> None:
        if not self.matches:
            return
        cursor = self.cursor_node.data if self.cursor_node is not None else None
        index = self.matches.index(cursor) + 1 if cursor in self.matches else 0
        self.reveal(self.matches[index % len(self.matches)])


class SearchBox(Input):
    """The tree's search field: enter named in the footer (while typing, the app's letters
    type into it and leave the footer)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "submit", "Next match")]


class PromptTree(Vertical):
    DEFAULT_CSS = """
    PromptTree { border: round $primary; height: 1fr; }
    PromptTree > OutlineTree { height: 1fr; overflow-x: hidden; }
    PromptTree > Input { display: none; height: 3; }
    PromptTree > Input.shown { display: block; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close_search", "Back to the tree"),  # while the search is open
    ]

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "Prompt tree"
        self.searched: str | None = None
        self.outline_tree = OutlineTree(id="outline")
        self.search_box = SearchBox(
            placeholder="search the tree (enter: next, esc: close)", id="tree-search"
        )

    def compose(self) -> ComposeResult:
        yield self.outline_tree
        yield self.search_box

    def show(self, outline: Outline | None, pruned: int = 0) -> None:
        if outline is None or outline == self.outline_tree.outline:
            return
        self.outline_tree.show(outline)
        self.border_subtitle = f"{pruned} pruned" if pruned else ""

    def mark_calls(self, note: str, call_ids: frozenset[str]) -> None:
        self.outline_tree.mark_calls(note, call_ids)

    def open_search(self) -> None:
        self.search_box.add_class("shown")
        self.search_box.focus()

    @on(Input.Submitted, "#tree-search")
    def _submitted(self, event: Input.Submitted) -> None:
        tree = self.outline_tree
        if tree.matches and event.value == self.searched:
            tree.action_next_match()
        else:
            self.searched = event.value
            found = tree.search(event.value)
            self.border_subtitle = f"{found} found" if event.value else ""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close_search":
            return self.search_box.has_class("shown")
        return super().check_action(action, parameters)

    def action_close_search(self) -> None:
        self.search_box.remove_class("shown")
        self.outline_tree.focus()
        self.refresh_bindings()
