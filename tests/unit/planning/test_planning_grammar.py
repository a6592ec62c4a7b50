"""The GBNF grammar of the terse form: the real tools and their parameters, every rule defined."""

from __future__ import annotations

import re

from planning.grammar import terse_plan_grammar


def test_grammar_names_the_tools_and_their_parameters() -> None:
    grammar = terse_plan_grammar({"lookup": {"properties": {"entity": {}, "attribute": {}}},
                                  "calculator": {"properties": {"expression": {}}}, "noop": {},
                                  "web.search": {"properties": {"max-results": {}}}})
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines())
    assert rules["call"].startswith('"think(" string ")"')
    for fragment in ('"lookup(" ((arg-1 | value)', '"calculator(" ((arg-0 | value)', '"noop(" ")"',
                     '"web.search(" ((arg-3 | value)'):
        assert fragment in rules["call"]
    assert rules["arg-1"] == '("attribute=" | "entity=") value'
    assert rules["arg-3"] == '("\\"max-results\\"=") value'
    referenced = set(re.findall(r"\b([a-z]+(?:-\d+)?)\b(?![(\"=])", " ".join(rules.values())))
    assert {"num", "ref", "value", "string", "number", "list", "object", "after", "comment"} <= set(rules)
    assert {r for r in referenced if r.startswith("arg-")} <= set(rules)
    # A note is one short line: unbounded, the 1.5B model ran one on for 2,261 tokens (prompts/CHANGELOG.md).
    assert rules["comment"] == '"  # " [^\\n]{0,80}'


def test_the_plan_grammar_compiles_in_the_servers_own_parser() -> None:
    import pytest

    llama_cpp = pytest.importorskip("llama_cpp")
    grammar = terse_plan_grammar({"calculator": {"properties": {"expression": {}}}})
    assert llama_cpp.LlamaGrammar.from_string(grammar, verbose=False) is not None


def test_the_terse_verdict_grammar_defines_every_rule_and_its_replies_parse() -> None:
    import pytest

    from planning.grammar import TERSE_REFLECTION_GRAMMAR
    from planning.terse_reflection import parse_terse_reflection

    rules = dict(line.split(" ::= ", 1) for line in TERSE_REFLECTION_GRAMMAR.splitlines())
    bare = re.sub(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]', " ", " ".join(rules.values()))  # no literals
    assert set(re.findall(r"[a-z]+", bare)) <= set(rules)
    # One reply of each shape the grammar allows (the same language, written as a regex) parses as that action.
    language = re.compile(r"accept [45] [45] [45]\nanswer: [^\n]+|retry [1-5] [1-5] [1-5] step [1-9][0-9]*: [^\n]+"
                          r"|(?:replan|escalate) [1-5] [1-5] [1-5]: [^\n]+")
    replies = {"accept 5 4 5\nanswer: Rome, by 650,000 (2.75 vs 2.10 million).": "accept",
               "retry 4 2 4 step 3: write the entity as 'Dalwynbre'": "retry_step",
               "replan 2 2 4: look the Danube up too": "replan",
               "escalate 3 3 3: which fiscal year does the task mean?": "escalate"}
    for text, action in replies.items():
        assert language.fullmatch(text)
        assert parse_terse_reflection(text).action == action
    assert not language.fullmatch("accept 5 5 3\nanswer: x")  # an accept scores 4 or 5 throughout
    llama_cpp = pytest.importorskip("llama_cpp")  # the server's own parser, where the backend is installed
    assert llama_cpp.LlamaGrammar.from_string(TERSE_REFLECTION_GRAMMAR, verbose=False) is not None
