"""``RuntimeConfig`` in groups (issue 61): at most 30 top-level fields, each group validated as the flat fields were,
the old flat spellings still constructing (moved into their group, with a warning naming the new spelling), and the
names DESIGN.md fixes staying top-level."""

from __future__ import annotations

import ast
import pickle
import warnings
from pathlib import Path

import pytest
from pydantic import ValidationError

import agents
from agents.config import FLAT_SPELLINGS, Deployment, Observability, RuntimeConfig, ToolPolicy
from agents.config.groups import GROUP_ONLY
from agents.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]

GROUPS = {"deployment": Deployment, "observability": Observability, "tools": ToolPolicy}
DESIGN_NAMES = {"store_path": ROOT / "t.db", "store_url": "postgresql://bob@db:5432/x", "plan_cache": True,
                "builtin_checks": ("sound", "numeric"), "supervisors": 3, "router_min_confidence": 0.7,
                "max_replans": 1, "max_step_retries": 1, "max_steps": 9, "step_timeout_s": 7.0,
                "task_timeout_s": 70.0, "token_budget": 1000, "max_llm_calls": 9}
"""The top-level names docs/DESIGN.md fixes (``RuntimeConfig(plan_cache=True)``, ...), each with a value that is
not its default."""
FLAT_VALUES = {"namespace": "ns", "num_executors": 4, "executors_per_node": 2, "executor_max_concurrency": 8,
               "role_replicas": 2, "roles_in_supervisors": True, "role_resources": {"executor": {"exec": 1.0}},
               "placement": "ray", "watch_nodes": False, "node_watch_interval_s": 0.5, "actor_max_restarts": 2,
               "ship_code": False, "runtime_env": {"pip": ["x"]}, "ray_init_kwargs": {"num_cpus": 2},
               "store_pool_size": 3, "otel": False, "otel_content": True, "otel_setup": "m:f", "log_level": "INFO",
               "tool_max_attempts": 5, "tool_backoff_s": 0.5, "tool_backoff_max_s": 9.0,
               "max_tool_output_tokens": 300}
"""A value other than the default for every flat spelling."""


def test_at_most_30_top_level_fields_and_the_groups_hold_the_rest():
    top = set(RuntimeConfig.model_fields)
    assert len(top) <= 30, sorted(top)
    assert {"deployment", "observability", "tools"} <= top
    assert not top & set(FLAT_SPELLINGS)
    grouped = {(group, name) for group, model in GROUPS.items() for name in model.model_fields}
    # every grouped field has its old spelling, and only those, but the ones added after the groups
    assert set(FLAT_SPELLINGS.values()) | GROUP_ONLY == grouped
    assert not set(FLAT_SPELLINGS.values()) & GROUP_ONLY


def test_the_groups_are_exported_from_agents_and_agents_config():
    assert (agents.Deployment, agents.Observability, agents.ToolPolicy) == (Deployment, Observability, ToolPolicy)


@pytest.mark.parametrize(("make", "says"), [
    (lambda: Deployment(num_executors=0), "greater than or equal to 1"),
    (lambda: Deployment(num_executors=True), "a bool is not a number"),
    (lambda: Deployment(node_watch_interval_s=float("inf")), "finite"),
    (lambda: Deployment(placement="pack"), "'spread' or 'ray'"),
    (lambda: Deployment(num_executor=2), "Extra inputs are not permitted"),
    (lambda: Observability(otel_setup="myapp.tracing"), "module:function"),
    (lambda: Observability(log_level="TRACE"), "'DEBUG', 'INFO', 'WARNING' or 'ERROR'"),
    (lambda: ToolPolicy(backoff_s=2.0, backoff_max_s=1.0), "backoff_max_s=1.0 must be >= backoff_s=2.0"),
    (lambda: ToolPolicy(max_output_tokens=8), "greater than or equal to 16"),
    (lambda: ToolPolicy(max_attempts=False), "a bool is not a number"),
    (lambda: RuntimeConfig(tools={"max_attempts": 0}), "greater than or equal to 1"),
])
def test_each_group_validates_as_the_flat_fields_did(make, says):
    with pytest.raises(ValidationError, match=says):
        make()


def test_otel_needs_its_extra(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ValidationError, match=r"pip install 'tetrarch\[otel\]'"):
        Observability(otel=True)


def test_the_defaults_did_not_move():
    cfg = RuntimeConfig()
    assert (cfg.deployment.num_executors, cfg.deployment.namespace, cfg.deployment.store_pool_size) == (2, "tetrarch", 8)
    assert (cfg.observability.otel, cfg.observability.log_level) == (False, "WARNING")
    assert cfg.tools == ToolPolicy(max_attempts=3, backoff_s=0.2, backoff_max_s=5.0, max_output_tokens=2000)
    assert cfg.executor_options().tools.max_attempts == 3  # the typed views read the groups


@pytest.mark.parametrize("old", sorted(FLAT_SPELLINGS))
def test_a_flat_spelling_moves_into_its_group_with_a_warning_naming_the_new_one(old):
    group, new = FLAT_SPELLINGS[old]
    value = FLAT_VALUES[old]
    with pytest.warns(DeprecationWarning) as caught:
        cfg = RuntimeConfig(**{old: value})
    assert getattr(getattr(cfg, group), new) == value
    assert cfg == RuntimeConfig(**{group: GROUPS[group](**{new: value})})
    message = str(caught[0].message)
    assert f"RuntimeConfig({group}={GROUPS[group].__name__}({new}=" in message
    assert caught[0].filename == __file__  # it points at the caller's line, not at pydantic


