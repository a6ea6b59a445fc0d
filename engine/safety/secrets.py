"""Masking known secret shapes in conversation text before it leaves the agent's own files.

A session log holds whatever tools returned: ``cat .env``, ``env``, a config file, a private
key. Before such text is sent to an LLM endpoint or written to a file ctxtop exports, every match
of the pattern table below is replaced by ``[masked <name>]``, and the caller tells the user how
many were masked. The patterns favour recall over precision: a masked look-alike costs little,
a leaked key a lot. Exact values (the endpoint's own key) can be added to a ``SecretMasker``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# (name, pattern): the whole match is masked, or only the group named "secret" where there is
# one (so that "Bearer " or "API_KEY=" stays readable). Order matters: more specific first.
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----"
            r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----|.*\Z)",
            re.DOTALL,
        ),
    ),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_live_[A-Za-z0-9]{16,}")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("gitlab-token", re.compile(r"\bgl(?:pat|dt|ptt|rt)-[A-Za-z0-9_-]{20,}")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36,}")),
    ("pypi-token", re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{50,}")),
    ("google-oauth-token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}")),
    (
        "bearer-token",
        re.compile(r"(?i)\bbearer\s++(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
    ),
    # A JSON Web Token on its own (a cookie, an id_token in a log): header.payload.signature,
    # the first two base64url JSON objects ("eyJ" is how '{"' encodes).
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+")),
    # scheme://user:PASSWORD@host: the password only (the user and host stay readable).
    (
        "url-credentials",
        re.compile(
            r"\b[A-Za-z][A-Za-z0-9+.-]{0,30}+://[^\s:/@]{1,200}+:(?P<secret>[^\s/@]{1,200}+)@"
        ),
    ),
    # password = "two words" (TOML, INI, code): a quoted value whole, spaces and all.
    (
        "quoted-assignment",
        re.compile(
            r"\b(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,80}+)[\"']?\s*+[:=]\s*+"
            r"(?P<quote>[\"'])(?P<secret>[^\"'\n]{6,300}+)(?P=quote)"
        ),
    ),
    # db_password: value (YAML): the unquoted value up to the end of the line or a comment.
    (
        "yaml-assignment",
        re.compile(
            r"(?m)\b(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,80}+)[\"']?:[ \t]++"
            r"(?P<secret>[^\s\"'#{}\[\],&*!|>][^\s#,]{5,}+)"
        ),
    ),
    (
        "env-assignment",
        re.compile(
            # Any name (possessive: matching a name that must hold KEY, tried at every KEY of a
            # long run like KEYKEYKEY…, backtracked quadratically; 60 KB took 11 s). Whether
            # the name holds KEY, SECRET, TOKEN or PASSWORD is checked on the match.
            r"\b(?P<name>[A-Za-z_][A-Za-z0-9_]*+)\s*+=\s*+[\"']?"
            # Possessive, so that a call (tokens = encoding.count(text)) is not cut short to fit.
            r"(?P<secret>[^\s\"'$`{}()\[\],;<>]{6,}+)(?!\()"
        ),
    ),
)


# A name holds a secret if one of its words ends in one of these: GITHUB_TOKEN, DBPASSWORD,
# apiKey, private_key_id; not tokenizer, max_tokens or keyboard.
_SECRET_WORD = re.compile(
    r"(?:key|secret|token|password|passwd|passphrase|credentials?)[0-9]*\Z", re.IGNORECASE
)
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")


def secret_name(name: str) -> bool:
    """Whether a variable, setting or JSON key of this name holds a secret (by its words)."""
    return any(_SECRET_WORD.search(word) for word in _WORD.findall(name))


# The endpoint's own key is masked only where it stands as a token of its own, and only if it is
# long enough to be a key: OPENAI_API_KEY=none must not mask every word "none".
MIN_EXACT_KEY = 12
# The shortest text under a secret's key in JSON that is masked ("none", "true" and "<set>" are
# not secrets).
MIN_FIELD_SECRET = 6
_KEY_CHAR = r"A-Za-z0-9_\-"


def _replace(text: str, name: str, pattern: re.Pattern[str]) -> tuple[str, int]:
    found = 0
    parts: list[str] = []
    done = 0  # text[:done] is in parts
    position = 0
    while (match := pattern.search(text, position)) is not None:
        has_secret = "secret" in pattern.groupindex
        if "[masked " in match.group(0) or (
            "name" in pattern.groupindex and not secret_name(match.group("name"))
        ):
            # Not a secret here. A quoted value (300 characters at most) is looked at again, as
            # it may hold one: `request: "… password = "two words"`.
            quoted = "quote" in pattern.groupindex
            position = max(match.start("secret") if quoted else match.end(), match.start() + 1)
            continue
        start, end = match.span("secret") if has_secret else match.span()
        if has_secret and match.group("secret").replace(".", "").isdigit():
            position = match.end()  # max_tokens=128000: a number, not a secret
            continue
        found += 1
        parts += [text[done:start], f"[masked {name}]"]
        done = position = max(end, match.start() + 1)
    parts.append(text[done:])
    return "".join(parts), found


def mask_secrets(text: str, exact: Iterable[str] = ()) -> tuple[str, int]:
    """``text`` with every known secret shape (and every ``exact`` value) masked; the count."""
    total = 0
    for value in exact:
        if len(value) >= MIN_EXACT_KEY and value in text:
            token = re.compile(rf"(?<![{_KEY_CHAR}]){re.escape(value)}(?![{_KEY_CHAR}])")
            text, found = token.subn("[masked endpoint-key]", text)
            total += found
    for name, pattern in PATTERNS:
        text, found = _replace(text, name, pattern)
        total += found
    return text, total


@dataclass(slots=True)
class SecretMasker:
    """Masks text after text and keeps the running count to tell the user."""

    exact: tuple[str, ...] = ()
    count: int = 0

    def mask(self, text: str) -> str:
        masked, found = mask_secrets(text, self.exact)
        self.count += found
        return masked

    def mask_json(self, value: Any) -> Any:
        """Every string inside a JSON value masked (keys are left as they are), and the whole
        text under a key that names a secret (a tool's input ``{"private_key_id": "3f2a…"}``:
        the text alone has no shape to know it by)."""
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, list):
            return [self.mask_json(item) for item in value]
        if isinstance(value, dict):
            return {key: self._field(key, item) for key, item in value.items()}
        return value

    def _field(self, key: Any, value: Any) -> Any:
        if isinstance(value, str) and isinstance(key, str) and secret_name(key):
            looks_secret = len(value) >= MIN_FIELD_SECRET and "[masked " not in value
            if looks_secret and not value.replace(".", "").isdigit():
                self.count += 1
                return "[masked secret-field]"
        return self.mask_json(value)
