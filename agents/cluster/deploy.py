"""Ship the code to a Ray cluster: a job-level ``runtime_env`` with the project packages and the user's
tool modules as ``py_modules``.

Workers on other machines import whatever the actors' pickled arguments name: the role classes
(``agents``, ``planning``, ``dag``, ``prompts``), every tool function defined in a module (cloudpickle pickles
those *by reference*), and the LLM's class. ``build_runtime_env`` finds those modules on this driver and
lists their directories (or single ``.py`` files); Ray zips them, uploads them to the cluster once (content
hash) and puts them on every worker's ``sys.path``. Modules installed in site-packages are left to the
cluster's own environment (add them with ``Deployment(runtime_env={"pip": [...]})``); ``__main__`` and
modules registered with ``cloudpickle.register_pickle_by_value`` travel by value already.

Ray accepts local paths only at the job level (``ray.init(runtime_env=...)``), not per actor, so the
Orchestrator applies this when it connects. If you call ``ray.init`` yourself, pass
``runtime_env=build_runtime_env(tools, llm)``.

Example:
    >>> env = build_runtime_env([], None)
    >>> sorted(Path(p).name for p in env["py_modules"])
    ['agents', 'dag', 'planning', 'prompts']
"""

from __future__ import annotations

import importlib
import logging
import sys
import sysconfig
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["PROJECT_PACKAGES", "build_runtime_env", "merge_runtime_env", "module_paths"]

log = logging.getLogger("tetrarch.deploy")

PROJECT_PACKAGES = ("agents", "planning", "dag", "prompts")
# Bytecode caches differ per machine and would change the content hash (a new upload) for nothing.
_EXCLUDES = ["__pycache__", "*.pyc"]


def _installed_roots() -> set[Path]:
    roots = set()
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(Path(path).resolve())
    return roots


def _by_value_modules() -> set[str]:
    try:
        from ray.cloudpickle import cloudpickle as cp
    except ImportError:  # pragma: no cover - Ray is a dependency; keep this module importable without it
        return set()
    return set(getattr(cp, "_PICKLE_BY_VALUE_MODULES", set()))


def _top_level(module_name: str) -> str:
    return module_name.split(".", 1)[0]


def _source_path(top: str) -> Path | None:
    """The directory of a package, or the ``.py`` file of a single-module top level; None if neither (a
    namespace package spread over several directories, a compiled extension, a built-in)."""
    module = sys.modules.get(top) or importlib.import_module(top)
    paths = list(getattr(module, "__path__", []) or [])
    if paths:
        return Path(paths[0]).resolve() if len(paths) == 1 else None
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if file and file.endswith(".py") else None


def module_paths(module_names: Iterable[str]) -> list[Path]:
    """Local paths to ship for ``module_names`` (the project packages always included), deduplicated,
    in a stable order. Modules that the cluster provides itself or that travel by value are skipped."""
    skip = set(sys.builtin_module_names) | set(sys.stdlib_module_names) | {"__main__", "builtins"}
    by_value = _by_value_modules()
    installed = _installed_roots()
    tops = list(PROJECT_PACKAGES)
    for name in module_names:
        top = _top_level(name)
        if top in skip or top in tops or name in by_value or top in by_value:
            continue
        tops.append(top)
    paths: list[Path] = []
    for top in tops:
        try:
            path = _source_path(top)
        except ImportError:
            log.warning("module %r cannot be imported here, so it cannot be shipped to the cluster", top)
            continue
        if path is None:
            log.warning("module %r is not a plain package or .py file; install it on the cluster instead", top)
            continue
        if top not in PROJECT_PACKAGES and any(root in path.parents for root in installed):
            continue  # an installed distribution: the cluster's environment must provide it (pip)
        if path not in paths:
            paths.append(path)
    return paths


def _modules_of(tools: Sequence[Any], llm: Any) -> list[str]:
    names = []
    for t in tools:
        fn = getattr(t, "fn", t)
        module = getattr(fn, "__module__", None)
        if module:
            names.append(module)
    if llm is not None:
        names.append(type(llm).__module__)
        inner = getattr(llm, "fn", None)  # FunctionLLM's callable may live in the user's module
        if callable(inner) and getattr(inner, "__module__", None):
            names.append(inner.__module__)
    return names


def merge_runtime_env(base: Mapping[str, Any] | None, extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """``extra`` over ``base``; ``py_modules`` and ``excludes`` are concatenated (deduplicated), every other
    key of ``extra`` wins."""
    merged: dict[str, Any] = dict(base or {})
    for key, value in (extra or {}).items():
        if key in ("py_modules", "excludes"):
            merged[key] = list(dict.fromkeys([*merged.get(key, []), *value]))
        else:
            merged[key] = value
    return merged


def build_runtime_env(tools: Sequence[Any], llm: Any, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``runtime_env`` that lets every node import the project, the tools' modules and the LLM's class;
    ``extra`` (e.g. ``{"pip": [...], "env_vars": {...}}``) is merged in."""
    shipped = {"py_modules": [str(p) for p in module_paths(_modules_of(tools, llm))], "excludes": list(_EXCLUDES)}
    return merge_runtime_env(shipped, extra)
