"""Session logs are untrusted input: a fuzz corpus built from the sample sessions (cut at every
byte of their first lines, bytes flipped, lines duplicated and reordered, fields removed or of
the wrong type, invalid UTF-8, deep nesting) must end in a report or a one-line error naming
the file; never a traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_run import SAMPLES, assert_clean_end, run_cli
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ctxtop.engine.agents.session_reader import read_session
from ctxtop.engine.sessions.report_json import build_report

FUZZ = settings(
    max_examples=100,
    deadline=None,
    # Shrinking a failure in a whole session can take many minutes: report it as found.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
JSONL = [name for name in SAMPLES if name != "openai-document"]


def report_of(tmp_path: Path, name: str, data: bytes, *extra: str) -> None:
    path = tmp_path / f"fuzz-{name}{SAMPLES[name].suffix}"
    path.write_bytes(data)
    assert_clean_end(run_cli("report", str(path), *extra), path)


@pytest.mark.parametrize("name", JSONL)
def test_the_first_lines_cut_at_every_byte(tmp_path: Path, name: str) -> None:
    head = b"".join(SAMPLES[name].read_bytes().splitlines(keepends=True)[:3])[:1500]
    path = tmp_path / SAMPLES[name].name
    path.write_bytes(b"")
    # The file grows a byte at a time (rewriting it each time cost 1-3 ms a write on ext4,
    # which flushes a file truncated to nothing when it is closed).
    with open(path, "ab", buffering=0) as grown:
        for offset in range(len(head) + 1):
            grown.write(head[offset - 1 : offset] if offset else b"")
            try:
                state = read_session(path)
            except Exception as error:  # only the one-line input error is allowed
                assert type(error).__name__ == "InputError", (offset, error)
                continue
            build_report(state_adapter(path), breakdown=True)
            if offset % 97 == 0 or offset == len(head):
                assert_clean_end(run_cli("report", str(path)), path)
            assert state.lines_read <= head[:offset].count(b"\n") + 1


def state_adapter(path: Path) -> Any:
    from ctxtop.engine.agents.session_reader import SessionReader, read_all

    reader = SessionReader(path)
    read_all(reader)
    return reader.adapter


@FUZZ
@given(name=st.sampled_from(list(SAMPLES)), data=st.data())
def test_flipped_bytes(tmp_path: Path, name: str, data: st.DataObject) -> None:
    raw = bytearray(SAMPLES[name].read_bytes())
    for _ in range(data.draw(st.integers(1, 12))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] ^= 1 << data.draw(st.integers(0, 7))
    report_of(tmp_path, name, bytes(raw))


@FUZZ
@given(name=st.sampled_from(JSONL), data=st.data())
def test_lines_duplicated_and_reordered(tmp_path: Path, name: str, data: st.DataObject) -> None:
    lines = SAMPLES[name].read_bytes().splitlines()
    order = data.draw(st.lists(st.integers(0, len(lines) - 1), min_size=1, max_size=2 * len(lines)))
    report_of(tmp_path, name, b"\n".join(lines[i] for i in order) + b"\n", "--breakdown")


# Values a record's field may hold instead of the expected one.
ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e308, -1.0, 0.5, "", "x", "NaN", "../../etc/passwd", "a\x00b", "\n"]),
    st.lists(st.integers(0, 3), max_size=3),
    st.dictionaries(st.sampled_from(["type", "id", "text", "content"]), st.text(max_size=3)),
)


def _choices(value: Any) -> int:
    """How many keys and items ``_mangle`` may decide about in ``value``, at every depth."""
    if isinstance(value, dict):
        return sum(1 + _choices(item) for item in value.values())
    if isinstance(value, list):
        return sum(1 + _choices(item) for item in value)
    return 0


def mangled(record: Any, draw: Any) -> Any:
    """``record`` with some keys removed and others given a value of the wrong type, at every
    depth. The choices (0-9 each) come from one drawn byte string: a draw per key spent most
    of the test's time in Hypothesis."""
    size = _choices(record)
    choices = iter(draw(st.binary(min_size=size, max_size=size)))
    return _mangle(record, draw, choices)


def _mangle(value: Any, draw: Any, choices: Iterator[int]) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            action = next(choices) % 10
            if action == 0:
                continue
            out[key] = draw(ODD_VALUES) if action == 1 else _mangle(item, draw, choices)
        return out
    if isinstance(value, list):
        return [
            draw(ODD_VALUES) if next(choices) % 10 == 0 else _mangle(item, draw, choices)
            for item in value
        ]
    return value


@FUZZ
@given(name=st.sampled_from(JSONL), data=st.data())
def test_fields_missing_or_wrongly_typed(tmp_path: Path, name: str, data: st.DataObject) -> None:
    out = []
    for raw in SAMPLES[name].read_bytes().splitlines():
        try:
            record = json.loads(raw)
        except json.JSONDecodeError:
            out.append(raw)
            continue
        out.append(json.dumps(mangled(record, data.draw)).encode())
    report_of(tmp_path, name, b"\n".join(out) + b"\n", "--breakdown")


