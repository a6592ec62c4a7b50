"""Every example in a docstring runs and prints what it says: the examples are how a reader learns an API, and a
stale one teaches the wrong call (prompts.registry's showed a template's old variables for a while)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("agents", "planning", "prompts", "dag", "benchmarks")
# Entry points run by path or as a program: importing them starts the program, or must not happen in this
# process (the model server's child-side files, loaded by file path there).
NOT_IMPORTED = ("__main__", "agents.llm.local._launch")


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        root = importlib.import_module(package)
        names.append(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            if not info.name.endswith(NOT_IMPORTED):
                names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_the_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False,
                             report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see the output)"
