"""The runtime_env that ships the code to a cluster, built without Ray running."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

import agents
from agents.cluster.deploy import PROJECT_PACKAGES, build_runtime_env, merge_runtime_env, module_paths
from agents.llm import FunctionLLM
from agents.tools import tool

ROOT = Path(agents.__file__).resolve().parent.parent


@pytest.fixture
def user_modules(tmp_path, monkeypatch):
    """A user's package and a single-file module, importable here only through sys.path."""
    pkg = tmp_path / "mytools"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "geo.py").write_text(
        "from agents import tool\n\n@tool\ndef area(city: str) -> float:\n"
        "    \"\"\"Area.\n\n    Args:\n        city: A city.\n    \"\"\"\n    return 1.0\n")
    (tmp_path / "single_llm.py").write_text("def reply(request):\n    return 'x'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("mytools", "mytools.geo", "single_llm"):
        sys.modules.pop(name, None)


def test_the_project_packages_are_always_shipped_from_where_they_are_imported():
    paths = module_paths([])
    assert [p.name for p in paths] == list(PROJECT_PACKAGES)
    assert all(p.parent == ROOT for p in paths)


def test_tool_and_llm_modules_are_shipped_by_their_top_level_package_or_file(user_modules):
    from mytools.geo import area
    from single_llm import reply

    env = build_runtime_env([area], FunctionLLM(reply))
    assert env["py_modules"][-2:] == [str(user_modules / "mytools"), str(user_modules / "single_llm.py")]
    assert "__pycache__" in env["excludes"]


def test_main_stdlib_installed_and_by_value_modules_are_not_shipped():
    @tool
    def local(x: int) -> int:
        """Identity.

        Args:
            x: A number.
        """
        return x

    local.fn.__module__ = "__main__"
    import json

    import pydantic

    names = ["__main__", json.__name__, "os.path", pydantic.__name__, "support"]
    import support  # tests/support: registered by value by the Ray test fixtures
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(support)
    try:
        assert [p.name for p in module_paths(names)] == list(PROJECT_PACKAGES)
    finally:
        cloudpickle.unregister_pickle_by_value(support)
    assert build_runtime_env([local], None)["py_modules"] == [str(p) for p in module_paths([])]


def test_user_runtime_env_is_merged_not_replaced():
    env = build_runtime_env([], None, {"pip": ["requests==2.32.3"], "py_modules": ["/opt/extra"],
                                       "env_vars": {"A": "1"}})
    assert env["pip"] == ["requests==2.32.3"] and env["env_vars"] == {"A": "1"}
    assert env["py_modules"][-1] == "/opt/extra" and len(env["py_modules"]) == len(PROJECT_PACKAGES) + 1
    assert merge_runtime_env({"py_modules": ["a"], "excludes": ["x"]}, {"py_modules": ["a", "b"]}) == {
        "py_modules": ["a", "b"], "excludes": ["x"]}


def test_a_module_that_cannot_be_imported_is_skipped_with_a_warning(caplog):
    caplog.set_level(logging.WARNING, logger="tetrarch.deploy")
    assert [p.name for p in module_paths(["no_such_module_xyz"])] == list(PROJECT_PACKAGES)
    assert "no_such_module_xyz" in caplog.text
