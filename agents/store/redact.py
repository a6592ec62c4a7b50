"""Secret redaction applied to every JSON value before it reaches the database or a blob file.

The redactor walks the JSON tree (keys and string values) rather than the serialised text, so a
secret is found even where JSON escaping would have changed its bytes (quotes, backslashes).

Example:
    >>> r = Redactor.build(["hunter2-password"])
    >>> r.redact({"note": "pw hunter2-password", "key": "sk-" + "a" * 24})
    {'note': 'pw [REDACTED]', 'key': '[REDACTED]'}
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agents.store.errors import SecretTooShortError

__all__ = ["KEY_PATTERNS", "MIN_SECRET_LEN", "REDACTED", "Redactor"]

REDACTED = "[REDACTED]"
MIN_SECRET_LEN = 4
"""Shorter "secrets" would shred ordinary text ("a", "the"), so they are refused, not silently applied."""

KEY_PATTERNS: tuple[str, ...] = (
    r"sk-(?:proj-|ant-|or-v1-)?[A-Za-z0-9_-]{20,}",  # OpenAI / Anthropic / OpenRouter style keys
    r"gh[pousr]_[A-Za-z0-9]{36,}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{40,}",
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
    r"xox[abprs]-[A-Za-z0-9-]{10,}",  # Slack
    r"AKIA[0-9A-Z]{16}",  # AWS access key id
    r"AIza[0-9A-Za-z_-]{35}",  # Google API key
)
"""Common API-key shapes, redacted even when nobody registered them as secrets."""


@dataclass(frozen=True, slots=True)
class Redactor:
    """Immutable: ``with_secret`` returns a new redactor, so readers never see a half-built pattern."""

    secrets: tuple[str, ...]
    pattern: re.Pattern[str]
    json_pattern: re.Pattern[str]
    """Matches wherever ``pattern`` would match inside a string of compact JSON text (secrets also in
    their JSON-escaped spelling): ``needs_redaction`` lets the writer skip the tree walk for the common
    case of nothing to hide, which would otherwise cost O(state size) Python calls per checkpoint."""

    @classmethod
    def build(cls, secrets: Iterable[str] = ()) -> Redactor:
        """A redactor for ``secrets`` (empty strings are skipped: an unset env var is not a secret)."""
        kept: list[str] = []
        for secret in secrets:
            if not secret:
                continue
            if len(secret) < MIN_SECRET_LEN:
                raise SecretTooShortError(len(secret), MIN_SECRET_LEN)
            if secret not in kept:
                kept.append(secret)
        # Longest first, so a secret that contains another one is replaced whole.
        ordered = sorted(kept, key=len, reverse=True)
        literals = [re.escape(s) for s in ordered]
        # JSON escapes characters one at a time, so a secret inside a string shows up in the text as its
        # own escaped spelling; the key shapes use no character JSON escapes.
        escaped = [re.escape(json.dumps(s, ensure_ascii=False)[1:-1]) for s in ordered]
        return cls(tuple(kept), re.compile("|".join(literals + list(KEY_PATTERNS))),
                   re.compile("|".join(dict.fromkeys(literals + escaped + list(KEY_PATTERNS)))))

    def needs_redaction(self, json_text: str) -> bool:
        """False only if ``redact`` would change nothing in the value ``json_text`` encodes."""
        return self.json_pattern.search(json_text) is not None

    def with_secret(self, secret: str) -> Redactor:
        return Redactor.build((*self.secrets, secret))

    def redact_text(self, text: str) -> str:
        return self.pattern.sub(REDACTED, text)

    def redact_checked(self, value: Any) -> Any:
        """``redact``, or ``value`` itself (not a copy) when its compact JSON text shows nothing to replace: the
        text check runs at C speed, the tree walk it skips costs a Python call per node (a task's whole result)."""
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):  # not JSON-shaped after all: the walk copes with what it can
            return self.redact(value)
        return self.redact(value) if self.needs_redaction(text) else value

    def redact(self, value: Any) -> Any:
        """A copy of a JSON-shaped value with every secret in keys and strings replaced."""
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, dict):
            return {self.redact(k) if isinstance(k, str) else k: self.redact(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.redact(v) for v in value]
        return value
