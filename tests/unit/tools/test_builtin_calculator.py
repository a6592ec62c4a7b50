"""The calculator: exact arithmetic, the documented conveniences, and nothing but ToolArgumentError for hostile input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.tools import ToolArgumentError
from agents.tools.builtins.calculator import MAX_EXPRESSION_CHARS, calculator, evaluate_expression
from support.tiers import examples


@pytest.mark.parametrize(("expression", "expected"), [
    ("1 + 2 * 3", 7),
    ("(2.10 - 2.75) / 2.75 * 100", (2.10 - 2.75) / 2.75 * 100),
    ("2 ** 10", 1024),
    ("7 // 2", 3),
    ("7 % 3", 1),
    ("-(3 - 5)", 2),
    ("sqrt(16) + abs(-2)", 6.0),
    ("max(1, 5, 3) - min(4, 2)", 3),
    ("round(2.71828, 2)", 2.72),
    ("floor(2.7) + ceil(2.1)", 5),
    ("log(e)", 1.0),
    ("2,165,000 / 1,000", 2165.0),
    ("15% * 200", 30.0),
    ("max(1,2)", 2),  # a comma between arguments is not a thousands separator
    ("3 × 4 − 2", 10),
    ("2^3", 8),
    ("2.75 million - 2.10 million", 650_000),
    ("3 Billion / 1 thousand", 3e6),
    ("1e3 million", 1e9),
])
def test_evaluates_arithmetic(expression: str, expected: float) -> None:
    assert evaluate_expression(expression) == pytest.approx(expected)


@pytest.mark.parametrize(("expression", "message"), [
    ("", "empty"),
    ("1 / 0", "division by zero"),
    ("9 ** 9 ** 9", "exponent"),
    ("10 ** 5000", "bits"),
    ("__import__('os').system('id')", "is not allowed"),
    ("().__class__.__bases__[0].__subclasses__()", "is not allowed"),
    ("(1).__class__", "not arithmetic"),
    ("open('/etc/passwd')", "'open' is not allowed"),
    ("x + 1", "unknown name 'x'"),
    ("'a' * 3", "only numbers"),
    ("[1, 2]", "not arithmetic"),
    ("lambda: 1", "not arithmetic"),
    ("[x for x in (1,)]", "not arithmetic"),
    ("True + 1", "only numbers"),
    ("sqrt(-1)", "math domain error"),
    ("1e308 * 10", "not a finite number"),
    ("10.0 ** 400", "too large"),
    ("round(2.5, ndigits=1)", "keyword arguments"),
    ("1 +", "cannot parse"),
    ("-" * 200 + "1", "nests deeper"),
    ("1" * (MAX_EXPRESSION_CHARS + 1), "limit"),
])
def test_refuses_with_a_message_that_says_why(expression: str, message: str) -> None:
    with pytest.raises(ToolArgumentError) as info:
        evaluate_expression(expression)
    assert message in str(info.value)


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=80))
def test_hostile_text_only_ever_raises_argument_errors(text: str) -> None:
    try:
        value = evaluate_expression(text)
    except ToolArgumentError:
        return
    assert isinstance(value, int | float) and not isinstance(value, bool)
    assert not isinstance(value, float) or math.isfinite(value)


@settings(max_examples=examples(200), deadline=None)
@given(st.recursive(
    st.integers(-10**6, 10**6).map(str) | st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    lambda inner: st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**", "%", "//"]), inner)
    .map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    max_leaves=8))
def test_random_arithmetic_terminates_quickly_with_a_number_or_a_clear_error(expression: str) -> None:
    try:
        evaluate_expression(expression)
    except ToolArgumentError as exc:
        assert str(exc)


def test_the_tool_rounds_floats_and_validates_its_argument() -> None:
    assert calculator("0.1 + 0.2") == 0.3
    assert calculator.spec.parameters["required"] == ["expression"]
    with pytest.raises(ToolArgumentError, match="missing required argument 'expression'"):
        calculator.validate_arguments({})


_TOKENS = st.sampled_from(["1", "2.5", "1e3", "2,165,000", "15%", "pi", "e", "tau", "3 million", "2 Thousand",
                           "2.81billions", "4.5  TRILLION", "{$step_1_result}", "$step_2_result.value"])
_OPERATORS = st.sampled_from([" + ", " - ", " * ", " / ", " // ", " % ", " ** ", "×", "÷", " − "])
_FUNCTION_NAMES = st.sampled_from(["sqrt", "log", "log10", "log2", "exp", "sin", "cos", "tan", "abs", "round",
                                   "min", "max", "floor", "ceil"])
_EXPRESSIONS = st.recursive(_TOKENS, lambda inner: st.one_of(
    st.tuples(inner, _OPERATORS, inner).map("".join),
    inner.map(lambda x: f"({x})"),
    inner.map(lambda x: f"-{x}"),
    st.tuples(_FUNCTION_NAMES, st.lists(inner, min_size=1, max_size=3)).map(lambda f: f"{f[0]}({', '.join(f[1])})"),
), max_leaves=8)


@settings(max_examples=examples(300), deadline=None)
@given(_EXPRESSIONS)
def test_the_declared_pattern_admits_every_expression_the_calculator_evaluates(expression):
    """The pattern constrains a planner's decoding: if it refused an expression the calculator takes, a
    grammar-constrained model could not write a right plan."""
    import re

    from agents.tools.builtins.calculator import EXPRESSION_PATTERN

    assert re.fullmatch(EXPRESSION_PATTERN[1:-1], expression)
    evaluable = expression.replace("{$step_1_result}", "4").replace("$step_2_result.value", "9")
    try:
        evaluate_expression(evaluable)
    except ToolArgumentError:
        pass  # a domain error (log of a negative): the pattern is about tokens, not values


@pytest.mark.parametrize("expression", ["Q2 - Q1", "sum({$step_1_result})", "count(*) - 1", "revenue * 2",
                                        "{$step_1_result}.open_orders * 250 FROM t",
                                        "BilLion - {$step_1_result}", "(million) * 2", "2 + thousand"])
def test_the_declared_pattern_refuses_names_the_calculator_does_not_know(expression):
    import re

    from agents.tools.builtins.calculator import EXPRESSION_PATTERN

    assert not re.fullmatch(EXPRESSION_PATTERN[1:-1], expression)
    with pytest.raises(ToolArgumentError):
        evaluate_expression(expression.replace("{$step_1_result}", "4"))
