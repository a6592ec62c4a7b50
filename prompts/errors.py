"""Prompt errors; each message says what to change."""

from __future__ import annotations

__all__ = ["PromptBudgetError", "PromptError", "PromptFormatError", "PromptNotFoundError", "PromptVariableError"]


class PromptError(Exception):
    """Base of every prompts error."""


class PromptNotFoundError(PromptError):
    """No template with that name/version; the message lists what exists."""


class PromptVariableError(PromptError):
    """A render call passed a variable the template does not declare, or missed one it needs."""


class PromptFormatError(PromptError):
    """A template file is malformed (header, sections, or placeholders not declared)."""


class PromptBudgetError(PromptError):
    """The prompt does not fit its token budget even with every context variable trimmed away."""

    def __init__(self, message: str, *, needed: int, budget: int) -> None:
        super().__init__(message)
        self.needed = needed
        self.budget = budget

    def __reduce__(self) -> tuple[object, ...]:
        # Raised inside role actors: Ray pickles it to the Supervisor, and the default pickling calls
        # __init__(message) without the keyword-only fields, so the error arrived as Ray's own.
        return _rebuild_budget_error, (str(self), self.needed, self.budget)


def _rebuild_budget_error(message: str, needed: int, budget: int) -> PromptBudgetError:
    return PromptBudgetError(message, needed=needed, budget=budget)
