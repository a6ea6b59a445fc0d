"""``ctxtop count --messages`` on chat JSON of any shape: a count or a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import assert_clean_end, run_cli
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELD_VALUES = ANY_JSON | st.sampled_from(["user", "assistant", "tool", "system"])
MESSAGE = st.dictionaries(
    st.sampled_from(["role", "content", "name", "tool_calls", "tool_call_id", "function"]),
    FIELD_VALUES,
)
CALL = st.dictionaries(st.sampled_from(["id", "type", "function", "name", "arguments"]), ANY_JSON)


@settings(
    max_examples=150,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    messages=st.lists(MESSAGE | MESSAGE.map(lambda m: {**m, "tool_calls": [{}]}), max_size=4),
    calls=st.lists(CALL, max_size=3),
    tools=ANY_JSON,
    wrapped=st.booleans(),
    model=st.sampled_from(["gpt-5", "claude-sonnet-4-5", "gemini-2.5-pro"]),
)
def test_chat_json_of_any_shape(
    tmp_path: Path, messages: list, calls: list, tools: object, wrapped: bool, model: str
) -> None:
    if messages and calls:
        messages[0] = {**messages[0], "tool_calls": calls}
    document = {"messages": messages, "tools": tools} if wrapped else messages
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(document))
    assert_clean_end(run_cli("count", str(path), "--messages", "--model", model), path)
