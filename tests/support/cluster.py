"""A multi-raylet ``ray.cluster_utils.Cluster`` for one test module, with that module's code reachable on
every worker."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from benchmarks.cluster.local_cluster import local_cluster

__all__ = ["module_cluster"]


@contextlib.contextmanager
def module_cluster(module_name: str, workers: Sequence[dict[str, float]]) -> Iterator[tuple[Any, list[str]]]:
    """``local_cluster(workers)`` after shipping ``tests/support`` and the test module by value (the workers
    cannot import them from the test's path) and leaving any Ray session this process had."""
    import ray
    from ray import cloudpickle

    import support

    cloudpickle.register_pickle_by_value(support)
    cloudpickle.register_pickle_by_value(sys.modules[module_name])
    if ray.is_initialized():
        ray.shutdown()
    with local_cluster(workers) as (cluster, nodes):
        yield cluster, nodes
