"""``m``: the prompt of a proxied session as measured (live mode): the system prompt's blocks,
each tool definition's cost, and the cache breakpoints as the agent sent them."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ctxtop.engine.agents import proxied
from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.proxy.measured_prompt import MeasuredPrompt
from ctxtop.engine.proxy.settings import DEFAULT_PORT, load_proxy_settings
from ctxtop.tui import format as fmt

NAME_WIDTH = 28


def proxy_port() -> int:
    """The port ``ctxtop proxy`` listens on: the settings' (8787 unless set)."""
    try:
        port = load_proxy_settings().port
    except CtxtopError:  # the settings file's problem is said where it is loaded
        port = DEFAULT_PORT
    return port or DEFAULT_PORT  # 0 (any free port): ctxtop proxy prints the one it took


def not_proxied(port: int | None) -> Text:
    where = f"http://127.0.0.1:{port or proxy_port()}"
    start = "" if port else "Start the proxy with `ctxtop proxy` or `ctxtop --proxy`, then "
    return Text(
        "This session's requests did not go through ctxtop's proxy, so its system prompt and "
        "tools are inferred (*) from the log.\n\n"
        f"{start}start the agent through it:\n"
        + "".join(f"  {use.setup_line(where)}\n" for use in proxied())
    )


def measured_text(measured: MeasuredPrompt) -> Text:
    mark = fmt.mark("measured")
    text = Text()
    text.append(
        f"Latest request {fmt.clock_time(measured.time)} · {measured.protocol}", style="bold"
    )
    text.append(f" · {fmt.shown(measured.model or '?')} · {measured.requests} measured\n")
    if measured.scaled:
        text.append(
            f"Parts as shares of the {fmt.tokens(measured.reported_input)} prompt "
            "the API reported\n"
        )
    else:
        text.append("The API reported no usage: tokenizer counts of the parts\n")
    blocks = ", ".join(fmt.tokens(block) for block in measured.system_blocks)
    text.append(f"\nSystem prompt   {fmt.tokens(measured.system_tokens)}{mark}", style="bold")
    text.append(f"  ({len(measured.system_blocks)} blocks: {blocks})\n")
    text.append(f"Tool definitions {fmt.tokens(measured.tool_tokens)}{mark}", style="bold")
    text.append(f"  ({len(measured.tools)} tools)\n")
    for tool in sorted(measured.tools, key=lambda t: (-t.tokens, t.name)):
        text.append(f"  {fmt.shown(tool.name, limit=NAME_WIDTH):<{NAME_WIDTH}} ")
        text.append(f"{fmt.tokens(tool.tokens):>7}{mark}\n")
    text.append(f"Messages        {fmt.tokens(measured.message_tokens)}{mark}\n", style="bold")
    text.append("\nCache breakpoints as sent", style="bold")
    if not measured.breakpoints:
        text.append("\n  none (the provider caches prefixes itself)")
    for point in measured.breakpoints:
        ttl = f"  ttl {fmt.shown(point.ttl)}" if point.ttl else ""
        text.append(
            f"\n  {fmt.shown(point.at):<{NAME_WIDTH}} "
            f"after {fmt.tokens(point.prefix_tokens)}{mark}{ttl}"
        )
    return text


class MeasuredScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    MeasuredScreen { align: center middle; }
    MeasuredScreen > VerticalScroll {
        width: 90%; max-width: 100; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    """
    AUTO_FOCUS = "*"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,m", "dismiss", "Close")]

    def __init__(self, measured: MeasuredPrompt | None, port: int | None) -> None:
        super().__init__()
        self.measured, self.port = measured, port

    def compose(self) -> ComposeResult:
        body = measured_text(self.measured) if self.measured else not_proxied(self.port)
        with VerticalScroll() as scroll:
            scroll.border_title = "Measured prompt (esc closes)"
            yield Static(body)
