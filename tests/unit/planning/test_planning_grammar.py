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
