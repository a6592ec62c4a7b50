"""``doc_search`` over the shipped corpus *and* the user's documents, merged into one ranked list.

The built-in tool runs wherever the executors run (another process, another node), so it cannot be handed a
``DocumentIndex`` object: it finds the user's index through a path, set for the duration of one tool call with
``user_documents(path)`` (the tools dispatcher does this with its executor's store, so two Orchestrators in one
process each search their own documents), else read from the ``TETRARCH_USER_DOCUMENTS`` environment
variable. With neither set, ``doc_search`` searches the shipped corpus only.

The path is a ``contextvars.ContextVar``: a block's choice reaches the asyncio tasks it starts and the threads of
``asyncio.to_thread`` (which copy the context), not threads started otherwise (``loop.run_in_executor``).

The two rankings are on different scales (pure-Python BM25 over whole corpus documents, FTS5 bm25 over
chunks), so each list's scores are divided by its own best score before merging: the best hit of each source
scores 1.0 and ties go to the user's documents, which the user added on purpose.

This module knows nothing of the tool (``agents.tools.builtins.docsearch`` imports it, not the other way):
corpus hits are anything with a ``score`` and ``as_dict()``.

Example:
    >>> mine = [Passage("doc-1", "notes.md", "Notes", 0, 0, 20, "Paris has 2.1 million", 3.0)]
    >>> other = Passage("paris", "corpus", "Paris", 0, 0, 9, "Paris: ...", 8.0)
    >>> [h["doc_id"] for h in merge_hits([other], mine, k=2)]
    ['doc-1', 'paris']
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

from agents.memory.documents import DocumentIndex, Passage

__all__ = ["USER_DOCUMENTS_ENV", "Hit", "merge_hits", "user_documents", "user_documents_path", "user_passages"]

USER_DOCUMENTS_ENV = "TETRARCH_USER_DOCUMENTS"
"""Environment variable naming the store file whose ``doc_*`` tables ``doc_search`` also searches."""

class Hit(Protocol):
    score: float

    def as_dict(self) -> dict[str, Any]: ...


_scoped: ContextVar[Path | None] = ContextVar("tetrarch_user_documents", default=None)
_indexes: dict[str, DocumentIndex] = {}
_lock = threading.Lock()


@contextlib.contextmanager
def user_documents(path: str | os.PathLike[str] | None) -> Iterator[None]:
    """``doc_search`` calls inside this block (and the asyncio tasks and ``asyncio.to_thread`` calls it starts)
    also search the documents indexed in ``path``. None leaves the choice as it is (an enclosing block's, else
    the environment's).

    >>> with user_documents("/tmp/store.db"):
    ...     str(user_documents_path())
    '/tmp/store.db'
    """
    if path is None:
        yield
        return
    token = _scoped.set(Path(path).expanduser())
    try:
        yield
    finally:
        _scoped.reset(token)


def user_documents_path() -> Path | None:
    """The store file of the enclosing ``user_documents`` block, else the environment's, else None."""
    scoped = _scoped.get()
    if scoped is not None:
        return scoped
    env = os.environ.get(USER_DOCUMENTS_ENV, "").strip()
    return Path(env).expanduser() if env else None


def _index(path: Path) -> DocumentIndex | None:
    # One connection per process and file: doc_search is called per step, opening SQLite each time would
    # cost more than the query. A file that does not exist yet holds no documents: never create it here.
    if not path.exists():
        return None
    key = str(path)
    with _lock:
        if key not in _indexes:
            _indexes[key] = DocumentIndex(path)
        return _indexes[key]


def merge_hits(corpus: Sequence[Hit], passages: Sequence[Passage], k: int) -> list[dict[str, Any]]:
    """The ``k`` best of both lists as ``doc_search`` returns them; user passages carry ``source``, ``chunk``,
    ``start`` and ``end`` for citation, corpus hits keep their usual keys."""
    # (relative score desc, rank within its own list, user documents before the corpus on a tie)
    ranked: list[tuple[float, int, int, dict[str, Any]]] = []
    for source_order, hits in enumerate((passages, corpus)):
        top = max((h.score for h in hits), default=0.0)
        for position, hit in enumerate(hits):
            relative = hit.score / top if top > 0 else 0.0
            ranked.append((-relative, position, source_order, hit.as_dict()))
    ranked.sort(key=lambda r: r[:3])
    return [entry for *_, entry in ranked[:k]]


def user_passages(query: str, k: int) -> list[Passage] | None:
    """The user's best passages for ``query``, or None when no user document store is set for this call
    (``user_documents`` / ``TETRARCH_USER_DOCUMENTS``)."""
    path = user_documents_path()
    index = _index(path) if path is not None else None
    return None if index is None else index.search(query, k)
