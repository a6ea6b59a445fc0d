"""Secrets in conversation text are masked before it is sent to an LLM endpoint or written to an
export (the compaction summary, the large-result files of ``ctxtop edit --offload``), and the
user is told how many were masked."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_run import ROOT, run_cli, run_offload_edit, run_subprocess

from ctxtop.engine.config import LLMSettings
from ctxtop.engine.forks.compact import compact_session
from ctxtop.engine.safety.secrets import PATTERNS, SecretMasker, mask_secrets

sys.path.insert(0, str(ROOT / "tests/compaction"))
from llm_server import SummaryServer

ENDPOINT_KEY = "endpoint-key-without-a-known-shape-5c1d"
KEY_VARIABLE = "CTXTOP_SECRETS_TEST_KEY"
# One of each shape the table knows (made up, of the right form), and the text it hides in.
SECRETS = {
    "anthropic-key": "sk-ant-api03-Zq8XcV2bN4mL6kJ9hG1fD3sA5pO7iU0yT2rE4wQ",
    "openai-key": "sk-proj-Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5Nm7",
    "github-token": "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "aws-access-key": "AKIAQ3EGRTHY7NPKZX4M",
    "google-api-key": "AIzaSyD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3wX4y",
    "slack-token": "xoxb-2048-4096-Zm9vYmFyYmF6cXV4",
    "stripe-key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "bearer-token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
    "private-key": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
    "env-assignment": "correct-horse-battery-staple",
    "url-credentials": "Pg-s3cret-Pa55",
    "quoted-assignment": "two words and-more",
    "yaml-assignment": "yaml-s3cret-value",
    "huggingface-token": "hf_QmWnEbRvTcYxUzIaOsPdLfKgJhMqNwBeVrCt",
    "gitlab-token": "glpat-Xy9Kw3Lm5Np7Qr1St3Uv",
    "npm-token": "npm_Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8Ii9Jj0Kk1Ll2",
    "pypi-token": "pypi-AgEIcHlwaS5vcmcCJGE0YjM5ZDUyLTk2ZGYtNDA3Yi05YjQ0LWM5NmUwOGNm",
    "google-oauth-token": "ya29.a0AfH6SMBx3Jk9Lm2Np4Qr6St8Uv0Wx",
    "jwt": "eyJhbGciOiJSUzI1NiJ9.eyJlbWFpbCI6ImRldkBleGFtcGxlLmNvbSJ9.U2lnbmVkQnlUaGVJc3N1ZXI",
}
LEAKY_OUTPUT = (
    "cat .env\n"
    f"ANTHROPIC_API_KEY={SECRETS['anthropic-key']}\n"
    f"OPENAI_API_KEY='{SECRETS['openai-key']}'\n"
    f"GITHUB_TOKEN={SECRETS['github-token']}\n"
    f"aws_access_key_id = {SECRETS['aws-access-key']}\n"
    f'maps: "{SECRETS["google-api-key"]}"\n'
    f"slack: {SECRETS['slack-token']}\n"
    f"stripe: {SECRETS['stripe-key']}\n"
    f"curl -H 'Authorization: Bearer {SECRETS['bearer-token']}' https://api.example.com\n"
    "-----BEGIN RSA PRIVATE KEY-----\n"
    f"{SECRETS['private-key']}\n"
    "-----END RSA PRIVATE KEY-----\n"
    f"DB_PASSWORD={SECRETS['env-assignment']}\n"
    f"DATABASE_URL=postgres://app:{SECRETS['url-credentials']}@db.internal:5432/app\n"
    f'password = "{SECRETS["quoted-assignment"]}"\n'
    f"  db_password: {SECRETS['yaml-assignment']}\n"
    f"pasted by mistake: {ENDPOINT_KEY}\n"
    f"huggingface-cli login --token {SECRETS['huggingface-token']}\n"
    f"echo {SECRETS['gitlab-token']} | glab auth login --stdin\n"
    f"//registry.npmjs.org/:_authToken={SECRETS['npm-token']}\n"
    f"twine upload -u __token__ -p {SECRETS['pypi-token']} dist/*\n"
    f"access_token: {SECRETS['google-oauth-token']}\n"
    f"Set-Cookie: session={SECRETS['jwt']}; HttpOnly\n"
)
COMMAND = (
    f"GITHUB_TOKEN={SECRETS['github-token']} ./deploy.sh --check "
    f"--db postgres://app:{SECRETS['url-credentials']}@db.internal/app; cat .env"
)
ORDINARY = (
    "max_tokens=128000\ntokens = encoding.count(text)\nsecret_name = None\n"
    "the task-runner skips slow tests\nsk-learn is not a key\n"
    # git output, ids and hashes are no secrets
    "commit 3f2a9c1e7b8d4f6a0c5e1b2d9f8a7c6e5d4b3a21\nindex 83db48f..bf269f4 100644\n"
    '"session_id": "1af7c0de-0000-4000-8000-000000000001",\n'
    '"sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",\n'
    '"tokenizer": "o200k_base", "max_tokens": 4096,\n'
    "HF_HOME=/home/dev/.cache/huggingface\n"
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk\n"
)


def test_every_shape_of_the_table_is_masked_and_ordinary_code_is_not() -> None:
    masked, count = mask_secrets(LEAKY_OUTPUT, exact=[ENDPOINT_KEY])
    for name, secret in SECRETS.items():
        assert secret not in masked, name
        assert f"[masked {name}]" in masked, name
    assert ENDPOINT_KEY not in masked
    assert count == len(SECRETS) + 1
    assert {name for name, _ in PATTERNS} == set(SECRETS)
    assert mask_secrets(ORDINARY) == (ORDINARY, 0)


def _leaky_session(tmp_path: Path) -> Path:
    """An OpenAI-format session: an early round reads .env (every secret in it), later rounds
    do harmless work."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {
            "role": "user",
            "content": f"Why does the deploy fail? I set sk {SECRETS['openai-key']}"
            f' and config.toml has password = "{SECRETS["quoted-assignment"]}"\n'
            f"db_password: {SECRETS['yaml-assignment']}",
        },
    ]
    for n in range(3):
        call = f"call_{n}"
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [{"id": call, "type": "function",
             "function": {"name": "run_shell", "arguments": json.dumps({"command": COMMAND})}}],
             "usage": {"prompt_tokens": 1000 + n, "completion_tokens": 10}},
            {"role": "tool", "tool_call_id": call, "content": LEAKY_OUTPUT + ORDINARY * 40},
        ]  # fmt: skip
    messages += [
        {"role": "assistant", "content": "The key is set; the deploy fails on a timeout."},
        {"role": "user", "content": "Raise the timeout then."},
        {"role": "assistant", "content": "Done: the timeout is now 60 s."},
    ]
    path = tmp_path / "leaky.json"
    path.write_text(json.dumps(messages), "utf-8")
    return path


