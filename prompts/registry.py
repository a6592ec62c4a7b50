"""Versioned prompt templates: ``prompts/<name>/v<N>.txt``, loaded by name (latest) or pinned version.

File format (see prompts/README.md)::

    # name: planner
    # version: 1
    # purpose: one line
    # variables: task, tools, max_steps, replan_context
    # context: replan_context          (trimmable under a token budget; first listed is trimmed first)
    # opening: opening/v1              (optional: a shared text the system message starts with, see below)
    === system
    ... {{tools}} ...
    === user
    Task: {{task}}
    === guardrails
    ...

    >>> p = load_prompt("repair", "v2").render(error="Expecting ',' delimiter", expected="the JSON object")
    >>> p.template_id, p.messages[1]["role"]
    ('repair/v2', 'user')
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from prompts.assemble import ContextItem, fit_context
from prompts.errors import PromptBudgetError, PromptFormatError, PromptNotFoundError, PromptVariableError
from prompts.tokens import count_message_tokens, get_encoding

__all__ = [
    "DEFAULT_VERSIONS",
    "PROMPTS_DIR",
    "PromptRegistry",
    "PromptTemplate",
    "RenderedPrompt",
    "ReplyForm",
    "available_prompts",
    "load_prompt",
    "prepare_prompts",
]

PROMPTS_DIR = Path(__file__).parent
ReplyForm = Literal["json", "terse"]
"""What a template asks the model to write: the JSON wire object (sent with its JSON schema), or the terse
one-line form (``planning.terse``; with a grammar where the server takes one). The parsers read both. Which one a
role's template asks for is the model profile's to say (``agents.llm.profile.ModelProfile.reply_forms``)."""
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_SECTIONS = ("system", "user", "guardrails")
_HEADERS = frozenset({"name", "version", "purpose", "variables", "context", "opening"})
"""A template is text and its variables: no header switches behaviour."""
_VERSION_FILE = re.compile(r"^v(\d+)\.txt$")
DEFAULT_VERSIONS: dict[str, str] = {
    "router": "v5", "planner": "v14", "reflector": "v11", "executor": "v1", "executor_repair": "v2",
    "executor_figures": "v1", "repair": "v2", "clarify_check": "v3", "answer": "v1"}
"""The version an unpinned ``load_prompt(name)`` returns, and the hosted model profile's
(``agents.llm.profile.HOSTED``): the lean forms (the router sees tool purposes, not argument schemas; the reviewer
one line a step and no tool list). Other names default to their newest version. Which version a model uses is its
``ModelProfile``'s; the versions no profile uses are not shipped (their history: prompts/CHANGELOG.md and git)."""


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    messages: list[dict[str, Any]]
    input_tokens: int
    trimmed: tuple[str, ...]
    template_id: str
    fingerprint: str


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    name: str
    version: str
    purpose: str
    variables: tuple[str, ...]
    context_variables: tuple[str, ...]
    sections: tuple[tuple[str, str], ...]
    fingerprint: str
    opening: str | None = None
    """``opening/vN``: the system message starts with that template's system text. Roles whose prompts open alike
    let a model server reuse the opening's prefill from one call to the next, whatever the role (llama.cpp keeps
    the last prompt's state and its prompt cache finds the longest prefix); on two CPU cores that is seconds a
    call. Resolved by ``PromptRegistry.load``, which adds the opening's variables to this template's."""

    @property
    def template_id(self) -> str:
        return f"{self.name}/{self.version}"

    def render(self, *, budget_tokens: int | None = None, encoding: str = "o200k_base", **values: Any) -> RenderedPrompt:
        """Fill every declared variable (strictly: missing or extra names raise PromptVariableError).
        With ``budget_tokens``, context variables are trimmed from the middle until the prompt fits."""
        missing = [v for v in self.variables if v not in values]
        extra = sorted(set(values) - set(self.variables))
        if missing or extra:
            parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
                    ([f"unknown {', '.join(extra)}"] if extra else [])
            raise PromptVariableError(f"prompt {self.template_id} takes variables {', '.join(self.variables)}: "
                                      f"{'; '.join(parts)}")
        texts = {k: "" if v is None else str(v) for k, v in values.items()}
        messages = self._messages(texts)
        tokens = count_message_tokens(messages, encoding)
        trimmed: tuple[str, ...] = ()
        if budget_tokens is not None and tokens > budget_tokens:
            messages, tokens, trimmed = self._fit(texts, budget_tokens, encoding)
        return RenderedPrompt(messages, tokens, trimmed, self.template_id, self.fingerprint)

    def _fit(self, texts: dict[str, str], budget: int, encoding: str) -> tuple[list[dict[str, Any]], int, tuple[str, ...]]:
        fixed = count_message_tokens(self._messages({**texts, **{c: "" for c in self.context_variables}}), encoding)
        if fixed > budget or not self.context_variables:
            raise PromptBudgetError(
                f"prompt {self.template_id} needs {fixed} tokens before any context but the budget is {budget} "
                f"({fixed - budget} over); raise RuntimeConfig.context_token_budget or shorten the task or the "
                "tool descriptions", needed=fixed, budget=budget)
        n = len(self.context_variables)
        items = [ContextItem(c, texts[c], priority=i) for i, c in enumerate(self.context_variables)]
        available = budget - fixed
        for _ in range(4):  # token merges at the seams can add a few; shrink until it fits
            fitted, trimmed = fit_context(items, max(0, available), encoding)
            messages = self._messages({**texts, **fitted})
            tokens = count_message_tokens(messages, encoding)
            if tokens <= budget:
                return messages, tokens, trimmed
            available -= tokens - budget + 2 * n
        raise PromptBudgetError(f"prompt {self.template_id} does not fit {budget} tokens after trimming its context; "
                                "raise RuntimeConfig.context_token_budget", needed=tokens, budget=budget)

    def _messages(self, texts: dict[str, str]) -> list[dict[str, Any]]:
        # Context variables carry data (e.g. a replan's fenced tool output), which belongs in the user message,
        # never in the system message: one placed in a system section is rendered at the start of the user message.
        in_system, system_reads, user_body = _layout(self)
        system = _system_text(self.sections, tuple((v, "" if v in in_system else texts[v]) for v in system_reads))
        user_part = _fill(user_body, texts)
        user = "\n\n".join(p for p in (*(texts[c].strip() for c in in_system), user_part) if p)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _fill(section: str, texts: dict[str, str]) -> str:
    # one pass: a value that itself contains "{{x}}" is data, never expanded again
    return _PLACEHOLDER.sub(lambda m: texts[m.group(1)], section).strip()


