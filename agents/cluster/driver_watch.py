"""Is this job's driver still alive? Asked before a write step's side effect starts, and watched by the Supervisor.

When a driver dies (SIGKILL of its process group, a lost laptop), Ray kills the job's actors one by one over
~1.5 s. Until then they run: a Supervisor that finished step 3 would dispatch step 4, an executor would start its
write, and the resume from a new process would run step 4 again once its claim's grace ran out — a second write
of a step that had not started when the driver died. So a runner that lost its driver starts nothing:

- the journal asks the Global Control Store (one RPC, ~4 ms) before granting a write's claim, and when the job is
  dead (or the GCS has not answered for two minutes: a private local Ray dies with its driver) it revokes the task's lease and
  refuses the claim — the write never starts, and the Supervisor's next write fails with ``LeaseLostError``,
  which stops the task's runner without writing anything more;
- the Supervisor polls the same fact (``DriverWatch``) and revokes every lease it holds when the driver is gone,
  so read steps and reflection stop as well.

The resume takes the lease over as always; nothing of the old runner starts after the revocation.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import ray

__all__ = ["DRIVER_LOST", "DriverWatch", "driver_alive"]

log = logging.getLogger("tetrarch.driver_watch")

DRIVER_LOST = "the driver of this run is gone (resume the task from a new driver)"

_CHECK_TIMEOUT_S = 2.0
_PATIENCE_S = 120.0
_MIN_QUESTIONS = 5
"""Silence counts only after this long *and* this many unanswered questions. A loaded two-core machine (a model
server decoding, a test suite beside it) made two 2 s questions in a row miss their deadline, and then starved the
asking thread for 20 s so that one question took that long: both times the Supervisor revoked every lease of a live
driver, whose tasks then waited for results nobody would write. A GCS gone with its driver never answers, and Ray
kills the dead driver's workers within seconds, long before the patience runs out; a claim still waiting for its
answer never starts its write."""


def driver_alive(timeout_s: float = _CHECK_TIMEOUT_S, patience_s: float = _PATIENCE_S, *,
                 ask: Callable[[float], bool | None] | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Whether the current job's driver is alive, as the GCS says. False when the GCS says the job is dead, or
    has not answered for ``patience_s`` and five questions of ``timeout_s`` each: a slow answer, or a thread the
    busy machine did not run, must not stop every task. ``ask``, ``clock``, ``sleep`` (tests): one question (None when it
    went unanswered), the time, the pause between questions."""
    question = ask or _ask_gcs
    started, attempt = clock(), 0
    while True:
        attempt += 1
        answer = question(timeout_s)
        if answer is not None:
            return answer
        if clock() - started >= patience_s and attempt >= _MIN_QUESTIONS:
            log.warning("the GCS has not answered for %.0f s (%d questions): taking the driver as gone",
                        patience_s, attempt)
            return False
        sleep(min(0.5, timeout_s))


def _ask_gcs(timeout_s: float) -> bool | None:
    job_id = ray.get_runtime_context().get_job_id()
    try:
        jobs = ray._private.worker.global_worker.gcs_client.get_all_job_info(
            job_or_submission_id=job_id, skip_submission_job_info_field=True, skip_is_running_tasks_field=True,
            timeout=timeout_s)
    except Exception as exc:  # noqa: BLE001 - unanswered: asked again until the patience runs out
        log.warning("cannot ask the GCS whether the driver lives (%s: %s)", type(exc).__name__, exc)
        return None
    return bool(jobs) and not all(info.is_dead for info in jobs.values())


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