def _assert_no_secret(text: str, endpoint_key: bool = True) -> None:
    for name, secret in SECRETS.items():
        assert secret not in text, name
    assert not endpoint_key or ENDPOINT_KEY not in text


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_nothing_secret_is_sent_to_the_llm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, protocol: str
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, ENDPOINT_KEY)
    session = _leaky_session(tmp_path)
    with SummaryServer("good") as server:
        settings = LLMSettings(
            base_url=server.url + ("/v1" if protocol == "openai" else ""),
            model="cheap-model",
            api_key_env=KEY_VARIABLE,
            protocol=protocol,
        )
        outcome = compact_session(session, summarizer="llm", keep_rounds=1, llm=settings).as_json()
        requests = server.requests
    assert outcome["summarizer"] == "llm"
    [request] = requests
    sent = json.dumps(request["body"], ensure_ascii=False)
    _assert_no_secret(sent)
    assert "[masked openai-key]" in sent and "[masked endpoint-key]" in sent
    # Each secret in the summarised part is sent once (the kept round holds none).
    planted = session.read_text("utf-8")
    expected = sum(planted.count(value) for value in [*SECRETS.values(), ENDPOINT_KEY])
    assert outcome["secrets_masked"] == expected
    assert "max_tokens=128000" in sent  # ordinary text goes as it is


GCP_KEY_ID = "3f2a9c1e7b8d4f6a0c5e1b2d9f8a7c6e5d4b3a21"  # 40 hex digits, as git's hashes
SERVICE_ACCOUNT = {
    "type": "service_account",
    "project_id": "demo-project",
    "private_key_id": GCP_KEY_ID,
    "client_id": "104729834750293847561",
    "tokenizer": "o200k_base",
    "api_key": "none",  # too short to be one
    "max_tokens": 4096,
}


