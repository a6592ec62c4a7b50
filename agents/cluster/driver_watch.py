"""Is this job's driver still alive? Asked before a write step's side effect starts, and watched by the Supervisor.

When a driver dies (SIGKILL of its process group, a lost laptop), Ray kills the job's actors one by one over
~1.5 s. Until then they run: a Supervisor that finished step 3 would dispatch step 4, an executor would start its
write, and the resume from a new process would run step 4 again once its claim's grace ran out — a second write
of a step that had not started when the driver died. So a runner that lost its driver starts nothing:

- the journal asks the Global Control Store (one RPC, ~4 ms) before granting a write's claim, and when the job is
  dead (or the GCS does not answer: a private local Ray dies with its driver) it revokes the task's lease and
  refuses the claim — the write never starts, and the Supervisor's next write fails with ``LeaseLostError``,
  which stops the task's runner without writing anything more;
- the Supervisor polls the same fact (``DriverWatch``) and revokes every lease it holds when the driver is gone,
  so read steps and reflection stop as well.

The resume takes the lease over as always; nothing of the old runner starts after the revocation.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import ray

__all__ = ["DRIVER_LOST", "DriverWatch", "driver_alive"]

log = logging.getLogger("tetrarch.driver_watch")

DRIVER_LOST = "the driver of this run is gone (resume the task from a new driver)"

_CHECK_TIMEOUT_S = 2.0


def driver_alive(timeout_s: float = _CHECK_TIMEOUT_S, attempts: int = 2) -> bool:
    """Whether the current job's driver is alive, as the GCS says. False when the GCS says the job is dead, or
    does not answer ``attempts`` times in a row (one slow answer on a busy machine must not stop every task)."""
    job_id = ray.get_runtime_context().get_job_id()
    for attempt in range(attempts):
        try:
            jobs = ray._private.worker.global_worker.gcs_client.get_all_job_info(
                job_or_submission_id=job_id, skip_submission_job_info_field=True, skip_is_running_tasks_field=True,
                timeout=timeout_s)
        except Exception as exc:  # noqa: BLE001 - an unreachable GCS means this Ray is going away with its driver
            log.warning("cannot ask the GCS whether the driver lives (attempt %d: %s: %s)", attempt + 1,
                        type(exc).__name__, exc)
            continue
        return bool(jobs) and not all(info.is_dead for info in jobs.values())
    return False


class DriverWatch:
    """A daemon thread that calls ``on_lost`` once, when ``driver_alive`` turns False."""

    def __init__(self, on_lost: Callable[[], None], *, interval_s: float = 0.5,
                 alive: Callable[[], bool] = driver_alive) -> None:
        self._on_lost, self._interval, self._alive = on_lost, interval_s, alive
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tetrarch-driver-watch", daemon=True)

    def start(self) -> DriverWatch:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            if not self._alive():
                log.warning("the driver is gone: this Supervisor starts no new step")
                self._on_lost()
                return