@pytest.mark.parametrize("name", JSONL)
@pytest.mark.parametrize("value", [1e308, 2**80, -5, float("nan"), "12"])
def test_absurd_token_counts(tmp_path: Path, name: str, value: Any) -> None:
    """Every number in the log replaced: the report shows no negative, infinite or
    impossibly large token figure, and ctxtop does not fail on one."""
    out = []
    for raw in SAMPLES[name].read_bytes().splitlines():
        out.append(json.dumps(_numbers_to(json.loads(raw), value)).encode())
    path = tmp_path / SAMPLES[name].name
    path.write_bytes(b"\n".join(out) + b"\n")
    ended = run_cli("report", str(path), "--json")
    assert_clean_end(ended, path)
    if ended.code == 0:
        totals = json.loads(ended.out)["totals"]
        for figure in totals.values():
            assert isinstance(figure, int) and 0 <= figure < 10**15, totals


def _numbers_to(value: Any, number: Any) -> Any:
    if isinstance(value, dict):
        return {key: _numbers_to(item, number) for key, item in value.items()}
    if isinstance(value, list):
        return [_numbers_to(item, number) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number
    return value


@pytest.mark.parametrize("name", JSONL)
def test_invalid_utf8_and_nesting(tmp_path: Path, name: str) -> None:
    lines = SAMPLES[name].read_bytes().splitlines()
    middle = len(lines) // 2
    hostile = [
        b'{"type": "user", "text": "\xff\xfe\xc3"}',  # invalid UTF-8
        b"[" * 200_000 + b"]" * 200_000,  # nested past any recursion limit
        b'{"type":' + b'{"a":' * 900 + b"1" + b"}" * 900 + b"}",  # nested just inside it
        b'{"type": "user", "message": ' + b"[" * 950 + b"]" * 950 + b"}",
        b"\x00" * 100,
        b"\xef\xbb\xbf" + lines[0],  # a byte-order mark
    ]
    path = tmp_path / SAMPLES[name].name
    path.write_bytes(b"\n".join([*lines[:middle], *hostile, *lines[middle:]]) + b"\n")
    ended = run_cli("report", str(path), "--json")
    assert_clean_end(ended, path)
    assert ended.code == 0
    skipped = json.loads(ended.out)["skipped_lines"]
    assert {row["line"] for row in skipped} >= {middle + 1, middle + 2}
    assert all(row["file"] == str(path) for row in skipped)


EDITABLE = ["claude-code", "codex", "openai-messages"]


@FUZZ
@given(name=st.sampled_from(EDITABLE), command=st.sampled_from(["edit", "compact"]), data=st.data())
def test_edit_and_compact_of_mangled_records(
    tmp_path: Path, name: str, command: str, data: st.DataObject
) -> None:
    """The writers parse the agent's records themselves (to change them byte for byte)."""
    out = []
    for raw in SAMPLES[name].read_bytes().splitlines():
        out.append(json.dumps(mangled(json.loads(raw), data.draw)).encode())
    path = tmp_path / SAMPLES[name].name
    path.write_bytes(b"\n".join(out) + b"\n")
    extra = ["--keep-cycles", "0"] if command == "edit" else ["--keep-rounds", "0"]
    assert_clean_end(run_cli(command, str(path), "--dry-run", *extra), path)


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("name", EDITABLE)
@pytest.mark.parametrize("depth", [500, 900])
def test_a_deeply_nested_record_in_every_command(tmp_path: Path, name: str, depth: int) -> None:
    """Nested just inside the JSON decoder's limit, a record still reaches the code that walks
    records recursively (the Codex writer rewrites ids at every depth)."""
    lines = SAMPLES[name].read_bytes().splitlines()
    record = json.loads(lines[-1])
    holder = next(
        (record[k] for k in ("payload", "message") if isinstance(record.get(k), dict)), record
    )
    holder["nested"] = _nested(depth)
    path = tmp_path / SAMPLES[name].name
    path.write_bytes(b"\n".join([*lines, json.dumps(record).encode()]) + b"\n")
    commands = (
        ["report"],
        ["edit", "--dry-run", "--keep-cycles", "0"],
        ["compact", "--dry-run", "--keep-rounds", "0"],
    )
    for argv in commands:
        assert_clean_end(run_cli(argv[0], str(path), *argv[1:]), path)


def test_compact_of_a_log_whose_window_leaves_no_room(tmp_path: Path) -> None:
    """Found by the fuzz test above: a Codex log whose context window is 3 tokens gave an error
    that did not name the file; it is one line naming the file and the window."""
    path = tmp_path / SAMPLES["codex"].name
    text = SAMPLES["codex"].read_text(encoding="utf-8")
    assert '"model_context_window":' in text
    path.write_text(
        "\n".join(json.dumps(_tiny_window(json.loads(line))) for line in text.splitlines() if line)
        + "\n",
        encoding="utf-8",
    )
    ended = run_cli("compact", str(path), "--dry-run", "--keep-rounds", "0")
    assert_clean_end(ended, path)
    assert ended.code == 2 and "(3 tokens) leaves no room for a summary" in ended.err


def _tiny_window(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: 3 if k == "model_context_window" else _tiny_window(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tiny_window(v) for v in value]
    return value
