"""``$step_N_result`` references: compiled to typed values once, at the plan boundary, resolved from outputs.

A planner writes ``"$step_2_result"`` (a whole value: step 2's output, any type), ``"$step_2_result.city"``
(a field of a structured output; ``.0`` indexes a list) or ``"Population of {$step_2_result}"`` (text with
refs inside, also ``${step_2_result}`` or a bare ``$step_2_result``). ``compile_value`` turns those strings
into ``Ref`` and ``Template`` values; ``resolve`` substitutes outputs into them. This module is the only place
refs are interpreted: nothing ever substitutes into raw strings later (LLMCompiler's ``str.replace`` lesson).

Example:
    >>> args = compile_value({"city": "$step_1_result.name", "q": "size of {$step_1_result.name}?"})
    >>> args["city"]
    Ref(step_id=1, path=('name',))
    >>> sorted(references(args))
    [1]
    >>> resolve(args, {1: {"name": "Rome", "pop": 2.8}})
    {'city': 'Rome', 'q': 'size of Rome?'}
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dag.errors import RefResolutionError

__all__ = ["REF_REGEX", "WHOLE_REF_PATTERN", "Ref", "Template", "compile_value", "decompile", "fill_text",
           "find_reference", "maybe_json", "references", "renumber", "resolve", "strings_in"]

_PATH = r"((?:\.(?:[A-Za-z_][A-Za-z0-9_]*|\d+))*)"
_CORE = r"step_(\d+)_result" + _PATH
# Order matters: the braced spellings first, so their braces are consumed with the ref; a bare ref must not
# run on into a longer word ("$step_1_results" is not a ref).
_INLINE = re.compile(rf"\{{\${_CORE}\}}|\$\{{{_CORE}\}}|\${_CORE}(?![A-Za-z0-9_])")
_WHOLE = re.compile(rf"\s*(?:{_INLINE.pattern})\s*")
_LIST_LIMIT = 20

_PATH_TEXT = r"([.][A-Za-z0-9_]+)*"
REF_REGEX = (rf"([{{][$]step_[0-9]+_result{_PATH_TEXT}[}}]{_PATH_TEXT}|[$][{{]step_[0-9]+_result{_PATH_TEXT}[}}]"
             rf"|[$]step_[0-9]+_result{_PATH_TEXT})")
"""One reference in every spelling ``compile_value`` reads, written in the regex subset that JSON-Schema-to-grammar
converters take (groups, classes, ``*``; no lookarounds; ``$``, ``.`` and braces inside classes, because
llama.cpp's converter copies ``\\$`` and ``\\.`` into the grammar as escapes its parser refuses): a superset of
what ``_INLINE`` matches, for patterns that constrain decoding (``planning.tool_inputs``, the calculator)."""
WHOLE_REF_PATTERN = rf"^ *{REF_REGEX} *$"
"""A whole-value reference as a JSON Schema ``pattern``."""
_FIELD_AFTER = re.compile(r"(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?![A-Za-z0-9_(])")


@dataclass(frozen=True, slots=True)
class Ref:
    """Step ``step_id``'s output, or the field at ``path`` inside it (segments: keys or list indices)."""

    step_id: int
    path: tuple[str, ...] = ()
    after_braces: bool = dataclasses.field(default=False, repr=False)
    """Written ``{$step_N_result}.field``: the path applies when the output has fields, else it is text."""

    def __str__(self) -> str:
        return "$step_" + str(self.step_id) + "_result" + "".join("." + p for p in self.path)

    def braced(self) -> str:
        """How the ref is written inside text."""
        if self.after_braces:
            return "{$step_" + str(self.step_id) + "_result}" + "".join("." + p for p in self.path)
        return "{" + str(self) + "}"


@dataclass(frozen=True, slots=True)
class Template:
    """Text with embedded refs; resolves to a ``str``. Adjacent text parts are always merged."""

    parts: tuple[str | Ref, ...]

    @property
    def refs(self) -> tuple[Ref, ...]:
        return tuple(p for p in self.parts if isinstance(p, Ref))


def _ref_from(match: re.Match[str]) -> Ref:
    groups = match.groups()
    for i in range(0, len(groups), 2):
        if groups[i] is not None:
            path = groups[i + 1]
            return Ref(int(groups[i]), tuple(path[1:].split(".")) if path else ())
    raise AssertionError("unreachable: every alternative captures a step id")


def _compile_str(text: str) -> str | Ref | Template:
    if "step_" not in text:  # the common case: no ref at all, skip the regexes
        return text
    whole = _WHOLE.fullmatch(text)
    if whole is not None:
        return _ref_from(whole)
    parts: list[str | Ref] = []
    pos = 0
    for m in _INLINE.finditer(text, pos):
        if m.start() < pos:
            continue
        if m.start() > pos:
            parts.append(text[pos:m.start()])
        ref, pos = _ref_from(m), m.end()
        field = _FIELD_AFTER.match(text, pos) if text[m.end() - 1] == "}" and not ref.path else None
        if field is not None:
            # "{$step_2_result}.balance": a model writing the field after the braces instead of inside them. It
            # is the field when the output has fields (a record, JSON text); after text it stays text.
            ref, pos = Ref(ref.step_id, tuple(field.group(0)[1:].split(".")), after_braces=True), field.end()
        parts.append(ref)
    if not parts:
        return text
    if pos < len(text):
        parts.append(text[pos:])
    stripped = [p for p in parts if not (isinstance(p, str) and not p.strip())]
    if len(stripped) == 1 and isinstance(stripped[0], Ref):
        return stripped[0]
    return Template(tuple(parts))


def compile_value(value: Any) -> Any:
    """Turn ref strings anywhere inside ``value`` (dicts, lists, tuples) into ``Ref`` / ``Template``.

    Idempotent: compiled values pass through unchanged. Dict keys are never interpreted.

    >>> compile_value(["$step_3_result.items.0", "${step_1_result}", "plain"])
    [Ref(step_id=3, path=('items', '0')), Ref(step_id=1, path=()), 'plain']
    """
    if isinstance(value, str):
        return _compile_str(value)
    if isinstance(value, dict):
        return {k: compile_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [compile_value(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):  # a namedtuple is data, not a container
        return tuple(compile_value(v) for v in value)
    return value


def _collect(value: Any, into: set[int]) -> None:
    if isinstance(value, Ref):
        into.add(value.step_id)
    elif isinstance(value, Template):
        into.update(r.step_id for r in value.refs)
    elif isinstance(value, dict):
        for v in value.values():
            _collect(v, into)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _collect(v, into)


def references(value: Any) -> frozenset[int]:
    """Step ids referenced by a raw or compiled value.

    >>> sorted(references({"a": "$step_2_result", "b": ["x {$step_5_result.k} y"]}))
    [2, 5]
    """
    found: set[int] = set()
    _collect(compile_value(value), found)
    return frozenset(found)


def find_reference(text: str) -> str | None:
    """The first step reference written in ``text``, in any spelling the plan reads, or None.

    >>> find_reference("Rome is larger by ${step_3_result}."), find_reference("costs $5")
    ('${step_3_result}', None)
    """
    found = _INLINE.search(text)
    return found.group(0) if found is not None else None


def strings_in(value: Any) -> list[str]:
    """Every text in a raw argument value, nested lists and objects walked, in order.

    >>> strings_in({"a": "x", "b": [1, {"c": "y"}]})
    ['x', 'y']
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


def decompile(value: Any) -> Any:
    """The raw (wire) form of a compiled value: ``compile_value(decompile(c)) == c``.

    >>> decompile(Template(("n=", Ref(2, ("a", "0")), "!")))
    'n={$step_2_result.a.0}!'
    """
    if isinstance(value, Ref):
        return value.braced() if value.after_braces else str(value)
    if isinstance(value, Template):
        # Refs inside text are always braced, so text after them can never extend their path.
        return "".join(p if isinstance(p, str) else p.braced() for p in value.parts)
    if isinstance(value, dict):
        return {k: decompile(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decompile(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(decompile(v) for v in value)
    return value


def _renumbered(value: Any, mapping: Mapping[int, int]) -> Any:
    if isinstance(value, Ref):
        return dataclasses.replace(value, step_id=mapping.get(value.step_id, value.step_id))
    if isinstance(value, Template):
        return Template(tuple(_renumbered(p, mapping) for p in value.parts))
    if isinstance(value, dict):
        return {k: _renumbered(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [_renumbered(v, mapping) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_renumbered(v, mapping) for v in value)
    return value


def renumber(value: Any, mapping: Mapping[int, int]) -> Any:
    """``value`` (raw) with its references to step ``a`` pointing at ``mapping[a]`` instead (others unchanged).

    >>> renumber({"q": "size of {$step_2_result.name}", "x": "$step_1_result"}, {2: 7})
    {'q': 'size of {$step_7_result.name}', 'x': '$step_1_result'}
    """
    return decompile(_renumbered(compile_value(value), mapping))


# ---------------------------------------------------------------------------------------------- resolution
def _listing(names: Sequence[Any]) -> str:
    shown = ", ".join(str(n) for n in names[:_LIST_LIMIT])
    return (shown + (", …" if len(names) > _LIST_LIMIT else "")) or "none"


def _fields_of(obj: Any) -> list[str] | None:
    """Public field names of a structured non-container object, or None for a scalar."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [f.name for f in dataclasses.fields(obj)]
    model_fields = getattr(type(obj), "model_fields", None)  # pydantic v2, duck-typed
    if isinstance(model_fields, Mapping):
        return list(model_fields)
    if isinstance(obj, (str, bytes, int, float, complex, bool)) or obj is None:
        return None
    try:
        return [k for k in vars(obj) if not k.startswith("_")]
    except TypeError:
        return None


def maybe_json(value: Any) -> Any:
    """``value`` parsed when it is JSON text of an object or a list, else unchanged: tools often return JSON as
    text, and a field of it is as addressable as a field of a dict (the checks count such a list's items too).

    >>> maybe_json('[1, 2]'), maybe_json('{"a": 1}'), maybe_json("1, 2"), maybe_json('[not json')
    ([1, 2], {'a': 1}, '1, 2', '[not json')
    """
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, (dict, list)):
            return parsed
    return value


def _child(container: Any, seg: str, ref: Ref, depth: int) -> Any:
    """``container[seg]`` for the ``depth``-th path segment of ``ref``, or a RefResolutionError."""
    container = maybe_json(container)
    dotted = ".".join(ref.path[: depth + 1])
    where = "the output" if depth == 0 else f"the value at '{'.'.join(ref.path[:depth])}'"

    def fail(detail: str) -> RefResolutionError:
        return RefResolutionError(f"step {ref.step_id} output has no {detail}", ref.step_id, dotted)

    if isinstance(container, Mapping):
        if seg in container:
            return container[seg]
        if seg.isdigit() and int(seg) in container:
            return container[int(seg)]
        raise fail(f"field '{dotted}' (available: {_listing(list(container))})")
    if isinstance(container, Sequence) and not isinstance(container, (str, bytes)):
        if not seg.isdigit():
            fields = getattr(container, "_fields", None)  # namedtuple: fields by name too
            if fields and seg in fields:
                return getattr(container, seg)
            raise fail(f"field '{dotted}' ({where} is a list; use an index such as '{dotted[:-len(seg)]}0')")
        if int(seg) < len(container):
            return container[int(seg)]
        raise fail(f"item '{dotted}' ({where} is a list of {len(container)} items)")
    fields = _fields_of(container)
    if fields is None:
        raise fail(f"field '{dotted}' ({where} is {type(container).__name__}, not an object or a list)")
    if seg in fields:
        return getattr(container, seg)
    raise fail(f"field '{dotted}' (available: {_listing(fields)})")


def _structured(value: Any) -> bool:
    if isinstance(value, (str, bytes)):
        return False
    return isinstance(value, (Mapping, Sequence)) or _fields_of(value) is not None


def _lookup(ref: Ref, outputs: Mapping[int, Any]) -> Any:
    if ref.step_id not in outputs:
        raise RefResolutionError(
            f"no output for step {ref.step_id} (outputs available for steps: {_listing(sorted(outputs))}); "
            f"list step {ref.step_id} in depends_on so it runs first", ref.step_id, ".".join(ref.path))
    value = outputs[ref.step_id]
    if ref.after_braces and not _structured(maybe_json(value)):
        return _to_text(value) + "".join("." + p for p in ref.path)  # text, then text: nothing to index
    for depth, seg in enumerate(ref.path):
        value = _child(value, seg, ref, depth)
    return value


def _jsonable(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    return str(obj)


def _to_text(value: Any) -> str:
    """How an output reads inside text: strings verbatim, numbers naturally, the rest as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)  # 1.5 -> "1.5", 2.0 -> "2.0", 3 -> "3"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_jsonable)


def fill_text(text: str, outputs: Mapping[int, Any]) -> str:
    """``text`` with each reference to an output in ``outputs`` replaced by that output as text (as ``resolve``
    fills a plan's arguments); a reference that cannot be filled (no such output, no such field) stays written
    out, so whoever reads the text sees that a value is missing.

    >>> fill_text("Rome is larger by {$step_3_result}; see $step_4_result.", {3: 1200})
    'Rome is larger by 1200; see {$step_4_result}.'
    """
    compiled = _compile_str(text)
    if isinstance(compiled, Ref):  # a whole-value reference: the text around it is kept as written
        start = len(text) - len(text.lstrip())
        compiled = Template((text[:start], compiled, text[len(text.rstrip()):]))
    parts = compiled.parts if isinstance(compiled, Template) else (compiled,)
    filled = []
    for part in parts:
        if isinstance(part, Ref):
            try:
                part = _to_text(_lookup(part, outputs))
            except RefResolutionError:
                part = part.braced()
        filled.append(part)
    return "".join(filled)


def resolve(compiled: Any, outputs: Mapping[int, Any]) -> Any:
    """Substitute step outputs into a compiled value. Raw strings are returned as they are.

    >>> resolve(compile_value("rows: {$step_1_result}"), {1: [{"a": 1}]})
    'rows: [{"a":1}]'
    """
    if isinstance(compiled, Ref):
        return _lookup(compiled, outputs)
    if isinstance(compiled, Template):
        return "".join(p if isinstance(p, str) else _to_text(_lookup(p, outputs)) for p in compiled.parts)
    if isinstance(compiled, dict):
        return {k: resolve(v, outputs) for k, v in compiled.items()}
    if isinstance(compiled, list):
        return [resolve(v, outputs) for v in compiled]
    if isinstance(compiled, tuple) and not hasattr(compiled, "_fields"):
        return tuple(resolve(v, outputs) for v in compiled)
    return compiled
