"""Document search over the corpus tetrarch ships (agents/tools/corpus/*.md): BM25, pure Python, built once.

    >>> hits = search_corpus("population of Paris", k=1)
    >>> hits[0].doc_id, "2.10 million" in hits[0].text
    ('paris', True)

The corpus is small, encyclopaedic and offline on purpose: the demo and the benchmarks need facts a model
must look up (populations, areas, heights with their year) without any network. Figures in it are
approximate and say which year and which boundary they describe.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from agents.memory.doc_search import merge_hits, user_passages
from agents.tools.decorator import tool
from agents.tools.errors import PermanentToolError, ToolArgumentError
from planning.words import singular

__all__ = ["BM25Index", "Document", "SearchHit", "doc_search", "load_corpus", "search_corpus", "tokenize"]

MAX_QUERY_CHARS = 500
MAX_K = 10
PASSAGE_CHARS = 600

_STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "had", "has", "have", "how", "in", "is", "it", "its", "many", "much", "of", "on", "or", "than", "that", "the", "their", "there", "this", "to", "was", "were", "what", "when", "where", "which", "who", "why", "with"]
)
_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")


def _fold(text: str) -> str:
    # "São Paulo" and "Sao Paulo" should meet: strip accents after NFKD decomposition.
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


def tokenize(text: str) -> list[str]:
    """Lower-case, accent-folded, stop-word-free terms; "2,165,000" stays one term."""
    return [singular(w) for w in _WORD.findall(_fold(text)) if w not in _STOPWORDS and (len(w) > 1 or w.isdigit())]


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    kind: str
    text: str

    @property
    def passages(self) -> list[str]:
        return [p.strip() for p in self.text.split("\n\n") if p.strip() and not p.startswith("# ")]


@dataclass(frozen=True)
class SearchHit:
    doc_id: str
    title: str
    text: str
    score: float

    def as_dict(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "title": self.title, "text": self.text, "score": round(self.score, 4)}


class BM25Index:
    """Okapi BM25 (k1=1.5, b=0.75) with the non-negative idf of Lucene, over documents' titles and bodies."""

    def __init__(self, documents: Sequence[Document], *, k1: float = 1.5, b: float = 0.75) -> None:
        if not documents:
            raise ValueError("BM25Index needs at least one document")
        self.documents = list(documents)
        self.k1, self.b = k1, b
        # The title counts twice: "Rome" in the title says more than "Rome" in a sentence about rivers.
        self._terms = [Counter(tokenize(f"{d.title} {d.title} {d.text}")) for d in self.documents]
        self._lengths = [sum(t.values()) for t in self._terms]
        self._avg_length = sum(self._lengths) / len(self._lengths)
        df: Counter[str] = Counter()
        for terms in self._terms:
            df.update(terms.keys())
        n = len(self.documents)
        self._idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}

    def idf(self, term: str) -> float:
        return self._idf.get(term, 0.0)

    def score(self, query_terms: Iterable[str], index: int) -> float:
        terms, length = self._terms[index], self._lengths[index]
        total = 0.0
        for term in query_terms:
            tf = terms.get(term, 0)
            if tf:
                norm = self.k1 * (1 - self.b + self.b * length / self._avg_length)
                total += self.idf(term) * tf * (self.k1 + 1) / (tf + norm)
        return total

    def search(self, query: str, k: int = 3) -> list[SearchHit]:
        terms = tokenize(query)
        scored = sorted(((self.score(terms, i), i) for i in range(len(self.documents))), key=lambda s: (-s[0], s[1]))
        hits = []
        for score, i in scored[:k]:
            if score <= 0:
                break
            doc = self.documents[i]
            hits.append(SearchHit(doc.doc_id, doc.title, self._best_passage(doc, terms), score))
        return hits

    def _best_passage(self, doc: Document, terms: list[str]) -> str:
        """The passages that answer the query, in document order, as many as fit in PASSAGE_CHARS.

        Terms of the title are already matched by choosing the document, so they do not pick the passage:
        for "height of Mont Blanc" the passage about height wins over the one that names Mont Blanc.
        """
        title_terms = set(tokenize(doc.title))
        wanted = (set(terms) - title_terms) or set(terms)
        passages = doc.passages or [doc.text]
        scores = [sum(self.idf(t) for t in wanted & set(tokenize(p))) for p in passages]
        order = sorted(range(len(passages)), key=lambda i: (-scores[i], i))
        chosen: list[int] = []
        budget = PASSAGE_CHARS - len(doc.title) - 2
        for i in order:
            cost = len(passages[i]) + (1 if chosen else 0)
            if cost <= budget and (scores[i] > 0 or not chosen):
                chosen.append(i)
                budget -= cost
        if not chosen:  # one passage longer than the whole budget: cut it
            best = passages[order[0]]
            return f"{doc.title}: {best[: PASSAGE_CHARS - len(doc.title) - 3].rstrip()}…"
        return f"{doc.title}: " + " ".join(passages[i] for i in sorted(chosen))


def _parse(doc_id: str, raw: str) -> Document:
    meta: dict[str, str] = {}
    body = raw
    if raw.startswith("---\n"):
        header, _, body = raw[4:].partition("\n---\n")
        for line in header.splitlines():
            key, _, value = line.partition(":")
            meta[key.strip()] = value.strip()
    title = meta.get("title") or doc_id.replace("_", " ").title()
    return Document(doc_id=doc_id, title=title, kind=meta.get("kind", "other"), text=body.strip())


@functools.cache
def load_corpus() -> tuple[Document, ...]:
    """The shipped documents, read through importlib.resources so an installed wheel works too."""
    folder = resources.files("agents.tools") / "corpus"
    docs = [_parse(entry.name.removesuffix(".md"), entry.read_text(encoding="utf-8"))
            for entry in folder.iterdir() if entry.name.endswith(".md")]
    if not docs:
        raise PermanentToolError("the document corpus is missing from the installed package; reinstall tetrarch")
    return tuple(sorted(docs, key=lambda d: d.doc_id))


@functools.cache
def _default_index() -> BM25Index:
    return BM25Index(load_corpus())


def search_corpus(query: str, k: int = 3) -> list[SearchHit]:
    """Validated search over the shipped corpus."""
    if not isinstance(query, str) or not query.strip():
        raise ToolArgumentError("query is empty; describe what to look up, e.g. 'population of Paris'")
    if len(query) > MAX_QUERY_CHARS:
        raise ToolArgumentError(f"query is {len(query)} characters; keep it under {MAX_QUERY_CHARS}")
    if not 1 <= k <= MAX_K:
        raise ToolArgumentError(f"k must be between 1 and {MAX_K}, got {k}")
    if not tokenize(query):
        raise ToolArgumentError(f"query {query!r} has no searchable words; use names and nouns")
    return _default_index().search(query, k)


@tool(permission="read", timeout_s=10)
def doc_search(query: str, k: int = 3) -> list[dict[str, Any]]:
    """Search the reference documents (cities, countries, rivers, mountains, planets, elements, landmarks) and
    return the best-matching passages with their figures and years.

    Args:
        query: What to look up, e.g. "population of Paris" or "height of Mont Blanc". One entity per query
            works best.
        k: How many documents to return (1-10).

    Returns:
        passages (text with figures, best first)
    """
    corpus = search_corpus(query, k)  # validates the query and k, raising the tool's argument errors
    # The user's own documents (orch.add_documents) are searched beside the corpus when a store is configured.
    mine = user_passages(query, k)
    return [hit.as_dict() for hit in corpus] if mine is None else merge_hits(corpus, mine, k)
