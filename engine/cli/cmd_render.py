"""``ctxtop render``: fit a prompt tree to a token budget as @vscode/prompt-tsx does.

``ctxtop render TREE --budget N`` prints a table (``--json``: the oracle's result fields plus a
``report``). ``ctxtop render --jsonl`` reads ptsx-oracle cases (one JSON object a line, with
``tree``, ``budget``, ``tokenizer``, ``id``) on stdin and prints one oracle-form result a line.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ctxtop.engine.errors import CtxtopError
from ctxtop.engine.safety.input_limits import input_limit, too_large

# Kept here (not imported from engine.render) so other commands do not load the renderer.
MODES = ("exact", "prompt-tsx")
TOKENIZERS = ("words", "o200k", "cl100k")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "render",
        help="fit a prompt tree (JSON/YAML) to a token budget, prompt-tsx style",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("tree", nargs="?", help="the tree file (.json, .yaml or .yml)")
    parser.add_argument("--budget", help="token budget (a number or 'max'; default: the tree's)")
    parser.add_argument("--tokenizer", choices=TOKENIZERS, help="default: the tree's, else words")
    parser.add_argument(
        "--mode",
        choices=MODES,
        help="exact (default) corrects the library's quirks; prompt-tsx reproduces them "
        "(the default with --jsonl, whose output is compared with the library's)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--openai", action="store_true", help="add the OpenAI-format messages")
    parser.add_argument(
        "--jsonl", action="store_true", help="read oracle cases on stdin, one result a line"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ctxtop.engine.render.collections_paused import collections_paused, left_to_exit
    from ctxtop.engine.render.loader import TreeFormatError, load_document, parse_budget
    from ctxtop.engine.render.output import dumps, result_json
    from ctxtop.engine.render.renderer import render

    left_to_exit()  # the trees rendered here are not walked again as the process ends
    try:
        budget = None if args.budget is None else parse_budget(args.budget)
    except TreeFormatError as error:
        raise CtxtopError(f"--budget: {error}") from None
    if args.jsonl:
        if args.tree:
            raise CtxtopError("--jsonl reads cases from stdin; give no tree file")
        return _run_jsonl(args.mode or "prompt-tsx", budget, args.tokenizer)
    if not args.tree:
        raise CtxtopError("give a tree file, or --jsonl to read cases from stdin")
    from ctxtop.engine.render.count_memory import recall, remember
    from ctxtop.engine.render.element_report import build_report, report_table
    from ctxtop.engine.render.tokenizers import get_tokenizer
    from ctxtop.engine.safety.input_limits import read_text

    with collections_paused(age_on_exit=True):
        document = load_document(args.tree)
        tokenizer = get_tokenizer(args.tokenizer or document.tokenizer or "words")
        tree_text = read_text(args.tree).encode("utf-8", "surrogatepass")
        recall(tokenizer, tree_text, document.texts)  # an earlier render's counts
        result = render(document, budget, args.tokenizer, args.mode or "exact")
        remember(tokenizer, tree_text, document.texts)
        report = build_report(result)
        if args.json:
            shown = result_json(result, openai=args.openai)
            shown["mode"] = result.mode
            shown["report"] = report.to_json()
            print(dumps(shown, indent=2))
        else:
            print(report_table(report))
    return 0


def _run_jsonl(mode: str, budget: int | None = None, tokenizer: str | None = None) -> int:
    """Oracle cases on stdin; a case's own budget/tokenizer win over the options, which win
    over the tree's."""
    from ctxtop.engine.render.cases import CaseReader
    from ctxtop.engine.render.collections_paused import collected_between
    from ctxtop.engine.render.count_memory import recall, remember
    from ctxtop.engine.render.loader import TreeFormatError, parse_budget
    from ctxtop.engine.render.output import json_line, result_json
    from ctxtop.engine.render.renderer import render
    from ctxtop.engine.render.tokenizers import BpeTokenizer, get_tokenizer

    write = sys.stdout.write
    cases = CaseReader()
    limit = input_limit()
    # The limit counts characters here (a line of stdin's text stream), at most 4 bytes each.
    # no collection passes while a case is read, rendered and written (collected_between)
    lines = collected_between(iter(lambda: sys.stdin.readline(limit + 1), ""))
    for number, line in enumerate(lines, 1):
        if len(line) > limit:  # a line that long (or /dev/zero) ends the stream
            raise too_large("stdin", limit, number)
        if not line.strip():
            continue
        out: dict[str, Any]
        try:
            case, document = cases.read(line)
            given = case.get("budget")
            chosen = case.get("tokenizer") or tokenizer
            counter = get_tokenizer(str(chosen or document.tokenizer or "words"))
            if isinstance(counter, BpeTokenizer):
                # counts of an earlier render of this tree
                recall(counter, cases.identity(), document.texts)
            result = render(
                document, budget if given is None else parse_budget(given), chosen, mode
            )
            if isinstance(counter, BpeTokenizer):
                remember(counter, cases.identity(), document.texts)
            out = result_json(result, openai=bool(case.get("openai")))
            if case.get("id") is not None:
                out = {"id": case["id"], **out}
        except (json.JSONDecodeError, TreeFormatError, CtxtopError, KeyError, ValueError) as error:
            out = {"usageError": str(error)}
        except Exception as error:  # one bad case must not end a stream of thousands
            out = {"usageError": f"cannot render this case ({type(error).__name__}: {error})"}
        write(json_line(out) + "\n")
    sys.stdout.flush()
    return 0
