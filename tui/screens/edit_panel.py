"""``e``: the editing panel: a policy for clearing old tool results, its live preview, and the
fork written on confirmation (``engine/editing``: the same as ``ctxtop edit``).

The preview and the write run in worker threads: the session is loaded once, for the first
preview (``ForkPanel.prepared``); each change of the policy previews again in memory, and an
older preview that finishes late is dropped. ``Write fork`` writes the fork previewed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Select, Static

from ctxtop.engine.editing.explain import Suggestion
from ctxtop.engine.editing.policy import DEFAULT_KEEP, MODES, ORDERS, TOOL_USES, TURNS, Policy
from ctxtop.engine.editing.pools import DEFAULT_FILL, FILL_MODES, Target
from ctxtop.engine.editing.preview import pays_off_after
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.forks.edit import EditDetails, preview_edit, target_lines, write_edit
from ctxtop.engine.forks.transaction import Outcome, Preview, unwritten
from ctxtop.engine.live.apply_plan import apply_edit
from ctxtop.engine.proxy.live_plan import LivePlan
from ctxtop.tui import format as fmt
from ctxtop.tui.components.count_input import CountInput
from ctxtop.tui.screens.fork_panel import ForkPanel, context_text

CHANGES_SHOWN = 8
INVALID = "invalid"  # a target field that is not a target

# The panel's words for the policies and for the settings a suggestion changes.
POLICY_LABELS = {TOOL_USES: "tool uses", TURNS: "turns"}
FIELD_LABELS = {
    "kind": "policy",
    "keep_tool_uses": "keep tool uses",
    "keep_turns": "keep turns",
    "min_tokens": "min saving",
    "mode": "mode",
}
# Each count field and the policy it belongs to: typing into one picks its policy.
COUNT_FIELDS = {"edit-keep-tool-uses": TOOL_USES, "edit-keep-turns": TURNS}
TERMS = (
    "turn: a request of the user and all that answered it. tool use: one tool call and its result."
)


def suggestion_text(suggestion: Suggestion) -> str:
    """The smallest change that would clear something, in the panel's field names."""
    settings = dict(suggestion.settings)
    if settings.get("kind") == TOOL_USES:
        settings.pop("keep_turns", None)  # the turns field is not read under tool uses
    changes = [
        f"{FIELD_LABELS[name]} to {POLICY_LABELS.get(value, value)}"
        for name, value in settings.items()
    ]
    results = suggestion.results
    return (
        f"set {' and '.join(changes)} to clear {results} result{'s' if results != 1 else ''}"
        f" ({fmt.tokens(suggestion.tokens)}≈ tokens)"
    )


def preview_text(outcome: Outcome[EditDetails]) -> Text:
    """The preview as ``ctxtop edit --dry-run`` gives it, in a few lines."""
    text = Text()
    preview = outcome.preview
    details = preview.details
    policy = details.policy
    text.append(f"policy {POLICY_LABELS[policy.name]}: ", style="bold")
    text.append(f"{policy.summary().split(': ', 1)[-1]}\n")
    text.append_text(context_text(preview))
    if details.target is not None:
        text.append("\n".join(target_lines(details.target, preview.context.after)) + "\n")
    for row in details.sections:
        if row.tokens_before != row.tokens_after:
            text.append(
                f"  {row.section.replace('_', ' ')}: {fmt.tokens(row.tokens_before)}"
                f" -> {fmt.tokens(row.tokens_after)}\n"
            )
    changed = details.changed
    explained = details.nothing_to_clear
    if explained is not None:
        text.append(f"nothing to clear: {explained.reason}", style="bold")
        if explained.suggestion is not None:
            text.append(f"\n{suggestion_text(explained.suggestion)}")
        return text
    count = len(changed)
    text.append(
        f"{count} tool result{'s' if count != 1 else ''} change{'s' if count == 1 else ''}:\n"
    )
    for change in changed[:CHANGES_SHOWN]:
        tool = fmt.shown(change.tool)  # from the log: plain text, controls shown
        text.append(
            f"  {tool} (turn {change.turn}): {fmt.tokens(change.tokens_before)}"
            f" -> {fmt.tokens(change.tokens_after)}\n"
        )
    if len(changed) > CHANGES_SHOWN:
        text.append(f"  … and {len(changed) - CHANGES_SHOWN} more\n")
    cache = preview.cache
    text.append(
        f"cache rewrite: {fmt.tokens(cache.rewrite_tokens)}"
        f"{fmt.mark(preview.tokens_source)} tokens after the first edit"
    )
    if cache.break_even_requests is not None:
        text.append(
            f"\n  costs ≈${cache.rewrite_cost_usd:.4f} once, saves"
            f" ≈${cache.saving_per_request_usd:.5f} per request: "
            + pays_off_after(cache.break_even_requests)
        )
    for warning in outcome.warnings:
        text.append(f"\nwarning: {fmt.shown(warning)}", style="bold")
    return text