def test_the_warning_gathers_every_flat_name_and_keeps_the_other_fields():
    with pytest.warns(DeprecationWarning, match=r"write RuntimeConfig\(deployment=Deployment\(num_executors=4\), "
                                                r"tools=ToolPolicy\(max_attempts=5\)\)"):
        cfg = RuntimeConfig(num_executors=4, max_steps=9, tool_max_attempts=5)
    assert (cfg.deployment.num_executors, cfg.max_steps, cfg.tools.max_attempts) == (4, 9, 5)


def test_the_warning_does_not_show_a_dict_that_may_hold_a_secret():
    with pytest.warns(DeprecationWarning) as caught:
        RuntimeConfig(runtime_env={"env_vars": {"TOKEN": "hunter2"}})
    assert "hunter2" not in str(caught[0].message) and "runtime_env={...}" in str(caught[0].message)


def test_a_flat_spelling_is_validated_in_its_group():
    with pytest.raises(ValidationError, match="must be >= backoff_s"), pytest.warns(DeprecationWarning):
        RuntimeConfig(tool_backoff_s=3.0, tool_backoff_max_s=1.0)


def test_a_flat_name_beside_its_group_is_an_error():
    with pytest.raises(ValidationError, match=r"both num_executors= and deployment=.*deployment\.num_executors"):
        RuntimeConfig(num_executors=4, deployment=Deployment(namespace="x"))
    with pytest.raises(ValidationError, match="both otel= and observability="):
        RuntimeConfig(otel=False, observability={"log_level": "INFO"})


def test_a_flat_name_is_not_read_back_and_not_copied_in():
    cfg = RuntimeConfig(deployment=Deployment(num_executors=4))
    with pytest.raises(AttributeError):
        cfg.num_executors  # noqa: B018 - the flat read is gone; code reads cfg.deployment.num_executors
    # pydantic's model_copy does not validate: a flat name would be set beside its group and read by nobody.
    with pytest.raises(ConfigError, match=r"tool_max_attempts is now tools\.max_attempts"):
        cfg.model_copy(update={"tool_max_attempts": 2})
    with pytest.raises(ConfigError, match="no field 'max_stpes'"):
        cfg.model_copy(update={"max_stpes": 2})
    assert cfg.model_copy(update={"tools": ToolPolicy(max_attempts=2)}).tools.max_attempts == 2


def test_a_frozen_config_hashes_pickles_and_dumps_its_groups():
    make = lambda: RuntimeConfig(store_url="postgresql://bob:hunter2@db:5432/x", deployment=Deployment(  # noqa: E731
        role_resources={"executor": {"exec": 1.0}}, runtime_env={"env_vars": {"A": "1"}, "pip": ["x"]}))
    cfg = make()
    assert hash(cfg) == hash(make()) and cfg == make()
    assert hash(cfg) != hash(cfg.model_copy(update={"deployment": Deployment(num_executors=5)}))
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    with pytest.raises(ValidationError, match="frozen"):
        cfg.deployment.num_executors = 3  # type: ignore[misc]
    dumped = cfg.model_dump(mode="json")
    assert dumped["deployment"]["role_resources"] == {"executor": {"exec": 1.0}} and "num_executors" not in dumped
    assert dumped["tools"]["max_attempts"] == 3 and dumped["observability"]["otel"] is False
    assert dumped["store_url"] == "postgresql://bob:***@db:5432/x" and "hunter2" not in repr(cfg)


@pytest.mark.parametrize(("name", "value"), sorted(DESIGN_NAMES.items()))
def test_every_name_design_fixes_constructs_top_level_without_a_warning(name, value):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = RuntimeConfig(**{name: value})
    assert getattr(cfg, name) == value


def test_the_repository_constructs_only_the_grouped_spelling():
    # The tests ignore DeprecationWarning (pyproject.toml), so a flat spelling left in the code would go unseen.
    found = []
    for path in sorted(p for d in ("agents", "benchmarks", "tests") for p in (ROOT / d).rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "RuntimeConfig(" not in text or path == Path(__file__):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("RuntimeConfig"):
                found += [f"{path.relative_to(ROOT)}:{node.lineno}: {k.arg}=" for k in node.keywords
                          if k.arg in FLAT_SPELLINGS]
    assert found == []


def test_the_roles_run_inside_the_shards_unless_asked_for_what_only_their_own_actors_honour():
    assert Deployment().roles_in_shards  # the default: a role call is a function call, not an actor round trip
    assert Deployment(role_resources={"executor": {"exec": 1.0}}).roles_in_shards
    assert not Deployment(role_replicas=2).roles_in_shards
    assert not Deployment(role_resources={"planner": {"llm": 1.0}}).roles_in_shards
    assert not Deployment(roles_in_supervisors=False).roles_in_shards
    assert Deployment(roles_in_supervisors=True, role_replicas=2).roles_in_shards
