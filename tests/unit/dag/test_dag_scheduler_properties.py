"""Property tests: random DAGs (up to 500 steps, streamed in random order with forward references), random
completion orders, failures and retries, checked against a brute-force model after every event."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dag import CycleError, Scheduler, StaleAttemptError, StepState, find_cycle
from support.tiers import examples

P, R, C, F, S = (StepState.PENDING, StepState.RUNNING, StepState.COMPLETED, StepState.FAILED,
                 StepState.SKIPPED)
_SETTINGS = settings(max_examples=examples(60), deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def random_dag(rng: random.Random, n: int) -> dict[int, list[int]]:
    """Edges only to lower ids (so it is acyclic); some steps have none, some up to four."""
    return {sid: sorted(rng.sample(range(1, sid), min(sid - 1, rng.choice((0, 1, 1, 2, 2, 3, 4)))))
            for sid in range(1, n + 1)}


def downstream(deps: dict[int, list[int]], roots: set[int]) -> set[int]:
    """Transitive dependents of ``roots`` (not including the roots)."""
    found: set[int] = set()
    for sid in sorted(deps):  # ids increase along every edge, so one pass in id order suffices
        if any(d in roots or d in found for d in deps[sid]):
            found.add(sid)
    return found


class Sim:
    """Drives a Scheduler like the Supervisor does, and checks it against the model after every event."""

    def __init__(self, rng: random.Random, deps: dict[int, list[int]], fail_p: float, retries: int) -> None:
        self.rng, self.deps, self.fail_p, self.retries = rng, deps, fail_p, retries
        self.s = Scheduler()
        self.to_add = list(deps)
        rng.shuffle(self.to_add)  # the plan streams in a random order: plenty of forward references
        self.added: set[int] = set()
        self.releases: dict[int, list[int]] = {}  # step -> attempts started, in order
        self.running: dict[int, int] = {}  # step -> attempt, as the caller sees it
        self.stale: list[tuple[int, int]] = []
        self.events = 0

    def step(self) -> None:
        actions = []
        if self.to_add:
            actions.append(self.add)
        elif not self.s.is_sealed:
            actions.append(self.s.seal)
        if self.s.ready():
            actions += [self.start] * 3  # start more than finish, so several attempts run at once
        if self.running:
            actions += [self.finish] * 2
        if self.retries and self.rng.random() < 0.2 and any(self.s.state(i) in (F, C) for i in self.added):
            actions.append(self.retry)
        if self.stale:
            actions.append(self.deliver_stale)
        self.rng.choice(actions)()
        self.events += 1
        self.check(full=len(self.deps) <= 80 or self.events % 13 == 0)

    def add(self) -> None:
        sid = self.to_add.pop()
        self.s.add_step(sid, self.deps[sid])
        self.added.add(sid)

    def start(self) -> None:
        sid = self.rng.choice(self.s.ready())
        assert all(self.s.state(d) is C for d in self.deps[sid]), "started before its dependencies completed"
        attempt = self.s.start(sid)
        seen = self.releases.setdefault(sid, [])
        assert attempt == len(seen) + 1, f"step {sid} released twice for one attempt"
        seen.append(attempt)
        self.running[sid] = attempt

    def finish(self) -> None:
        sid = self.rng.choice(sorted(self.running))
        attempt = self.running.pop(sid)
        if self.rng.random() < self.fail_p:
            self.s.fail(sid, f"failed {sid}", attempt=attempt)
        else:
            self.s.complete(sid, (sid, attempt), attempt=attempt)

    def retry(self) -> None:
        self.retries -= 1
        candidates = sorted(i for i in self.added if self.s.state(i) in (F, C))
        # Half the time, retry a step with a running dependent: the case that leaves stale attempts behind.
        busy = [i for i in candidates if any(d in self.running for d in self.s.dependents(i))]
        sid = self.rng.choice(busy if busy and self.rng.random() < 0.5 else candidates)
        cancelled = self.s.retry(sid)
        assert set(cancelled) <= set(self.running), "retry reported a step the caller never saw running"
        assert set(cancelled) == {i for i in self.running if i in downstream(self.deps, {sid})}
        for i in cancelled:
            self.stale.append((i, self.running.pop(i)))
        assert self.s.state(sid) is P
        assert all(self.s.state(i) in (P, S) for i in downstream(self.deps, {sid}) & self.added)

    def deliver_stale(self) -> None:
        sid, attempt = self.stale.pop(self.rng.randrange(len(self.stale)))
        with pytest.raises(StaleAttemptError):
            self.s.complete(sid, "late", attempt=attempt)

    def check(self, full: bool) -> None:
        s = self.s
        assert s.running() == sorted(self.running)
        if not full:
            return
        states = {i: s.state(i) for i in self.added}
        expected_ready = sorted(i for i in self.added if states[i] is P
                                and all(states.get(d) is C for d in self.deps[i]))
        assert s.ready() == expected_ready
        dead = {i for i, st_ in states.items() if st_ in (F, S)}
        known = {i: self.deps[i] for i in self.added}  # a step not streamed in yet cannot pass a skip on
        assert {i for i in states if states[i] is S} == downstream(known, {i for i in dead if states[i] is F})
        assert sum(s.counts().values()) == len(self.added)
        assert s.outputs() == {i: (i, self.releases[i][-1]) for i in self.added if states[i] is C}


@_SETTINGS
@given(n=st.integers(1, 500), seed=st.integers(0, 2**32), fail_p=st.sampled_from([0.0, 0.05, 0.3]),
       retries=st.integers(0, 30))
def test_random_plans_run_to_completion_with_every_invariant(n, seed, fail_p, retries):
    rng = random.Random(seed)
    sim = Sim(rng, random_dag(rng, n), fail_p, retries)
    limit = 20 * n + 10 * retries * n + 100
    while not sim.s.is_done():
        sim.step()
        assert sim.events < limit, "the scheduler never finished"
    sim.check(full=True)
    states = {i: sim.s.state(i) for i in sim.deps}
    failed = {i for i, st_ in states.items() if st_ is F}
    assert {i for i, st_ in states.items() if st_ is S} == downstream(sim.deps, failed)
    assert {i for i, st_ in states.items() if st_ is C} == set(sim.deps) - failed - downstream(sim.deps, failed)
    assert all(sim.releases[i] == list(range(1, len(sim.releases[i]) + 1)) for i in sim.releases)
    if fail_p == 0.0:
        assert all(st_ is C for st_ in states.values())


@_SETTINGS
@given(n=st.integers(2, 120), seed=st.integers(0, 2**32), use_preload=st.booleans())
def test_a_step_that_closes_a_cycle_is_rejected_and_changes_nothing(n, seed, use_preload):
    rng = random.Random(seed)
    deps = random_dag(rng, n)
    deps[n] = sorted(set(deps[n]) | {n - 1})  # guarantee at least one edge, so some step has a dependent
    held = rng.choice([i for i in deps if downstream(deps, {i})])
    s = Scheduler()
    order = [i for i in deps if i != held]
    rng.shuffle(order)
    for i in order:
        s.add_step(i, deps[i])
    before = s.snapshot()
    closing = rng.choice(sorted(downstream(deps, {held})))
    bad_deps = deps[held] + [closing]
    with pytest.raises(CycleError) as info:
        if use_preload:
            s.preload(held, bad_deps, "out")
        else:
            s.add_step(held, bad_deps)
    assert s.snapshot() == before and held not in s
    cycle = info.value.cycle
    with_bad = {**deps, held: bad_deps}
    assert cycle[0] == held and len(set(cycle)) == len(cycle)
    for prev, nxt in zip(cycle, cycle[1:] + cycle[:1]):
        assert prev in with_bad[nxt], f"{nxt} does not depend on {prev}: {cycle} is not a cycle"
    assert find_cycle(with_bad) is not None and find_cycle(deps) is None
    s.add_step(held, deps[held])  # the scheduler is still usable and accepts the correct step
    s.seal()
    assert s.ready() == sorted(i for i in deps if not deps[i])
