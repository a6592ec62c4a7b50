"""Shared fixtures and the test tiers.

Tiers (docs/testing.md): every test belongs to exactly one, decided by its markers in ``tier_of``:
- ``fast`` — ``make test``: no marker that needs a service, plus the one Ray module marked ``smoke``;
- ``all`` — ``make test-all``: Ray, clusters, PostgreSQL, the browser, own subprocesses;
- ``slow`` — ``make test-slow``: every point of the crash matrices and the 10,000-example fuzz (CI samples them);
- ``llm`` — ``make test-llm``: a real local model server.
``pytest`` on the whole tree runs the fast tier; ``pytest path/to/test_x.py`` runs every tier but ``llm`` in the
files named, so a Ray module runs when asked for by name; ``--tier`` chooses explicitly.

Ray is started once per xdist worker (``ray_session``) and shared by the modules that ask for it; a module
that failed or left actors behind gets a fresh Ray for the next one.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))  # `import support` from every test directory
# The support tools count their side effects in files; each xdist worker (and the Ray workers and subprocesses it
# starts, which inherit the variable) counts in a directory of its own, so parallel tests never see each other's.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
os.environ["TETRARCH_TEST_COUNTERS"] = tempfile.mkdtemp(prefix=f"tetrarch-counters-{_WORKER}-")

from support.postgres import postgres_server, postgres_url  # noqa: E402,F401 - fixtures: a real PostgreSQL server
from support.tiers import TIERS, tier_of  # noqa: E402
from hypothesis import settings  # noqa: E402
from support.tiers import examples

# No per-example deadline: speed is measured by benchmarks, never by timed tests, and on the shared two-core
# machine an example of a pure function took 620 ms beside a model server (the default deadline is 200 ms).
# `fast` (make test) caps the examples of every property test, `thorough` runs each as many as it asks for.
settings.register_profile("thorough", deadline=None)
settings.register_profile("fast", deadline=None, max_examples=examples(40))
settings.load_profile(os.environ.get("TETRARCH_HYPOTHESIS", "thorough"))


def pytest_addoption(parser):
    parser.addoption("--tier", choices=(*TIERS, "named", "any"), default=None,
                     help="which tests run: fast (make test), all (make test-all), slow (make test-slow), "
                          "llm (make test-llm), any; default: fast on the whole tree, every tier but slow and "
                          "llm in the paths named")


_SERVICE_FIXTURES = {"ray_session": "ray", "postgres_server": "postgres"}


def _chosen_tier(config) -> str:
    tier = config.getoption("--tier")
    if tier is not None:
        return tier
    named = [arg for arg in config.args if Path(arg.split("::")[0]).resolve() != TESTS.resolve()]
    return "named" if named else "fast"


def pytest_collection_modifyitems(config, items):
    chosen = _chosen_tier(config)
    keep, drop = [], []
    for item in items:
        # A fixture that starts a service marks its tests, so none can land in `make test` by omission.
        for fixture, marker in _SERVICE_FIXTURES.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)
        names = {mark.name for mark in item.iter_markers()}
        tier = tier_of(names)
        wanted = chosen == "any" or tier == chosen or (chosen == "named" and tier in ("fast", "all"))
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _leaves_ray_dirty(module) -> bool:
    """A module that failed, or whose actors outlive it, hands the next module a fresh Ray. Actors are killed
    asynchronously, so a few seconds are allowed for them to go."""
    import ray

    if getattr(module, "_tetrarch_failed", False):
        return True
    deadline = time.monotonic() + 5
    while True:
        try:
            leftover = ray.util.list_named_actors(all_namespaces=True)
        except Exception:  # a Ray that cannot answer is no Ray to hand on
            return True
        if not leftover or time.monotonic() > deadline:
            return bool(leftover)
        time.sleep(0.1)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if outcome.get_result().failed:
        item.module._tetrarch_failed = True


@pytest.fixture(scope="module")
def ray_session(request):
    """A local Ray shared by the modules of this worker that ask for it. Test modules' functions (tools, scripted
    LLM callables) are pickled by value so Ray workers do not need to import the test files."""
    import ray
    import support
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(support)
    cloudpickle.register_pickle_by_value(sys.modules[request.module.__name__])
    if not ray.is_initialized():
        # "local": never join a cluster another worker's module started (ray.cluster_utils.Cluster writes its
        # address where a bare ray.init() would find it).
        ray.init(address="local", num_cpus=2, namespace="tetrarch-tests", include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    yield ray
    if _leaves_ray_dirty(request.module):
        ray.shutdown()


@pytest.fixture(scope="session", autouse=True)
def _ray_down_at_the_end():
    yield
    if "ray" in sys.modules:
        import ray

        if ray.is_initialized():
            ray.shutdown()


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "tetrarch.db"


def pytest_report_header(config):
    return f"tetrarch tests; tier={_chosen_tier(config)}; CI={os.environ.get('CI', '')}"