def test_a_value_under_a_secrets_key_is_masked_and_other_fields_are_not() -> None:
    masker = SecretMasker()
    masked = masker.mask_json({"name": "write_file", "input": SERVICE_ACCOUNT})
    assert masked == {
        "name": "write_file",
        "input": {**SERVICE_ACCOUNT, "private_key_id": "[masked secret-field]"},
    }
    assert masker.count == 1
    text, count = mask_secrets(json.dumps(SERVICE_ACCOUNT, indent=2))  # cat sa.json
    assert GCP_KEY_ID not in text and count == 1
    assert "o200k_base" in text and "104729834750293847561" in text


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_tool_input_holding_a_key_id_is_not_sent_to_the_llm(
    tmp_path: Path, protocol: str
) -> None:
    """The Anthropic request sends a tool's input as an object: the key id is text without a
    shape, known only by its key."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "create_key", "arguments": json.dumps(SERVICE_ACCOUNT)},
    }
    messages = [
        {"role": "user", "content": "Create the service account key."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": f"created in commit 3f2a9c1 with {SECRETS['jwt']}"},
        {"role": "assistant", "content": "Created."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "You are welcome."},
    ]  # fmt: skip
    session = tmp_path / "account.json"
    session.write_text(json.dumps(messages))
    with SummaryServer("good") as server:
        settings = LLMSettings(
            base_url=server.url + ("/v1" if protocol == "openai" else ""),
            model="cheap-model",
            protocol=protocol,
        )
        compact_session(session, summarizer="llm", keep_rounds=1, llm=settings)
        [request] = server.requests
    sent = json.dumps(request["body"], ensure_ascii=False)
    assert GCP_KEY_ID not in sent and SECRETS["jwt"] not in sent
    assert "demo-project" in sent and "3f2a9c1" in sent


def test_the_structured_summary_and_the_command_say_how_many(tmp_path: Path) -> None:
    session = _leaky_session(tmp_path)
    ended = run_cli("compact", str(session), "--keep-rounds", "1", "--json")
    assert ended.code == 0, ended.err
    outcome = json.loads(ended.out)
    _assert_no_secret(outcome["summary"], endpoint_key=False)
    fork_summary = json.loads(Path(outcome["fork"]).read_text("utf-8"))
    _assert_no_secret(json.dumps(fork_summary[:2]), endpoint_key=False)
    assert outcome["secrets_masked"] > 0  # the request and the commands are quoted in it
    text = run_cli("compact", str(session), "--keep-rounds", "1", "--dry-run")
    assert text.code == 0
    assert f"secrets masked: {outcome['secrets_masked']} (in the summary" in text.out


def test_offloaded_results_are_written_masked(tmp_path: Path) -> None:
    session = _leaky_session(tmp_path)
    results = tmp_path / "results"
    ended = run_offload_edit(session, results, "200", "--json")
    assert ended.code == 0, ended.err
    outcome = json.loads(ended.out)
    files = [Path(name) for name in outcome["offloaded"]]
    assert files
    for path in files:
        _assert_no_secret(path.read_text("utf-8"), endpoint_key=False)
    assert "[masked github-token]" in files[0].read_text("utf-8")
    # The endpoint key is no shape the table knows, and edit sends nothing anywhere.
    assert outcome["secrets_masked"] == 3 * len(SECRETS)  # the results only, not the calls
    text = run_offload_edit(session, tmp_path / "again", "200", "--dry-run")
    assert f"secrets masked: {3 * len(SECRETS)}" in text.out


def test_masking_text_built_to_backtrack_ends(tmp_path: Path) -> None:
    """A tool result of 6 MB of KEYKEYKEY… (every position could start a KEY= name): masking
    it must not backtrack quadratically. The subprocess timeout is the hang check."""
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "KEY" * 2_000_000 + " TOKEN=" * 1000},
        {"role": "user", "content": "thanks"},
    ]  # fmt: skip
    session = tmp_path / "session.json"
    session.write_text(json.dumps(messages))
    ended = run_subprocess(
        "edit", str(session), "--offload", "--truncate-at", "200", "--mode", "none",
        "--large-results-dir", str(tmp_path / "results"), "--dry-run", timeout=120,
    )  # fmt: skip
    assert ended.code == 0, ended.err
