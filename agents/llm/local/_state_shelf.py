"""Prefilled model states kept on disk across server starts (server child only).

At start-up ``agents.llm.local.warm`` prefills each role's static prompt (the shared opening, the tool list, the
role's instructions): ~1,600 prompt tokens at 30-45 tokens/s on two cores, most of a warm start's wait. The state
the server holds after such a prefill depends only on the model file, the llama.cpp build, the context size and the
prompt's tokens, so it is saved once and loaded on every later start: the warm-up requests then find their whole
prompt cached and read nothing.

A shelf is one directory per (model sha256, context size), named by the parent (``LlamaServer(state_dir=...)``);
inside it, one subdirectory per llama.cpp build (the package version and its shared libraries' sizes and times), and
one file per prefix, named by the sha256 of its tokens. Files are written atomically (a temporary name, then
``os.replace``); a file that cannot be read is skipped and removed. The shelf keeps at most ``max_bytes``, dropping
the least recently written first.

Loaded by file path from ``_launch.py`` (the child must not import the ``agents`` package).

Example:
    >>> import tempfile
    >>> shelf = StateShelf(tempfile.mkdtemp(), build="test", max_bytes=1 << 20)
    >>> shelf.save((1, 2, 3), {"llama_state": b"x" * 10})
    True
    >>> [(key, state["llama_state"]) for key, state in shelf.load()]
    [((1, 2, 3), b'xxxxxxxxxx')]
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["StateShelf", "build_fingerprint"]

_SUFFIX = ".state"


def build_fingerprint(package_dir: str, version: str) -> str:
    """The llama.cpp build a state was saved by: the package version and each shared library's name, size and
    modification time (a rebuild of the same version changes them)."""
    digest = hashlib.sha256(version.encode())
    lib_dir = Path(package_dir) / "lib"
    if lib_dir.is_dir():
        for lib in sorted(lib_dir.iterdir()):
            info = lib.stat()
            digest.update(f"{lib.name}:{info.st_size}:{info.st_mtime_ns}".encode())
    return f"{version}-{digest.hexdigest()[:12]}"


class StateShelf:
    """Prefix states by token key in ``root/<build>/``."""

    def __init__(self, root: str | os.PathLike[str], *, build: str, max_bytes: int) -> None:
        self.dir = Path(root) / build
        self.max_bytes = max_bytes

    @staticmethod
    def _name(key: Sequence[int]) -> str:
        return hashlib.sha256(",".join(map(str, key)).encode()).hexdigest()[:32] + _SUFFIX

    def has(self, key: Sequence[int]) -> bool:
        return (self.dir / self._name(key)).is_file()

    def save(self, key: Sequence[int], fields: dict[str, Any]) -> bool:
        """Write one state (its fields, picklable); False when it could not be written (a full disk costs the next
        start its prefill, nothing else)."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
            with os.fdopen(fd, "wb") as out:
                pickle.dump((tuple(key), fields), out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.dir / self._name(key))
        except OSError:
            return False
        self._trim()
        return True

    def load(self) -> Iterator[tuple[tuple[int, ...], dict[str, Any]]]:
        """Every readable state, in the order written (the most recent last, so a cache filled from it keeps the
        newest when it must drop some)."""
        for path in self._files(newest_first=False):
            try:
                with path.open("rb") as f:
                    key, fields = pickle.load(f)  # noqa: S301 - written by this code, in the user's own cache
            except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError):
                path.unlink(missing_ok=True)
                continue
            yield tuple(key), fields

    def _files(self, *, newest_first: bool) -> list[Path]:
        if not self.dir.is_dir():
            return []
        files = [p for p in self.dir.iterdir() if p.suffix == _SUFFIX]
        return sorted(files, key=lambda p: p.stat().st_mtime_ns, reverse=newest_first)

    def _trim(self) -> None:
        files = self._files(newest_first=False)
        total = sum(p.stat().st_size for p in files)
        for path in files:
            if total <= self.max_bytes:
                break
            total -= path.stat().st_size
            path.unlink(missing_ok=True)
