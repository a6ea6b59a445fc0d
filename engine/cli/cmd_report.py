"""``ctxtop report SESSION_FILE``: the state of one session, as text or JSON."""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import TYPE_CHECKING, Any

import msgspec

from ctxtop.engine.cli.arguments import tokens_arg
from ctxtop.engine.safety.terminal import one_line, printable
from ctxtop.engine.words import plural

if TYPE_CHECKING:
    from ctxtop.engine.analysis.snapshot import Analysis
    from ctxtop.engine.proxy.measured_prompt import MeasuredPrompt
    from ctxtop.engine.sessions.adapter import Adapter


def json_text(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``'s text (floats may be written shorter:
    1e-05 as 0.00001), in a tenth of its time: 0.7 s for a 100 MB session's report."""
    return msgspec.json.format(msgspec.json.encode(value), indent=2).decode()


def _fmt(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _estimated(tool: dict[str, Any]) -> str:
    """The estimate mark of a tools row partly estimated from result sizes."""
    return "≈" if tool.get("result_tokens_estimated") else ""


# Where a compaction's "after" figure comes from, when the agent did not log it itself.
_AFTER = {
    "request": "the next request's prompt; ",
    "estimate": "the agent's estimate; ",
    "ctxtop": "ctxtop's estimate; ",
}


def _subagent_of(entry: dict[str, Any] | None) -> list[str]:
    """A sub-agent's own file: which sub-agent it is and the session and call that started it."""
    if entry is None:
        return []
    lines = [f"sub-agent  {entry['id']} {entry['description'] or ''}".rstrip()]
    if entry["parent_file"] is None:
        lines.append("parent     not found beside this file")
    else:
        call = entry["parent_tool_call_id"]
        lines.append(
            f"parent     session {entry['parent_session_id']} ({entry['parent_file']})"
            + (f", tool call {call}" if call else "")
        )
    return lines


def _microcompaction_output(micro: dict[str, Any]) -> str:
    attachments = micro["cleared_attachments"]
    return (
        f"microcompaction {micro['trigger']}: {_fmt(micro['pre_tokens'])},"
        f" {_fmt(micro['tokens_saved'])} saved"
        f" ({plural(micro['cleared_tool_results'], 'tool result')}"
        + (f", {plural(attachments, 'attachment')}" if attachments else "")
        + f" cleared; line {micro['line']})"
    )


def render_text(
    report: dict[str, Any], clock: str | None = None, analysis: Analysis | None = None
) -> str:
    """``clock``: the cache clock's line (it depends on the time it is read); ``analysis``:
    the session's, shown after the report's figures."""
    context = report["context_tokens"]
    lines = [
        f"{report['agent']} {report['agent_version'] or ''}  session {report['session_id'] or '-'}",
        f"file       {report['file']}",
        *([f"title      {report['title']}"] if report.get("title") else []),
        *([f"cwd        {report['cwd']}"] if report.get("cwd") else []),
        *_subagent_of(report.get("subagent_of")),
        f"model      {report['model'] or '-'}  window {_fmt(report['context_window'])}"
        f" ({report.get('context_window_note') or report['context_window_source']})",
        f"context    {_fmt(context['value'])} tokens ({context['source']})"
        + (f", {report['fill_percent']}% full" if report["fill_percent"] is not None else ""),
        f"autocompact at {_fmt(report['autocompact_at'])}",
        f"requests   {report['api_requests']}",
    ]
    last = report["last_request"]
    if last:
        lines.append(
            f"last req   prompt {_fmt(last['input_tokens_total'])} (cache read"
            f" {_fmt(last['cache_read_tokens'])}, write {_fmt(last['cache_write_tokens'])}),"
            f" output {_fmt(last['output_tokens'])}"
        )
        for part in last.get("agent_prompt_breakdown", ()):  # the agent's own split of it
            lines.append(
                f"  agent's split: {part['label']:<24} {part['percent_of_prompt']:>5}%"
                f"  {_fmt(part['tokens'])}*"
            )
    if clock is not None:
        lines.append(f"clock      {clock}")
    totals = report["totals"]
    lines.append(
        f"totals     input {_fmt(totals['input'])}  output {_fmt(totals['output'])}"
        f"  cache read {_fmt(totals['cache_read'])}  cache write {_fmt(totals['cache_write'])}"
    )
    for compaction in report["compactions"]:
        after = _AFTER.get(compaction.get("post_tokens_source") or "", "")
        whole, post = compaction["after_tokens"], compaction["post_tokens"]
        if whole is not None and post is not None and whole != post:
            after += f"{_fmt(post)} logged + system prompt and tools; "
        lines.append(
            f"compaction {compaction['trigger']}: {_fmt(compaction['pre_tokens'])}"
            f" -> {_fmt(whole if whole is not None else post)} ({after}line {compaction['line']})"
        )
    lines.extend(_microcompaction_output(micro) for micro in report.get("microcompactions", ()))
    for truncation in report["truncations"]:
        lines.append(
            f"truncation {_fmt(truncation['pre_tokens'])} -> {_fmt(truncation['post_tokens'])}"
            f" ({_fmt(truncation['messages_removed'])} oldest messages dropped;"
            f" line {truncation['line']})"
        )
    if report["tools"]:
        lines.append("tools (result tokens: tokenizer estimates)")
        for tool in report["tools"]:
            lines.append(
                f"  {tool['name']:<24} {plural(tool['calls'], 'call'):>11}"
                f" {_fmt(tool['result_tokens']) + _estimated(tool):>10} result tokens"
            )
    for sub in report["subagents"]:
        lines.append(
            f"sub-agent  {sub['id']} {sub['description'] or ''}:"
            f" {plural(sub['api_requests'], 'request')},"
            f" last prompt {_fmt(sub['last_input_tokens_total'])},"
            f" context {_fmt(sub['context_tokens']['value'])} ({sub['context_tokens']['source']})"
        )
    breakdown = report.get("context_breakdown")
    if breakdown:
        lines.append(f"context by category (estimates, {breakdown['encoding']})")
        for entry in breakdown["categories"]:
            lines.append(f"  {entry['category']:<24} {_fmt(entry['tokens']):>10}")
        logged = breakdown.get("logged_prompt") or 0
        if logged:
            lines.append(f"  {'system prompt + tools':<24} {_fmt(logged):>10}  logged")
        rest = max(breakdown["unattributed"] - logged, 0)
        lines.append(f"  {'not in the log':<24} {_fmt(rest):>10}")
    if report.get("measured"):
        from ctxtop.engine.proxy.measured_analysis import measurement_text

        lines.extend(measurement_text(report["measured"]))
    if analysis is not None:
        from ctxtop.engine.analysis.report import analysis_text

        lines.extend(analysis_text(analysis))
    for skipped in report["skipped_lines"]:
        lines.append(f"skipped    {skipped['file']}:{skipped['line']}: {skipped['reason']}")
    lines.extend(_record_types(report["record_types"]))
    return "\n".join(lines)


def _record_types(types: dict[str, dict[str, int]]) -> list[str]:
    """The records left out by type: unknown ones (figures may be incomplete), then those
    ctxtop knows and does not need."""
    lines = []
    if types["unknown"]:
        count = sum(types["unknown"].values())
        lines.append(
            f"unknown    {plural(count, 'record')} of types ctxtop does not know"
            " (figures may be incomplete): " + _counts(types["unknown"])
        )
    if types["ignored"]:
        known = _counts(types["ignored"])
        lines.append(f"ignored    {known} (known types; nothing shown is in them)")
    return lines


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{one_line(kind)} {number:,}" for kind, number in counts.items())


def run(args: argparse.Namespace) -> int:
    # Imported here so that other commands don't pay for the session readers at start-up.
    from ctxtop.engine.agents.session_reader import SessionReader, read_all
    from ctxtop.engine.analysis.analyze import Analyzer
    from ctxtop.engine.analysis.report import analyze_session
    from ctxtop.engine.config import load_settings
    from ctxtop.engine.live.whole import with_whole_context
    from ctxtop.engine.sessions.cache_clock import cache_clock, clock_text
    from ctxtop.engine.sessions.report_json import to_json
    from ctxtop.engine.sessions.sample import build_sample

    reader = SessionReader(args.session)
    read_all(reader)
    assert reader.adapter is not None
    analyzer = Analyzer()  # its ledger counts the context once, for the sample and the analysis
    sample = build_sample(reader.adapter, analyzer.ledger, breakdown=True)
    settings = load_settings()
    # The settings' "default" profile means the agent's own.
    profile = args.profile or (settings.profile if settings.profile != "default" else None)
    analysis = analyze_session(
        reader.adapter,
        profile=profile,
        window=args.budget,
        triggers=settings.thresholds,
        analyzer=analyzer,
    )
    measured = _measured(reader.adapter, sample.session_id)
    if measured is not None:  # the session went through ctxtop's proxy
        from ctxtop.engine.proxy.measured_analysis import with_measurement

        analysis = with_measurement(analysis, measured)
    sample = with_whole_context(sample, analysis)
    report = to_json(sample if args.breakdown else dataclasses.replace(sample, breakdown=None))
    if measured is not None:
        from ctxtop.engine.proxy.measured_analysis import measurement_json

        report["measured"] = measurement_json(measured)
    report["analysis"] = analysis.to_json()
    now = time.time()
    clock = cache_clock(sample.cache_prefix, now, sample.model)
    report["cache_clock"] = clock.to_json() if clock is not None else None
    if args.json:
        print(json_text(report))
    else:
        line = clock_text(clock, now) if clock is not None else None
        print(printable(render_text(report, line, analysis)))
    return 0


def _measured(adapter: Adapter, session_id: str | None) -> MeasuredPrompt | None:
    """The proxy's latest measurement of the session, if it went through ctxtop's proxy. Without
    a measurements directory (the proxy never ran) the proxy's modules are not even imported."""
    from ctxtop.engine.proxy.store import measurements_dir

    if not measurements_dir().is_dir():
        return None
    from ctxtop.engine.proxy.measured_prompt import latest_measurement
    from ctxtop.engine.proxy.opening import session_opening

    return latest_measurement(session_id, session_opening(adapter.snapshot()))


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report", help="the context state of one session file", description=__doc__
    )
    parser.add_argument("session", metavar="SESSION_FILE", help="a session log file")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="estimate what the context holds, by category (tokenizer estimates)",
    )
    parser.add_argument(
        "--profile",
        metavar="NAME",
        help="layout profile for the analysis (copilot, claude-code, codex or one of yours;"
        " default: the settings' profile, else the agent's own)",
    )
    parser.add_argument(
        "--budget",
        metavar="N",
        type=tokens_arg,
        help="analyse as if the model's window were N tokens (e.g. 64000, 64k or 1.5M)",
    )
    parser.set_defaults(func=run)