@functools.lru_cache(maxsize=256)
def _layout(template: PromptTemplate) -> tuple[frozenset[str], tuple[str, ...], str]:
    """The context variables a system section names (rendered in the user message instead), the variables the
    system sections read, and the user section."""
    system = [body for name, body in template.sections if name != "user"]
    in_system = frozenset(c for c in template.context_variables if any(f"{{{{{c}}}}}" in body for body in system))
    reads = tuple(sorted({m.group(1) for body in system for m in _PLACEHOLDER.finditer(body)}))
    return in_system, reads, dict(template.sections).get("user", "")


@functools.lru_cache(maxsize=256)
def _system_text(sections: tuple[tuple[str, str], ...], values: tuple[tuple[str, str], ...]) -> str:
    """The system message: the same text on every call of a role (its tool catalog, its caps), so it is filled
    once and then the same string, whose token count ``count_tokens`` finds in its cache by the cached hash."""
    texts = dict(values)
    parts = {name: _fill(body, texts) for name, body in sections if name != "user"}
    return "\n\n".join(p for p in (parts.get("system", ""), parts.get("guardrails", "")) if p)


def parse_template(text: str, *, name: str, version: str) -> PromptTemplate:
    header: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if current is None and line.startswith("#"):
            key, _, value = line[1:].partition(":")
            header[key.strip()] = value.strip()
        elif line.startswith("=== "):
            current = line[4:].strip()
            if current not in _SECTIONS or current in sections:
                raise PromptFormatError(f"{name}/{version}: unknown or repeated section '=== {current}'; "
                                        f"use each of {', '.join(_SECTIONS)} at most once")
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
        elif line.strip():
            raise PromptFormatError(f"{name}/{version}: text before the first '=== section' line: {line[:40]!r}")
    if header.get("name") != name or header.get("version") != version.removeprefix("v"):
        raise PromptFormatError(f"{name}/{version}: header says name={header.get('name')!r} "
                                f"version={header.get('version')!r}; make it match the file path")
    if "system" not in sections or "user" not in sections:
        raise PromptFormatError(f"{name}/{version}: needs '=== system' and '=== user' sections")
    declared = _names(header.get("variables", ""))
    context = _names(header.get("context", ""))
    switches = sorted(set(header) - _HEADERS)
    if switches:
        raise PromptFormatError(f"{name}/{version}: unknown header line(s) {', '.join(f'# {k}:' for k in switches)}; "
                                f"a template declares only {', '.join(sorted(_HEADERS))}: what a model's replies "
                                "look like and which strategies run are its ModelProfile's (agents.llm.profile)")
    opening = header.get("opening") or None
    if opening is not None and not re.fullmatch(r"opening/v\d+", opening):
        raise PromptFormatError(f"{name}/{version}: '# opening: {opening}' must name an opening, e.g. opening/v1")
    body = {k: "\n".join(v) for k, v in sections.items()}
    used = {m.group(1) for b in body.values() for m in _PLACEHOLDER.finditer(b)}
    # With an opening, variables only it uses are declared here too (checked when the opening is joined).
    if (used != set(declared) if opening is None else not used <= set(declared)) or not set(context) <= set(declared):
        raise PromptFormatError(f"{name}/{version}: declared variables {sorted(declared)} but the text uses "
                                f"{sorted(used)}; context {sorted(context)} must be declared too")
    return PromptTemplate(name=name, version=version, purpose=header.get("purpose", ""), variables=declared,
                          context_variables=context, sections=tuple(body.items()),
                          fingerprint=hashlib.sha256(text.encode()).hexdigest(), opening=opening)


