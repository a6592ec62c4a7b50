"""The user's documents (semantic memory): chunked, indexed with SQLite FTS5, ranked by bm25.

Tables (beside the task store's, in the same file): ``doc_documents`` (one row per document: id, source,
title, content hash), ``doc_chunks`` (each chunk's text and its character span in the document) and
``doc_chunks_fts``, an external-content FTS5 index over the chunks kept in step by triggers, tokenized with
``porter unicode61 remove_diacritics 2`` ("cities" finds "city", "Sao Paulo" finds "São Paulo").

Example:
    >>> index = DocumentIndex(":memory:")
    >>> [info.chunks for info in index.add(["The Danube flows through Vienna.\\n\\nThe Rhine flows past Basel."])]
    [1]
    >>> hit = index.search("rivers in Vienna", k=1)[0]
    >>> hit.text[hit.text.index("Vienna"):], hit.chunk_index, hit.start
    ('Vienna.\\n\\nThe Rhine flows past Basel.', 0, 0)
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.memory._db import Database
from agents.memory.chunking import Chunk, TokenCounter, chunk_text
from agents.memory.errors import DocumentNotFoundError, DocumentReadError, InvalidMemoryArgumentError

__all__ = ["DocumentIndex", "DocumentInfo", "Passage", "fts_query", "looks_like_path"]

SCHEMA_VERSION = 1
_DDL = (
    """CREATE TABLE IF NOT EXISTS doc_documents (
        doc_id TEXT PRIMARY KEY, source TEXT NOT NULL, title TEXT NOT NULL, content_hash TEXT NOT NULL,
        chars INTEGER NOT NULL, chunks INTEGER NOT NULL, added_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS doc_chunks (
        id INTEGER PRIMARY KEY, doc_id TEXT NOT NULL REFERENCES doc_documents(doc_id) ON DELETE CASCADE,
        chunk_index INTEGER NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL,
        title TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (doc_id, chunk_index))""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS doc_chunks_fts USING fts5(
        title, body, content='doc_chunks', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')""",
    # External content: the index holds no text of its own, the triggers keep it in step with doc_chunks
    # (the documented FTS5 pattern; the 'delete' command needs the old values to remove their terms).
    """CREATE TRIGGER IF NOT EXISTS doc_chunks_ai AFTER INSERT ON doc_chunks BEGIN
        INSERT INTO doc_chunks_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END""",
    """CREATE TRIGGER IF NOT EXISTS doc_chunks_ad AFTER DELETE ON doc_chunks BEGIN
        INSERT INTO doc_chunks_fts(doc_chunks_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
        END""",
)
_TITLE_WEIGHT, _BODY_WEIGHT = 2.0, 1.0
"""bm25 column weights: a query word in the title says more than one in a sentence (as in the corpus search)."""
_MAX_PATH_CHARS = 4096
_TERM = re.compile(r"\w+", re.UNICODE)
_STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "had", "has", "have", "how", "in", "is", "it", "its", "of", "on", "or", "than", "that", "the", "their", "there", "this", "to", "was", "were", "what", "when", "where", "which", "who", "why", "with"])


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """One indexed document: ``doc_id`` is stable (same path or same text → same id)."""

    doc_id: str
    source: str
    title: str
    chars: int
    chunks: int


@dataclass(frozen=True, slots=True)
class Passage:
    """A search hit, citable: ``text == document[start:end]``; ``score`` is -bm25 (higher is better)."""

    doc_id: str
    source: str
    title: str
    chunk_index: int
    start: int
    end: int
    text: str
    score: float

    def as_dict(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "source": self.source, "title": self.title, "chunk": self.chunk_index,
                "start": self.start, "end": self.end, "text": self.text, "score": round(self.score, 4)}


def fts_query(query: str) -> str | None:
    """An FTS5 MATCH expression that treats the user's text as words only: every term is quoted, so FTS5
    syntax in a query (``NEAR``, ``OR``, ``col:``, ``*``, quotes, parentheses) is searched for, never obeyed.
    Terms are OR-ed (bm25 ranks documents with more and rarer terms first); stop words are dropped unless
    nothing else is left. None when the query has no word at all.

    >>> fts_query('NEAR(Paris "Rome) title:x* AND')
    '"near" OR "paris" OR "rome" OR "title" OR "x"'
    """
    terms = [t.casefold() for t in _TERM.findall(query)]
    kept = [t for t in terms if t not in _STOPWORDS] or terms
    unique = list(dict.fromkeys(kept))
    if not unique:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in unique)


def _default_counter() -> TokenCounter:
    from prompts import count_tokens  # tiktoken loads on first use only

    return count_tokens


