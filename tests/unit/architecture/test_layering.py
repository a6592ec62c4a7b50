"""The layers hold: no import cycles between modules, and only the cluster package talks to Ray."""

from tests.support.import_graph import _allowed_ray, cycles, import_graph, modules_importing


def test_no_import_cycles():
    assert cycles() == []


def test_only_the_cluster_package_imports_ray():
    strays = [m for m in modules_importing("ray") if not _allowed_ray(m)]
    assert strays == [], f"only agents.cluster (and agents.api's lazy import) may import ray: {strays}"


def test_the_pure_core_imports_no_runtime():
    graph = import_graph()
    for module in graph:
        if module.split(".")[0] in ("dag", "planning", "prompts"):
            runtime = [t for t in graph.successors(module) if t.split(".")[0] == "agents"]
            assert runtime == [], f"{module} is pure and must not import {runtime}"


def test_roles_and_engine_do_not_reach_up():
    graph = import_graph()
    above = ("agents.api", "agents.cli", "agents.cluster")
    for module in graph:
        if module.startswith(("agents.roles", "agents.engine")):
            bad = [t for t in graph.successors(module) if t.startswith(above)]
            assert bad == [], f"{module} imports {bad}: roles and the engine must not know the API, CLI or Ray"
