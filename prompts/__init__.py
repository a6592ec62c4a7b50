"""Versioned prompt templates, token counting and prompt assembly.

Importing this package makes ``tiktoken.get_encoding("cl100k_base" | "o200k_base")`` work offline.

    >>> from prompts import load_prompt
    >>> load_prompt("router", "v5").variables
    ('tool_purposes', 'task', 'history')
"""

from prompts.tokens import count_message_tokens, count_tokens, ensure_offline_encodings, get_encoding

ensure_offline_encodings()

from prompts.assemble import AssembledPrompt, ContextItem, assemble
from prompts.errors import (
    PromptBudgetError,
    PromptError,
    PromptFormatError,
    PromptNotFoundError,
    PromptVariableError,
)
from prompts.fence import fence_untrusted
from prompts.registry import (PromptRegistry, PromptTemplate, RenderedPrompt, available_prompts, load_prompt,
                              prepare_prompts)

__all__ = [
    "AssembledPrompt",
    "ContextItem",
    "PromptBudgetError",
    "PromptError",
    "PromptFormatError",
    "PromptNotFoundError",
    "PromptRegistry",
    "PromptTemplate",
    "PromptVariableError",
    "RenderedPrompt",
    "assemble",
    "available_prompts",
    "count_message_tokens",
    "count_tokens",
    "ensure_offline_encodings",
    "fence_untrusted",
    "get_encoding",
    "load_prompt",
    "prepare_prompts",
]