def _title_of(text: str, fallback: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first.startswith("#"):
        return first.lstrip("#").strip()[:120] or fallback
    return fallback


class DocumentIndex:
    """Full-text index of the user's documents in the store file.

    Example:
        >>> idx = DocumentIndex(":memory:", chunk_tokens=50, overlap_tokens=10)
        >>> doc = idx.add(["Mont Blanc is 4,806 m high."])[0]
        >>> idx.search("how high is mont blanc", k=1)[0].doc_id == doc.doc_id
        True
        >>> idx.remove(doc.doc_id); idx.search("mont blanc", k=1)
        []
    """

    def __init__(self, path: str | os.PathLike[str], *, chunk_tokens: int = 200, overlap_tokens: int = 40,
                 count_tokens: TokenCounter | None = None, clock: Callable[[], float] = time.time) -> None:
        if not 0 <= overlap_tokens < chunk_tokens:
            raise InvalidMemoryArgumentError("overlap_tokens", overlap_tokens, "use 0 up to chunk_tokens - 1")
        self._db = Database(path)
        self._db.ensure_schema("documents", SCHEMA_VERSION, _DDL, needs_fts5=True)
        self._chunk_tokens, self._overlap_tokens = chunk_tokens, overlap_tokens
        self._count = count_tokens or _default_counter()
        self._clock = clock

    @property
    def path(self) -> str:
        return self._db.path

    def add(self, paths_or_texts: Iterable[str | os.PathLike[str]]) -> list[DocumentInfo]:
        """Index each item: a path to an existing file (read as UTF-8) or, for any other string, the text
        itself. A string that looks like a path (``looks_like_path``) but names no file is ``DocumentReadError``. Adding a source again replaces its chunks. Returns the documents in the order given."""
        if isinstance(paths_or_texts, (str, os.PathLike)):
            paths_or_texts = [paths_or_texts]  # a single document is an easy mistake to forgive
        resolved = [self._resolve(item) for item in paths_or_texts]  # all read first: a bad item adds nothing
        return [self._add_one(*item) for item in resolved]

    def add_text(self, text: str, *, source: str, doc_id: str | None = None, title: str | None = None) -> DocumentInfo:
        """Index ``text`` under a source name of the caller's choice (a URL, a note's name…)."""
        doc_id = doc_id or "doc-" + hashlib.sha256(f"source\0{source}".encode()).hexdigest()[:16]
        return self._add_one(doc_id, source, title or _title_of(text, source), text)

    def _resolve(self, item: str | os.PathLike[str]) -> tuple[str, str, str, str]:
        """(doc_id, source, title, text) of one item of ``add``."""
        _check_item(item)
        if isinstance(item, str) and looks_like_path(item) and not Path(item).expanduser().exists():
            # Indexed as text, "/mistyped/path.md" would be a one-line document nobody meant, found by no search.
            raise DocumentReadError(str(Path(item).expanduser()), "no such file. A string that looks like a path "
                                    "(docs/memory.md, 'Paths and texts') is read as one: check the path, or index "
                                    "it as text with DocumentIndex(store_path).add_text(text, source=...)")
        if isinstance(item, os.PathLike) or (len(item) < _MAX_PATH_CHARS and "\n" not in item
                                               and Path(item).expanduser().exists()):
            path = Path(item).expanduser().resolve()
            if not path.is_file():
                raise DocumentReadError(str(path), "it is not a file; pass the files inside it, e.g. "
                                        "sorted(Path(folder).glob('**/*.md'))")
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError) as exc:
                raise DocumentReadError(str(path), f"{type(exc).__name__}: {exc}; documents are read as UTF-8 "
                                        "text, convert the file (PDF, Word…) to text first") from None
            doc_id = "doc-" + hashlib.sha256(f"path\0{path}".encode()).hexdigest()[:16]
            return doc_id, str(path), _title_of(text, path.stem), text
        if not isinstance(item, str):
            raise InvalidMemoryArgumentError("paths_or_texts item", item, "pass str texts, str paths or Paths")
        doc_id = "doc-" + hashlib.sha256(f"text\0{item}".encode()).hexdigest()[:16]
        first_line = " ".join(item.split())[:60]
        return doc_id, f"text:{doc_id}", _title_of(item, first_line), item

    def _add_one(self, doc_id: str, source: str, title: str, text: str) -> DocumentInfo:
        _check_text(text, source)
        digest = hashlib.sha256(text.encode()).hexdigest()
        chunks: list[Chunk] = chunk_text(text, max_tokens=self._chunk_tokens, overlap_tokens=self._overlap_tokens,
                                         count_tokens=self._count) if text.strip() else []
        with self._db.write() as conn:
            # The cascade deletes the old chunks; the delete trigger takes their terms out of the index.
            conn.execute("DELETE FROM doc_documents WHERE doc_id = ?", (doc_id,))
            conn.execute("INSERT INTO doc_documents VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (doc_id, source, title, digest, len(text), len(chunks), self._clock()))
            conn.executemany(
                'INSERT INTO doc_chunks (doc_id, chunk_index, start, "end", title, body) VALUES (?, ?, ?, ?, ?, ?)',
                [(doc_id, c.index, c.start, c.end, title, c.text) for c in chunks])
        return DocumentInfo(doc_id, source, title, len(text), len(chunks))

    def remove(self, doc_id: str) -> None:
        """Drop a document and its chunks; raises ``DocumentNotFoundError`` for an unknown id."""
        with self._db.write() as conn:
            if conn.execute("DELETE FROM doc_documents WHERE doc_id = ?", (doc_id,)).rowcount == 0:
                raise DocumentNotFoundError(doc_id)

    def documents(self) -> list[DocumentInfo]:
        rows = self._db.read("SELECT doc_id, source, title, chars, chunks FROM doc_documents ORDER BY added_at, doc_id")
        return [DocumentInfo(*row) for row in rows]

    def search(self, query: str, k: int = 3) -> list[Passage]:
        """The ``k`` best chunks for ``query`` (bm25, best first); [] when nothing matches."""
        if not isinstance(k, int) or k < 1:
            raise InvalidMemoryArgumentError("k", k, "ask for at least one passage, e.g. k=3")
        match = fts_query(query)
        if match is None:
            return []
        rows = self._db.read(
            f"""SELECT c.doc_id, d.source, c.title, c.chunk_index, c.start, c."end", c.body,
                       bm25(doc_chunks_fts, {_TITLE_WEIGHT}, {_BODY_WEIGHT}) AS rank
                FROM doc_chunks_fts JOIN doc_chunks c ON c.id = doc_chunks_fts.rowid
                JOIN doc_documents d ON d.doc_id = c.doc_id
                WHERE doc_chunks_fts MATCH ? ORDER BY rank, c.doc_id, c.chunk_index LIMIT ?""",
            (match, k))
        return [Passage(*row[:7], score=-row[7]) for row in rows]

    def close(self) -> None:
        self._db.close()


_DOCUMENT_SUFFIXES = frozenset({"md", "markdown", "txt", "text", "rst", "adoc", "org", "tex", "html", "htm", "xml",
                                "json", "jsonl", "yaml", "yml", "csv", "tsv", "log", "pdf", "doc", "docx", "odt", "rtf"})
_PATH_PREFIXES = ("/", "./", "../", "~/", "~\\", ".\\", "..\\")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_SUFFIX = re.compile(r"\.([A-Za-z0-9]{1,9})$")


def looks_like_path(item: str) -> bool:
    """Whether ``add`` reads ``item`` as a file path rather than as a text: one line, no space at either end, and
    either a path's start (``/``, ``./``, ``../``, ``~/``, ``C:\\``) with no space in it or a document's file
    extension at its end, or no space at all and a document's extension (``notes.md``, ``docs/a.txt``).

    >>> [looks_like_path(s) for s in ("/mistyped/path.md", "notes.md", "~/My Notes/a.md", "Rome is big.")]
    [True, True, True, False]
    >>> [looks_like_path(s) for s in ("/ is the root", "Version 2.0", "e.g.", "See notes.md for more")]
    [False, False, False, False]
    """
    if not item or len(item) >= _MAX_PATH_CHARS or "\n" in item or item != item.strip():
        return False
    suffix = _SUFFIX.search(item)
    documentish = suffix is not None and suffix.group(1).lower() in _DOCUMENT_SUFFIXES
    spaced = any(c.isspace() for c in item)
    if item.startswith(_PATH_PREFIXES) or _DRIVE.match(item):
        return not spaced or documentish
    return documentish and not spaced


def _check_item(item: object) -> None:
    """Refuse what ``add`` cannot index before anything is written: a type that is neither text nor a path, or an
    empty text (as a path, "" would name the current directory)."""
    if isinstance(item, (bytes, bytearray)):
        raise InvalidMemoryArgumentError("paths_or_texts item", item[:40], "pass text, not bytes: decode it first, "
                                         "e.g. data.decode('utf-8'), or pass the file's path")
    if not isinstance(item, (str, os.PathLike)):
        raise InvalidMemoryArgumentError("paths_or_texts item", item,
                                         f"pass str texts, str paths or Paths, not {type(item).__name__}")
    if isinstance(item, str) and not item.strip():
        raise InvalidMemoryArgumentError("paths_or_texts item", item, "an empty text has nothing to index")
    if isinstance(item, str):
        _check_text(item, item)


def _check_text(text: str, source: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidMemoryArgumentError(
            "document text", f"{source[:60]}", f"it holds a lone surrogate ({text[exc.start]!r}) at index "
            f"{exc.start}, which is not valid Unicode text; decode your input with errors='replace'") from None
