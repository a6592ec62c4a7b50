"""What ``Orchestrator.submit`` accepts as a task: checked in the driver, before anything is stored or sent.

A task the store cannot encode (a lone surrogate) reached SQLite inside the Supervisor and came back as a raw Ray
error; a task longer than a prompt's budget failed later as ``internal_error`` with advice (resume) that cannot
work. Both are the caller's to fix, so both are a ``ConfigError`` at once.

Example:
    >>> check_task_text("Which is bigger, Paris or Rome?", 6000)
    >>> check_task_text("bad \\ud800", 6000)
    Traceback (most recent call last):
    agents.errors.ConfigError: the task text holds a lone surrogate ('\\ud800') at index 4, which is not valid Unicode ...
"""

from __future__ import annotations

from typing import Any

from agents.config import MAX_TEXT_CHARS
from agents.errors import ConfigError, TextTooLongError

__all__ = ["check_task_text", "check_text_length"]


def check_text_length(text: Any, what: str) -> None:
    """Raise ``TextTooLongError`` when ``text`` is a string over the one limit for any text (``MAX_TEXT_CHARS``):
    checked by its length, before anything counts its tokens (docs/reliability.md, "Text limits")."""
    if isinstance(text, str) and len(text) > MAX_TEXT_CHARS:
        raise TextTooLongError(what, len(text), MAX_TEXT_CHARS)


def check_task_text(task: Any, budget_tokens: int) -> None:
    """Raise ``ConfigError`` unless ``task`` is non-empty, valid Unicode text that fits ``budget_tokens``."""
    if not isinstance(task, str) or not task.strip():
        raise ConfigError("task must be a non-empty string describing what to do")
    check_text_length(task, "task")
    try:
        task.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ConfigError(
            f"the task text holds a lone surrogate ({task[exc.start]!r}) at index {exc.start}, which is not valid "
            "Unicode text and cannot be stored; decode your input with errors='replace' (or fix the escape "
            "sequence) and submit again") from None
    # Cheap bound first: a token is at least one character, so a text this short always fits.
    if len(task) <= budget_tokens:
        return
    from prompts import count_tokens

    tokens = count_tokens(task)
    # Every role's prompt holds the task plus its instructions; a task over the whole budget can never fit.
    if tokens > budget_tokens:
        raise ConfigError(
            f"the task is {tokens} tokens ({len(task)} characters), over the prompt budget "
            f"RuntimeConfig.context_token_budget={budget_tokens}; shorten it (put long material in documents: "
            "orch.add_documents) or raise context_token_budget if your model's context window allows")