def join_opening(template: PromptTemplate, opening: PromptTemplate) -> PromptTemplate:
    """``template`` with ``opening``'s system text first; its fingerprint covers both texts."""
    body = dict(template.sections)
    shared = dict(opening.sections)["system"].strip()
    own = {m.group(1) for b in body.values() for m in _PLACEHOLDER.finditer(b)}
    if own | set(opening.variables) != set(template.variables):
        raise PromptFormatError(f"{template.template_id}: declared variables {sorted(template.variables)} but the "
                                f"text and its opening ({opening.template_id}) use "
                                f"{sorted(own | set(opening.variables))}")
    body["system"] = f"{shared}\n\n{body['system'].strip()}"
    fingerprint = hashlib.sha256((template.fingerprint + opening.fingerprint).encode()).hexdigest()
    return dataclasses.replace(template, sections=tuple(body.items()), fingerprint=fingerprint)


def _names(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


class PromptRegistry:
    """Templates under one directory. The package's own is ``load_prompt``'s default."""

    def __init__(self, root: Path = PROMPTS_DIR, defaults: dict[str, str] | None = None, *,
                 fixed: bool = False) -> None:
        """``fixed``: the directory does not change while the process runs (the package's own templates), so
        ``load`` lists it once per name and version asked for, not on every call: every role call loads its
        template, and listing the directory took ~15% of a one-step task's CPU."""
        self.root = Path(root)
        self.defaults = dict(defaults or {})
        self._cache: dict[tuple[str, str], PromptTemplate] = {}
        self._resolved: dict[tuple[str, str | None], PromptTemplate] | None = {} if fixed else None

    def available(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for d in sorted(p for p in self.root.iterdir() if p.is_dir()):
            versions = sorted(int(m.group(1)) for f in d.iterdir() if (m := _VERSION_FILE.match(f.name)))
            if versions:
                found[d.name] = [f"v{v}" for v in versions]
        return found

    def load(self, name: str, version: str | None = None) -> PromptTemplate:
        if self._resolved is None:
            return self._load(name, version)
        found = self._resolved.get((name, version))
        if found is None:
            found = self._resolved[(name, version)] = self._load(name, version)
        return found

    def _load(self, name: str, version: str | None) -> PromptTemplate:
        options = self.available()
        if name not in options:
            raise PromptNotFoundError(f"no prompt named {name!r}; available: {', '.join(options) or '(none)'}")
        if version is None:
            version = self.defaults.get(name, options[name][-1])
        version = version if version.startswith("v") else f"v{version}"
        if version not in options[name]:
            raise PromptNotFoundError(f"prompt {name!r} has no version {version!r}; available: "
                                      f"{', '.join(options[name])}")
        key = (name, version)
        if key not in self._cache:
            text = (self.root / name / f"{version}.txt").read_text(encoding="utf-8")
            template = parse_template(text, name=name, version=version)
            if template.opening is not None:
                opening_name, _, opening_version = template.opening.partition("/")
                template = join_opening(template, self.load(opening_name, opening_version))
            self._cache[key] = template
        return self._cache[key]


@functools.lru_cache(maxsize=1)
def _default() -> PromptRegistry:
    return PromptRegistry(defaults=DEFAULT_VERSIONS, fixed=True)


def load_prompt(name: str, version: str | None = None) -> PromptTemplate:
    """The template ``name`` at ``version`` ("v1", "1"), or its default (``DEFAULT_VERSIONS``, else the newest)."""
    return _default().load(name, version)


def prepare_prompts(versions: dict[str, str | None], encoding: str = "o200k_base") -> None:
    """Load the templates ``versions`` names (name → version, None: the default) and the tokenizer their
    renders count with, so a role's first call does not: the tokenizer alone takes ~0.4 s to load, which a
    role actor otherwise spends on the critical path of its first task.

    >>> prepare_prompts({"router": None})
    """
    for name, version in versions.items():
        load_prompt(name, version)
    get_encoding(encoding)


def available_prompts() -> dict[str, list[str]]:
    return _default().available()