class EditScreen(ForkPanel[EditDetails]):
    DEFAULT_CSS = """
    EditScreen #edit-preview-box { height: auto; max-height: 45vh; border: round $panel; }
    EditScreen #edit-terms { height: auto; color: $foreground 70%; }
    /* Under 30 lines the preview and the buttons need the room. */
    EditScreen.short #edit-terms { display: none; }
    """
    AUTO_FOCUS = "#edit-keep-tool-uses"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def compose(self) -> ComposeResult:
        self.counts = {name: str(DEFAULT_KEEP) for name in COUNT_FIELDS}  # the values shown
        with Vertical() as box:
            name = fmt.in_markup(fmt.short_name(self.path.name))  # fits at 80 columns
            box.border_title = f"Edit {name}: clear old tool results into a fork"
            with self.body():
                with Horizontal(classes="policy"):
                    policies = [(label, name) for name, label in POLICY_LABELS.items()]
                    yield self.field(
                        "policy",
                        Select(policies, value=TOOL_USES, allow_blank=False, id="edit-policy"),
                    )
                    keep = str(DEFAULT_KEEP)
                    yield self.field(
                        "keep tool uses", CountInput(keep, type="integer", id="edit-keep-tool-uses")
                    )
                    yield self.field(
                        "keep turns", CountInput(keep, type="integer", id="edit-keep-turns")
                    )
                    yield self.field(
                        "min saving", CountInput("0", type="integer", id="edit-min-tokens")
                    )
                with Horizontal(classes="policy"):
                    yield self.choices("order", ORDERS, "oldest", "edit-order")
                    yield self.choices("mode", MODES, "placeholder", "edit-mode")
                    yield self.field(
                        "target", Input("", placeholder="60% or 120k", id="edit-target")
                    )
                    yield self.choices("fill", FILL_MODES, DEFAULT_FILL, "edit-fill")
                yield Static(TERMS, id="edit-terms")
                with VerticalScroll(id="edit-preview-box"):
                    yield Static("computing the preview …", id="edit-preview")
            yield self.buttons("edit")

    def on_mount(self) -> None:
        self.mark_short()
        self.refresh_preview()

    def policy(self) -> Policy | None:
        """The policy the fields say, or None while one is not a number yet. Only the count of
        the chosen policy is read (keep tool uses, or keep turns)."""
        values = []
        for selector in ("#edit-keep-tool-uses", "#edit-keep-turns", "#edit-min-tokens"):
            text = self.query_one(selector, Input).value.strip()
            if not text.isdigit():
                return None
            values.append(int(text))
        target = self.target()
        if target == INVALID:
            return None
        kind = str(self.query_one("#edit-policy", Select).value)
        order = self.query_one("#edit-order", Select).value
        mode = self.query_one("#edit-mode", Select).value
        return Policy(
            kind=kind,
            keep_tool_uses=values[0] if kind == TOOL_USES else None,
            keep_turns=values[1] if kind == TURNS else None,
            min_tokens=values[2],
            order=str(order),
            mode=str(mode),
            target=target if isinstance(target, Target) else None,
            fill=str(self.query_one("#edit-fill", Select).value),
        )

    def target(self) -> Target | str | None:
        """The target field: None when empty, INVALID when it is not a target."""
        text = self.query_one("#edit-target", Input).value.strip()
        if not text:
            return None
        try:
            return Target.parse(text)
        except CtxtopError:
            return INVALID

    @on(Input.Changed, "#edit-keep-tool-uses, #edit-keep-turns")
    def _count_changed(self, event: Input.Changed) -> None:
        """A count typed in picks the policy it belongs to (as --keep-turns alone does)."""
        if event.input.id is None or event.value == self.counts.get(event.input.id, event.value):
            return  # the value it was composed with (or had)
        self.counts[event.input.id] = event.value
        self.query_one("#edit-policy", Select).value = COUNT_FIELDS[event.input.id]

    @on(Input.Changed)
    @on(Select.Changed)
    def refresh_preview(self) -> None:
        if self.written is not None:
            return
        policy = self.policy()
        self.generation += 1
        self.query_one("#edit-write", Button).disabled = True
        if policy is None:
            self.query_one("#edit-preview", Static).update(
                "target: a % of the window or tokens (60%, 120k)"
                if self.target() == INVALID
                else "keep tool uses, keep turns and min saving: whole numbers"
            )
            return
        self.query_one("#edit-preview", Static).update("computing the preview …")
        self._preview(policy, self.generation)

    @work(thread=True, exclusive=True, group="edit-preview")
    def _preview(self, policy: Policy, generation: int) -> None:
        try:
            preview = preview_edit(self.prepared(), policy, shown=self.sample.shown)
        except CtxtopError as error:
            self.app.call_from_thread(self._show_problem, str(error), generation)
            return
        self.app.call_from_thread(self._show_preview, preview, generation)

    def planned(self, outcome: Outcome[EditDetails]) -> frozenset[str]:
        """The results the edit would clear."""
        return frozenset(change.tool_call_id for change in outcome.preview.details.changed)

    def changes(self, outcome: Outcome[EditDetails]) -> bool:
        return bool(outcome.preview.details.changed)

    def _show_preview(self, preview: Preview[EditDetails], generation: int) -> None:
        if generation != self.generation or self.written is not None:
            return  # a newer policy is being previewed
        self.preview = preview
        outcome = unwritten(preview, dry_run=True)
        self.outcome = outcome
        self.query_one("#edit-preview", Static).update(preview_text(outcome))
        self.show_timing(outcome)
        self.query_one("#edit-write", Button).disabled = not self.changes(outcome)

    def _show_problem(self, problem: str, generation: int) -> None:
        if generation == self.generation:
            shown = fmt.about_file(problem, self.path)  # the title names the file
            self.query_one("#edit-preview", Static).update(fmt.plain(shown, "bold"))

    @on(Button.Pressed, "#edit-write")
    def _write_pressed(self) -> None:
        if self.policy() is None or self.preview is None:
            return
        self.query_one("#edit-write", Button).disabled = True
        self.query_one("#edit-preview", Static).update("writing the fork …")
        self._write(self.preview)

    @work(thread=True, exclusive=True, group="edit-write")
    def _write(self, preview: Preview[EditDetails]) -> None:
        try:
            outcome = write_edit(preview, logged=not self.demo)
        except CtxtopError as error:
            self.app.call_from_thread(self._show_problem, str(error), self.generation)
            return
        self.app.call_from_thread(self._show_written, outcome)

    def _show_written(self, outcome: Outcome[EditDetails]) -> None:
        self.written = outcome
        self.show_timing(None)  # the advice was for acting; it is done
        if outcome.fork is None:  # nothing changed after all (the session moved on)
            self.query_one("#edit-preview", Static).update(preview_text(outcome))
            return
        self.query_one("#edit-preview", Static).update(self.written_message(outcome))
        self.lock_policy()

    def live_job(self) -> Callable[[], LivePlan] | None:
        policy, session, sample = self.policy(), self.live_session, self.sample
        if policy is None or session is None:
            return None
        return lambda: apply_edit(  # from the session the panel read for its previews
            self.path, policy, session, self.prepared(), shown=sample.shown
        )[0]

    @on(Button.Pressed, "#edit-close")
    def action_close(self) -> None:
        self.dismiss(self.written)
