"""Versioned prompt templates, token counting and prompt assembly.

Importing this package makes ``tiktoken.get_encoding("cl100k_base" | "o200k_base")`` work offline.
"""

from prompts.tokens import count_message_tokens, count_tokens, ensure_offline_encodings, get_encoding

ensure_offline_encodings()

__all__ = ["count_tokens", "count_message_tokens", "get_encoding", "ensure_offline_encodings"]
