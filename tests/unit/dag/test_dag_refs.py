"""$step_N_result references: compiling, resolving, round trips, errors; properties with hypothesis."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from dag import RefResolutionError, Template, compile_value, decompile, references, resolve
from dag.refs import Ref
from support.tiers import examples


# ------------------------------------------------------------------------------------------- compiling
@pytest.mark.parametrize(("raw", "ref"), [
    ("$step_1_result", Ref(1)),
    ("$step_12_result.city", Ref(12, ("city",))),
    ("$step_3_result.items.0.name", Ref(3, ("items", "0", "name"))),
    ("${step_2_result}", Ref(2)),
    ("{$step_2_result.a}", Ref(2, ("a",))),
    ("  $step_4_result \n", Ref(4)),
])
def test_whole_value_refs(raw, ref):
    assert compile_value(raw) == ref


@pytest.mark.parametrize(("raw", "parts"), [
    ("Population of {$step_1_result}?", ("Population of ", Ref(1), "?")),
    ("a ${step_1_result.x} b", ("a ", Ref(1, ("x",)), " b")),
    ("compare $step_1_result and $step_2_result.", ("compare ", Ref(1), " and ", Ref(2), ".")),
    ("total: $step_1_result.total, done", ("total: ", Ref(1, ("total",)), ", done")),
    ("{$step_1_result}{$step_2_result}", (Ref(1), Ref(2))),
    ("cost $step_1_result.5kg", ("cost ", Ref(1), ".5kg")),  # a path segment must end at a word boundary
])
def test_refs_inside_text_become_templates(raw, parts):
    assert compile_value(raw) == Template(parts)


@pytest.mark.parametrize("raw", ["plain text", "$step_1_results", "$step_x_result", "step_1_result",
                                 "$step_1_resultant", "{step_1_result}", ""])
def test_non_refs_stay_strings(raw):
    assert compile_value(raw) == raw
    assert references(raw) == frozenset()


def test_unclosed_brace_leaves_the_brace_as_text():
    assert compile_value("{$step_1_result") == Template(("{", Ref(1)))


def test_compile_walks_containers_and_keeps_other_values():
    raw = {"a": ["$step_1_result", ("x {$step_2_result}", 3)], "$step_9_result": None, "n": 1.5, "b": True}
    assert compile_value(raw) == {"a": [Ref(1), (Template(("x ", Ref(2))), 3)], "$step_9_result": None,
                                  "n": 1.5, "b": True}
    assert references(raw) == frozenset({1, 2})  # dict keys are never refs


def test_compile_is_idempotent():
    once = compile_value({"q": "{$step_1_result} and $step_2_result.a"})
    assert compile_value(once) == once


# ------------------------------------------------------------------------------------------- resolving
def test_whole_ref_keeps_the_output_type():
    out = {"rows": [1, 2]}
    assert resolve(compile_value("$step_1_result"), {1: out}) is out
    assert resolve(compile_value(["$step_1_result.rows.1"]), {1: out}) == [2]


def test_field_access_through_dicts_lists_json_text_and_attributes():
    class Model(BaseModel):
        city: str
        population: float

    @dataclass
    class Row:
        name: str

    Pair = namedtuple("Pair", "left right")
    outputs = {1: {"data": '{"cities": [{"name": "Rome"}]}'}, 2: Model(city="Paris", population=2.1),
               3: [Row("a"), Row("b")], 4: {5: "five"}, 5: Pair("l", "r")}
    assert resolve(compile_value("$step_1_result.data.cities.0.name"), outputs) == "Rome"
    assert resolve(compile_value("$step_2_result.population"), outputs) == 2.1
    assert resolve(compile_value("$step_3_result.1.name"), outputs) == "b"
    assert resolve(compile_value("$step_4_result.5"), outputs) == "five"  # int keys of Python dicts
    assert resolve(compile_value(["$step_5_result.right", "$step_5_result.0"]), outputs) == ["r", "l"]


@pytest.mark.parametrize(("value", "text"), [
    ("Rome", "Rome"), (1.5, "1.5"), (2.0, "2.0"), (3, "3"), (True, "true"), (None, "null"),
    ({"city": "Zürich", "n": [1, 2.5]}, '{"city":"Zürich","n":[1,2.5]}'), ([], "[]"),
])
def test_template_text(value, text):
    assert resolve(compile_value("<{$step_1_result}>"), {1: value}) == f"<{text}>"


def test_template_text_of_models_and_dataclasses():
    class Model(BaseModel):
        a: int

    @dataclass
    class Row:
        b: str

    out = resolve(compile_value("{$step_1_result} {$step_2_result} {$step_3_result}"),
                  {1: Model(a=1), 2: Row("x"), 3: {"when": object.__new__(type("T", (), {"__str__": lambda s: "t"}))}})
    assert out == '{"a":1} {"b":"x"} {"when":"t"}'


def test_raw_strings_are_never_substituted():
    assert resolve("$step_1_result", {1: "x"}) == "$step_1_result"
    assert resolve({"a": "{$step_1_result}"}, {1: "x"}) == {"a": "{$step_1_result}"}


# -------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(("raw", "outputs", "message"), [
    ("$step_3_result.pop", {3: {"city": "Rome", "population": 2.8}},
     "step 3 output has no field 'pop' (available: city, population)"),
    ("$step_3_result.a.pop", {3: {"a": {}}}, "step 3 output has no field 'a.pop' (available: none)"),
    ("$step_3_result.items.5", {3: {"items": [1, 2, 3]}},
     "step 3 output has no item 'items.5' (the value at 'items' is a list of 3 items)"),
    ("$step_3_result.name", {3: [1]},
     "step 3 output has no field 'name' (the output is a list; use an index such as '0')"),
    ("$step_3_result.n.x", {3: {"n": 4}},
     "step 3 output has no field 'n.x' (the value at 'n' is int, not an object or a list)"),
    ("$step_3_result.x", {3: "not json"}, "step 3 output has no field 'x' (the output is str, not an object or a list)"),
    ("x {$step_3_result}", {1: 1, 2: 2},
     "no output for step 3 (outputs available for steps: 1, 2); list step 3 in depends_on so it runs first"),
    ("$step_3_result", {}, ("no output for step 3 (outputs available for steps: none); "
                           "list step 3 in depends_on so it runs first")),
])
def test_resolution_errors_name_step_field_and_what_exists(raw, outputs, message):
    with pytest.raises(RefResolutionError) as info:
        resolve(compile_value(raw), outputs)
    assert str(info.value) == message
    assert info.value.step_id == 3


def test_attribute_errors_list_public_fields():
    @dataclass
    class Row:
        name: str
        size: int

    with pytest.raises(RefResolutionError, match=r"^step 1 output has no field 'nme' \(available: name, size\)$"):
        resolve(compile_value("$step_1_result.nme"), {1: Row("a", 1)})


def test_long_key_lists_are_truncated():
    with pytest.raises(RefResolutionError) as info:
        resolve(compile_value("$step_1_result.zz"), {1: {f"k{i}": i for i in range(30)}})
    assert str(info.value).endswith("k18, k19, …)")


# ----------------------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("raw", ["$step_1_result.a.0", "x {$step_1_result} y", "$$step_1_result",
                                 "{${step_1_result}}", "{$step_1_result $step_2_result}", "a{$step_1_result}_result"])
def test_decompile_round_trips(raw):
    compiled = compile_value(raw)
    assert compile_value(decompile(compiled)) == compiled


_IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,4}", fullmatch=True)
_PATH = st.lists(st.one_of(_IDENT, st.integers(0, 9).map(str)), max_size=2)
_STYLES = ("{{${}}}", "${{{}}}", "${}")


@st.composite
def ref_tokens(draw):
    sid = draw(st.integers(1, 30))
    core = f"step_{sid}_result" + "".join("." + p for p in draw(_PATH))
    return draw(st.sampled_from(_STYLES)).format(core)


_TEXT = st.text(st.sampled_from("ab _.{}$0\n€"), max_size=6)
_RAW_STRINGS = st.lists(st.one_of(_TEXT, ref_tokens()), max_size=5).map("".join)
_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _RAW_STRINGS),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=12)


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(_VALUES)
def test_references_of_compiled_equal_references_of_raw(value):
    compiled = compile_value(value)
    assert references(compiled) == references(value)
    assert compile_value(compiled) == compiled
    assert compile_value(decompile(compiled)) == compiled


@settings(max_examples=examples(200), deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.text(st.sampled_from("ab ,.\n"), max_size=5), st.integers(1, 9)), max_size=6))
def test_braced_refs_resolve_to_exactly_their_outputs(pieces):
    raw = "".join(p if isinstance(p, str) else f"{{$step_{p}_result}}" for p in pieces)
    ids = {p for p in pieces if isinstance(p, int)}
    assert references(raw) == frozenset(ids)
    outputs = {i: f"<{i}>" for i in range(1, 10)}
    resolved = resolve(compile_value(raw), outputs)
    expected = "".join(p if isinstance(p, str) else f"<{p}>" for p in pieces)
    refs = [p for p in pieces if isinstance(p, int)]
    texts = "".join(p for p in pieces if isinstance(p, str))
    if len(refs) == 1 and not texts.strip():
        expected = f"<{refs[0]}>"  # a lone ref (whitespace around it) is a whole value, not a template
    assert resolved == expected


def test_a_field_written_after_the_braces_reads_the_records_field():
    """Small models write ``{$step_1_result}.balance`` for ``{$step_1_result.balance}``: on a record (or JSON text)
    it is that field; on plain text it stays text, exactly as written."""
    expr = compile_value("{$step_1_result}.balance_eur / {$step_2_result}.balance_eur")
    assert references(expr) == {1, 2}
    assert resolve(expr, {1: {"balance_eur": 3120.4}, 2: '{"balance_eur": 2}'}) == "3120.4 / 2"
    assert resolve(compile_value("{$step_1_result}.name"), {1: {"name": "Rome"}}) == "Rome"
    assert resolve(compile_value("see {$step_1_result}.Next"), {1: "a passage"}) == "see a passage.Next"
    assert compile_value(decompile(expr)) == expr and decompile(expr) == "{$step_1_result}.balance_eur / " \
                                                                       "{$step_2_result}.balance_eur"
    with pytest.raises(RefResolutionError, match="available: name"):
        resolve(expr, {1: {"name": "x"}, 2: {"balance_eur": 1}})
