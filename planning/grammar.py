"""GBNF grammar of the terse plan form for constrained decoding (llama.cpp's ``grammar`` request field).

The JSON plan is constrained with ``plan_schema``; the terse form needs a grammar instead. Tool names and each
tool's parameter names are enumerated from the task's real tools, so a small model cannot call a tool that does
not exist or misspell a parameter (the prompt regression set measured exactly that failure: see
``planning.parse.plan_schema``). Values are JSON or ``$N`` references; validation still checks everything.

    >>> print(terse_plan_grammar({"lookup": {"properties": {"city": {}}}}).splitlines()[0])
    root ::= (step "\\n")+
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from planning.terse_line import IDENT, THINK

__all__ = ["TERSE_CONFIRMING_GRAMMAR", "TERSE_REFLECTION_GRAMMAR", "terse_plan_grammar"]

TERSE_REFLECTION_GRAMMAR = r'''root ::= accept | retry | other
accept ::= "accept " [4-5] " " [4-5] " " [4-5] "\nanswer: " text
retry ::= "retry " scores " step " [1-9] [0-9]* ": " text
other ::= ("replan" | "escalate") " " scores ": " text
scores ::= [1-5] " " [1-5] " " [1-5]
text ::= [^\n]+'''
"""The reviewer's terse verdict (``planning.terse_reflection``) as a GBNF grammar: the embedded model writes
"accept 5 5 5" and one answer line, ~12 tokens of form where the JSON object spends ~50 (about 4 s of decoding
on two CPU cores), and cannot write a line that is neither form. An accept scores 4 or 5 throughout: unnamed,
the third score came out at random (1 or 3 on six right results of six, measured), and the policy then
refused every accept; what an accept must not rest on is checked by code (``agents.checks``)."""

TERSE_CONFIRMING_GRAMMAR = TERSE_REFLECTION_GRAMMAR.replace('"\\nanswer: " text', '("\\nanswer: " text)?')
"""The same verdict where the reviewer is shown the plan's answer to confirm: an accept may end at its
scores."""

_COMMON = r'''num ::= [1-9] [0-9]*
ref ::= "$" num ("." ([A-Za-z_] [A-Za-z0-9_]* | [0-9]+))*
value ::= string | number | "true" | "false" | "null" | ref | list | object
list ::= "[" (value (", " value)*)? "]"
object ::= "{" (string ": " value (", " string ": " value)*)? "}"
string ::= "\"" ([^"\\\n] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F]))* "\""
number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
after ::= " after $" num (", $" num)*
comment ::= "  # " [^\n]{0,80}'''


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def terse_plan_grammar(tool_schemas: Mapping[str, Mapping[str, Any]]) -> str:
    """The grammar for a plan over these tools (name → JSON schema of its parameters; ``properties`` is read).

    Every line is ``N. call[ after $a, $b][  # note]``; ``think("...")`` is always allowed. A tool without
    parameters is called as ``tool()``; arguments go by position or as ``name=value`` (the parser checks the
    order and the count against the tool's parameters). Parameters are optional in the grammar (the validator reports missing
    ones with a message the model can act on)."""
    calls = [f'"{THINK}(" string ")"']
    rules = []
    for i, (name, schema) in enumerate(sorted(tool_schemas.items())):
        if name == THINK:
            continue
        params = sorted((schema.get("properties") or {}).keys())
        call = f"{_literal(name + '(')} "
        if params:
            keys = " | ".join(_literal((p if IDENT.fullmatch(p) else json.dumps(p)) + "=") for p in params)
            rules.append(f"arg-{i} ::= ({keys}) value")
            call += f'((arg-{i} | value) (", " (arg-{i} | value))*)? '
        calls.append(call + '")"')
    head = ['root ::= (step "\\n")+', 'step ::= num ". " call after? comment?', "call ::= " + " | ".join(calls)]
    return "\n".join([*head, *rules, _COMMON]) + "\n"
