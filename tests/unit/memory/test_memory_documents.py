"""The user's document index: chunking, FTS5 search, replacement, removal, injection safety, doc_search merge."""

from __future__ import annotations

import itertools
import pickle
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.memory import doc_search as bridge
from agents.memory.chunking import chunk_text
from agents.memory.documents import DocumentIndex, fts_query
from agents.memory.errors import DocumentNotFoundError, DocumentReadError, InvalidMemoryArgumentError
from agents.tools.builtins.docsearch import doc_search
from support.tiers import examples

WORDS = lambda s: len(s.split())


@pytest.fixture
def index(tmp_path):
    idx = DocumentIndex(tmp_path / "store.db", chunk_tokens=40, overlap_tokens=8, count_tokens=WORDS)
    yield idx
    idx.close()


def test_fts5_is_available_in_this_python():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.text(alphabet="ab cd.\n", min_size=0, max_size=40), min_size=0, max_size=12),
       st.integers(2, 12), st.integers(0, 11))
def test_chunks_are_exact_slices_within_budget_and_cover_every_word(paragraphs, max_tokens, overlap):
    overlap = min(overlap, max_tokens - 1)
    text = "\n\n".join(paragraphs)
    chunks = chunk_text(text, max_tokens=max_tokens, overlap_tokens=overlap, count_tokens=WORDS)
    covered = set()
    for i, c in enumerate(chunks):
        assert c.index == i and text[c.start:c.end] == c.text
        assert WORDS(c.text) <= max_tokens or len(c.text.split()) == 1
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)


def test_paragraphs_are_packed_whole_and_overlap_repeats_the_previous_tail():
    paras = [" ".join(f"p{i}w{j}" for j in range(10)) for i in range(6)]
    text = "\n\n".join(paras)
    chunks = chunk_text(text, max_tokens=25, overlap_tokens=10, count_tokens=WORDS)
    assert chunks[0].text == "\n\n".join(paras[:2])
    assert chunks[1].text.startswith(paras[1])  # the overlap: the last paragraph of chunk 0 starts chunk 1
    assert chunk_text("", max_tokens=5, overlap_tokens=0, count_tokens=WORDS) == []
    with pytest.raises(InvalidMemoryArgumentError, match="overlap_tokens"):
        chunk_text(text, max_tokens=5, overlap_tokens=5, count_tokens=WORDS)


def test_search_returns_citable_passages_ranked_by_bm25(index):
    long_doc = "# Rivers\n\n" + "\n\n".join(
        [f"Filler paragraph {i} about nothing in particular, just words." for i in range(10)]
        + ["The Danube flows through Vienna and Budapest before reaching the Black Sea."])
    river, _ = index.add([long_doc, "Cities: Vienna has about 2 million inhabitants."])
    assert river.chunks > 1 and river.title == "Rivers"
    hits = index.search("Which river flows through Budapest?", k=2)
    assert hits[0].doc_id == river.doc_id and "Budapest" in hits[0].text
    assert long_doc[hits[0].start:hits[0].end] == hits[0].text and hits[0].chunk_index == river.chunks - 1
    assert hits[0].score > 0 and all(a.score >= b.score for a, b in itertools.pairwise(hits))
    # porter stemming + diacritics folding: "flowing" finds "flows", "Sao" finds "São"
    index.add(["São Paulo is the largest city of Brazil."])
    assert index.search("sao paulo", k=1)[0].text.startswith("São Paulo")
    assert index.search("flowing", k=1)[0].doc_id == river.doc_id


def test_paths_are_read_and_readding_replaces_chunks(index, tmp_path):
    note = tmp_path / "note.md"
    note.write_text("The office wifi password rotates every Monday.", encoding="utf-8")
    first = index.add([str(note)])[0]
    assert first.source == str(note.resolve()) and index.search("wifi password", k=1)[0].doc_id == first.doc_id
    note.write_text("The office moved to Lyon in 2025.", encoding="utf-8")
    second = index.add([note])[0]  # a Path works too, and the id is stable
    assert second.doc_id == first.doc_id
    assert index.search("wifi password", k=3) == []  # the old chunks are gone at once
    assert index.search("Lyon", k=1)[0].text == "The office moved to Lyon in 2025."
    assert [d.doc_id for d in index.documents()] == [first.doc_id]


def test_remove_is_visible_immediately_to_another_connection(index):
    other = DocumentIndex(index.path, count_tokens=WORDS)
    doc = index.add(["Kilimanjaro is 5,895 m high."])[0]
    assert other.search("kilimanjaro", k=1)[0].doc_id == doc.doc_id
    index.remove(doc.doc_id)
    assert other.search("kilimanjaro", k=1) == []
    with pytest.raises(DocumentNotFoundError, match="DocumentIndex.documents"):
        other.remove(doc.doc_id)
    other.close()


