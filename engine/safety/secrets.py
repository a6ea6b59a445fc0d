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
    (
        "bearer-token",
        re.compile(r"(?i)\bbearer\s++(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
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


_SECRET_NAME = re.compile("KEY|SECRET|TOKEN|PASSWORD|PASSWD", re.IGNORECASE)


def _replace(text: str, name: str, pattern: re.Pattern[str]) -> tuple[str, int]:
    found = 0

    def mask(match: re.Match[str]) -> str:
        nonlocal found
        if "[masked " in match.group(0):
            return match.group(0)
        if "name" in pattern.groupindex and not _SECRET_NAME.search(match.group("name")):
            return match.group(0)
        if "secret" in pattern.groupindex:
            start, end = match.span("secret")
            if match.group("secret").replace(".", "").isdigit():
                return match.group(0)  # max_tokens=128000: a number, not a secret
            found += 1
            whole = match.group(0)
            offset = match.start()
            return whole[: start - offset] + f"[masked {name}]" + whole[end - offset :]
        found += 1
        return f"[masked {name}]"

    return pattern.sub(mask, text), found


def mask_secrets(text: str, exact: Iterable[str] = ()) -> tuple[str, int]:
    """``text`` with every known secret shape (and every ``exact`` value) masked; the count."""
    total = 0
    for value in exact:
        if value and value in text:
            total += text.count(value)
            text = text.replace(value, "[masked endpoint-key]")
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
        """Every string inside a JSON value masked (keys are left as they are)."""
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, list):
            return [self.mask_json(item) for item in value]
        if isinstance(value, dict):
            return {key: self.mask_json(item) for key, item in value.items()}
        return value
