"""A calculator that evaluates arithmetic by walking the AST: no eval, no exec, nothing a model can escape.

    >>> evaluate_expression("(2.10 - 2.75) / 2.75 * 100")
    -23.636363636363633
    >>> evaluate_expression("2,165,000 / 1e6")
    2.165

Commas between digit groups ("2,165,000") are read as thousands separators because models copy numbers
from prose that way; a comma anywhere else separates function arguments. A trailing ``%`` after a number
("15%") means ``/ 100``; ``%`` between operands stays the modulo operator. A magnitude word after a number
("2.10 million", "3 billion", "12 thousand") multiplies it, because that is how documents state figures and
how models copy them into expressions.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from typing import Annotated, Any

import pydantic

from agents.tools.decorator import tool
from agents.tools.errors import ToolArgumentError
from dag.refs import REF_REGEX

__all__ = ["EXPRESSION_PATTERN", "MAX_EXPRESSION_CHARS", "calculator", "evaluate_expression"]

MAX_EXPRESSION_CHARS = 1_000
_MAX_DEPTH = 40
_MAX_EXPONENT = 10_000
_MAX_INT_BITS = 4_096  # beyond ~1e1233 a result is a mistake, and bigger ints make later ops slow

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _round(x: float, ndigits: int = 0) -> float:
    return round(x, int(ndigits))


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "abs": abs,
    "round": _round,
    "min": min,
    "max": max,
    "floor": math.floor,
    "ceil": math.ceil,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}

_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")
_MAGNITUDES = {"thousand": "1e3", "million": "1e6", "billion": "1e9", "trillion": "1e12"}
_MAGNITUDE = re.compile(r"(\d(?:[\d.]*\d)?(?:e[+-]?\d+)?)\s*(thousand|million|billion|trillion)s?\b", re.IGNORECASE)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%(?=\s*(?:$|[)+\-*/,]))")


def _any_case(word: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in word)


EXPRESSION_PATTERN = "^(" + "|".join([
    r"[0-9.,+*/%()^ ×÷−_eE-]",  # digits, operators, grouping, exponents, the constant e
    *sorted(name for name in [*_FUNCTIONS, *_CONSTANTS] if name != "e"),
    # A scale word only after a digit or a reference, as the calculator reads one (``_MAGNITUDE``): a word on its
    # own is an unknown name. Allowed alone, the 1.5B planner wrote "BilLion - {$step_1_result}".
    *(f"([0-9]|{REF_REGEX}) *" + _any_case(word) + "[sS]?" for word in _MAGNITUDES),
    REF_REGEX,
]) + ")*$"
"""Every token the calculator reads, and plan references to other steps' outputs, as a JSON Schema ``pattern``:
a grammar-constrained planner then cannot put a name the calculator does not know ("price - cost", "sum(x)",
a scale word with no number before it) into an expression. It is a token-level superset of what
``evaluate_expression`` accepts in decimal notation, so it never forbids an expression the calculator would
evaluate; the calculator does not enforce it (its own errors say more than a pattern mismatch)."""


def _normalise(expression: str) -> str:
    text = expression.strip().replace("×", "*").replace("÷", "/").replace("−", "-").replace("^", "**")
    text = _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)
    text = _MAGNITUDE.sub(lambda m: f"({m.group(1)}*{_MAGNITUDES[m.group(2).lower()]})", text)
    return _PERCENT.sub(r"(\1/100)", text)


def evaluate_expression(expression: str) -> int | float:
    """Evaluate ``expression`` safely; raises ToolArgumentError saying what is not allowed and why."""
    if not isinstance(expression, str):
        raise ToolArgumentError(f"expression must be a string, got {type(expression).__name__}")
    if not expression.strip():
        raise ToolArgumentError("expression is empty; pass arithmetic such as '2.1 / 2.75'")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ToolArgumentError(f"expression is {len(expression)} characters; the limit is {MAX_EXPRESSION_CHARS}")
    text = _normalise(expression)
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError) as exc:
        raise ToolArgumentError(f"cannot parse {expression!r} as arithmetic: {exc.msg if isinstance(exc, SyntaxError) else exc}") from None
    except RecursionError:
        raise ToolArgumentError(f"expression nests deeper than {_MAX_DEPTH} levels") from None
    try:
        value = _eval(tree.body, 0)
    except ToolArgumentError:
        raise
    except ZeroDivisionError:
        raise ToolArgumentError(f"division by zero in {expression!r}") from None
    except OverflowError:
        raise ToolArgumentError(f"the result of {expression!r} is too large to represent") from None
    except (ValueError, TypeError) as exc:
        raise ToolArgumentError(f"cannot evaluate {expression!r}: {exc}") from None
    except RecursionError:
        raise ToolArgumentError(f"expression nests deeper than {_MAX_DEPTH} levels") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise ToolArgumentError(f"the result of {expression!r} is not a finite number ({value})")
    return value


def _check_size(value: Any) -> Any:
    if isinstance(value, bool):
        raise ToolArgumentError("booleans are not numbers here")
    if isinstance(value, int) and value.bit_length() > _MAX_INT_BITS:
        raise ToolArgumentError(f"an intermediate result exceeds {_MAX_INT_BITS} bits; check the expression")
    return value


def _eval(node: ast.AST, depth: int) -> int | float:
    if depth > _MAX_DEPTH:
        raise ToolArgumentError(f"expression nests deeper than {_MAX_DEPTH} levels")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ToolArgumentError(f"only numbers are allowed, got {node.value!r}")
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left, depth + 1), _eval(node.right, depth + 1)
        if isinstance(node.op, ast.Pow):
            if abs(right) > _MAX_EXPONENT:
                raise ToolArgumentError(f"exponent {right} is larger than {_MAX_EXPONENT}")
            if isinstance(left, int) and isinstance(right, int) and right > 0 and \
                    left.bit_length() * right > _MAX_INT_BITS:
                raise ToolArgumentError(f"{left} ** {right} would exceed {_MAX_INT_BITS} bits")
        if isinstance(node.op, ast.Mult) and isinstance(left, int) and isinstance(right, int) and \
                left.bit_length() + right.bit_length() > _MAX_INT_BITS + 1:
            raise ToolArgumentError(f"a product exceeds {_MAX_INT_BITS} bits; check the expression")
        return _check_size(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, depth + 1))
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise ToolArgumentError(f"unknown name {node.id!r}; allowed constants: {', '.join(sorted(_CONSTANTS))}")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
            name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise ToolArgumentError(f"function {name!r} is not allowed; allowed: {', '.join(sorted(_FUNCTIONS))}")
        if node.keywords:
            raise ToolArgumentError("keyword arguments are not supported; pass values positionally")
        if not node.args or len(node.args) > 100:
            raise ToolArgumentError(f"{node.func.id}() takes between 1 and 100 arguments")
        args = [_eval(arg, depth + 1) for arg in node.args]
        return _check_size(_FUNCTIONS[node.func.id](*args))
    raise ToolArgumentError(f"{type(node).__name__} is not arithmetic; use numbers, + - * / // % ** and "
                            f"the functions {', '.join(sorted(_FUNCTIONS))}")


@tool(permission="read", timeout_s=5)
def calculator(expression: Annotated[str, pydantic.Field(json_schema_extra={"pattern": EXPRESSION_PATTERN})]
               ) -> int | float:
    """Evaluate an arithmetic expression exactly, e.g. "max(3, 4) - 1" or "round(10 / 4, 2)".

    Args:
        expression: Numbers with + - * / // % ** and parentheses; functions sqrt, log, log10, log2, exp, sin,
            cos, tan, abs, round, min, max, floor, ceil; constants pi, e, tau. Numbers may be written as texts
            state them: with grouped thousands, a scale word or a percent sign.
    """
    # The examples hold no figure a task could mean: small models copied a realistic one ("(2.10 - 2.75) / 2.75 *
    # 100", "2,165,000") into plans for tasks they did not know how to look up (planning/blind_calls.py).
    value = evaluate_expression(expression)
    if isinstance(value, float):
        return round(value, 12)
    return value