@pytest.mark.parametrize("query", ['"', 'a" OR "b', "NEAR(x y)", "title:*", "(((", "AND OR NOT", "x*", "^z", "-"])
def test_fts5_syntax_in_queries_is_searched_for_not_obeyed(index, query):
    index.add(["near the title of x and y and z"])
    assert isinstance(index.search(query, k=3), list)  # never an sqlite3.OperationalError


def test_query_text_is_quoted_term_by_term():
    assert fts_query("what is the") == '"what" OR "is" OR "the"'  # all stop words: keep them
    assert fts_query("!!! ???") is None


def test_errors_say_what_to_do_and_pickle(tmp_path, index):
    (tmp_path / "bin.dat").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(DocumentReadError, match="UTF-8") as caught:
        index.add([str(tmp_path / "bin.dat")])
    with pytest.raises(DocumentReadError, match="not a file"):
        index.add([str(tmp_path)])
    with pytest.raises(InvalidMemoryArgumentError, match="k=0"):
        index.search("x", k=0)
    for err in (caught.value, DocumentNotFoundError("doc-1"), InvalidMemoryArgumentError("k", 0, "positive")):
        again = pickle.loads(pickle.dumps(err))
        assert type(again) is type(err) and str(again) == str(err) and again.__dict__ == err.__dict__


def test_doc_search_merges_user_documents_with_the_corpus(tmp_path):
    idx = DocumentIndex(tmp_path / "store.db")
    mine = idx.add(["Our Paris office has 40 employees and opened in 2019."])[0]
    try:
        before = doc_search(query="Paris office employees", k=3)
        with bridge.user_documents(idx.path):
            hits = doc_search(query="Paris office employees", k=3)  # the built-in tool itself
            assert hits[0]["doc_id"] == mine.doc_id and hits[0]["start"] == 0 and hits[0]["chunk"] == 0
            assert any(h["doc_id"] == "paris" for h in hits)  # the shipped corpus is still searched
            assert all(h["doc_id"] != mine.doc_id for h in before)
            idx.remove(mine.doc_id)
            assert all(h["doc_id"] != mine.doc_id for h in doc_search(query="Paris office", k=3))
    finally:
        idx.close()
    assert bridge.user_documents_path() is None
    assert all("source" not in h for h in doc_search(query="Paris", k=2))


@pytest.mark.parametrize("item,says", [
    ("", "an empty text has nothing to index"),
    ("  \n ", "an empty text has nothing to index"),
    (None, "not NoneType"),
    (b"Our Paris office", "decode it first"),
    ("Paris \ud800 office", "lone surrogate"),
])
def test_what_cannot_be_indexed_is_a_typed_error_saying_what_to_pass(tmp_path, item, says):
    index = DocumentIndex(tmp_path / "t.db")
    try:
        with pytest.raises(InvalidMemoryArgumentError, match=says) as caught:
            index.add([item])
        assert index.documents() == []  # nothing was written
    finally:
        index.close()
    again = pickle.loads(pickle.dumps(caught.value))
    assert type(again) is InvalidMemoryArgumentError and str(again) == str(caught.value)


@pytest.mark.parametrize("mistyped", ["/mistyped/path.md", "./notes/offices.md", "~/no-such-dir-here/a.txt",
                                      "offices.md", "notes/q3-report.md", "/srv/data/no-such-file",
                                      "/home/me/My Notes/q3 report.md"])
def test_a_string_that_looks_like_a_path_and_names_no_file_is_refused(tmp_path, mistyped):
    """Issue 60: ``add(["/mistyped/path.md"])`` indexed the path string itself as a one-line document."""
    index = DocumentIndex(tmp_path / "t.db")
    try:
        with pytest.raises(DocumentReadError, match="no such file. A string that looks like a path") as caught:
            index.add(["Our Paris office opened in 2019.", mistyped])
        assert index.documents() == []  # nothing was written, not even the good text before it
    finally:
        index.close()
    assert "add_text(" in str(caught.value)
    again = pickle.loads(pickle.dumps(caught.value))
    assert type(again) is DocumentReadError and str(again) == str(caught.value)


@pytest.mark.parametrize("text", ["Rome is bigger.", "/ is the root directory", "Version 2.0 ships today",
                                  "See notes.md for more", "e.g.", "https://example.com/a.md is our handbook"])
def test_texts_that_only_mention_a_path_are_still_texts(tmp_path, text):
    index = DocumentIndex(tmp_path / "t.db")
    try:
        [info] = index.add([text])
        assert info.source.startswith("text:")
    finally:
        index.close()
