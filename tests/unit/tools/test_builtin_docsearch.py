"""Document search: the shipped corpus loads from the package, BM25 ranks the right document first, and the
passage it returns carries the figure the question needs."""

from __future__ import annotations

import asyncio
import re

import pytest

from agents.tools import ToolArgumentError
from agents.tools.builtins.docsearch import (
    BM25Index,
    Document,
    doc_search,
    load_corpus,
    search_corpus,
    tokenize,
)


def test_corpus_has_at_least_forty_documents_with_figures_and_populations_with_their_year() -> None:
    corpus = load_corpus()
    assert len(corpus) >= 40
    assert len({d.doc_id for d in corpus}) == len(corpus)
    for doc in corpus:
        assert doc.title and doc.kind != "other", doc.doc_id
        assert re.search(r"[0-9]", doc.text), doc.doc_id
        if doc.kind in ("city", "country"):
            population = next(p for p in doc.passages if p.startswith("Population:"))
            assert re.search(r"\b(19|20)[0-9]{2}\b", population), doc.doc_id


@pytest.mark.parametrize(("query", "doc_id", "figure"), [
    ("population of Paris", "paris", "2.10 million"),
    ("Rome population", "rome", "2.75 million"),
    ("area of Rome in km2", "rome", "1,285 km²"),
    ("height of Mont Blanc", "mont_blanc", "4,806 m"),
    ("Sao Paulo population", "sao_paulo", "11.45 million"),
    ("Eiffel Tower height", "eiffel_tower", "330 m"),
    ("how many moons does Mars have", "mars", "two moons"),
    ("cities", None, None),  # plural folding: "cities" finds documents that say "city"
])
def test_the_right_document_and_passage_come_first(query: str, doc_id: str | None, figure: str | None) -> None:
    hits = search_corpus(query, k=3)
    assert hits, query
    if doc_id is not None:
        assert hits[0].doc_id == doc_id
        assert figure in hits[0].text
        assert hits[0].text.startswith(hits[0].title + ": ")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_passages_are_bounded() -> None:
    for doc in load_corpus():
        for hit in search_corpus(doc.title, k=1):
            assert len(hit.text) <= 600


def test_tokenize_folds_accents_plurals_and_keeps_grouped_numbers() -> None:
    assert tokenize("São Paulo's Cities had 2,165,000 people") == ["sao", "paulo", "city", "2,165,000", "people"]


def test_bm25_prefers_the_rarer_term_and_the_shorter_document() -> None:
    docs = [Document("a", "A", "x", "river river river bridge"), Document("b", "B", "x", "river"),
            Document("c", "C", "x", "mountain " * 20 + "river")]
    index = BM25Index(docs)
    assert [h.doc_id for h in index.search("bridge")] == ["a"]
    ranked = [h.doc_id for h in index.search("river", k=3)]
    assert ranked.index("b") < ranked.index("c")
    assert index.search("volcano") == []


@pytest.mark.parametrize(("args", "message"), [
    ({"query": ""}, "empty"),
    ({"query": "x" * 501}, "under 500"),
    ({"query": "the of and"}, "no searchable words"),
    ({"query": "paris", "k": 0}, "between 1 and 10"),
    ({"query": "paris", "k": 11}, "between 1 and 10"),
])
def test_bad_queries_get_argument_errors(args: dict[str, object], message: str) -> None:
    with pytest.raises(ToolArgumentError, match=message):
        search_corpus(**args)  # type: ignore[arg-type]


def test_the_tool_returns_plain_dicts() -> None:
    hits = asyncio.run(doc_search.invoke({"query": "population of Berlin", "k": 2}))
    assert hits[0]["doc_id"] == "berlin" and set(hits[0]) == {"doc_id", "title", "text", "score"}
    assert "3.76 million" in hits[0]["text"]
