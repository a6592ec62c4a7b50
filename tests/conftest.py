"""Shared fixtures. Ray is started once per test module that asks for it (``ray_session``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))  # `import support` from every test directory

from support.postgres import postgres_server, postgres_url  # noqa: E402,F401 - fixtures: a real PostgreSQL server
from hypothesis import settings  # noqa: E402

# No per-example deadline: speed is measured by benchmarks, never by timed tests, and on the shared two-core
# machine an example of a pure function took 620 ms beside a model server (the default deadline is 200 ms).
settings.register_profile("tetrarch", deadline=None)
settings.load_profile("tetrarch")


@pytest.fixture(scope="module")
def ray_session(request):
    """One local Ray per module. Test modules' functions (tools, scripted LLM callables) are pickled by
    value so Ray workers do not need to import the test files."""
    import ray
    import support
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(support)
    cloudpickle.register_pickle_by_value(sys.modules[request.module.__name__])
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, namespace="tetrarch-tests", include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "tetrarch.db"


def pytest_report_header(config):
    return f"tetrarch tests; CI={os.environ.get('CI', '')}"
