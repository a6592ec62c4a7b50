"""The web view in a real browser (Debian's headless Chromium, driven over the DevTools protocol): a running
task's DAG fills in and its steps change state live, an escalation is answered with a click, and two tasks run
by two other processes on one store show up live. Set TETRARCH_SAVE_SCREENSHOTS=1 to write docs/img/ui-task.png
from this run."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support import wire
from support.background import BackgroundCore
from support.cdp import Browser, require_chromium

from agents.llm import FunctionLLM, ScriptedLLM
from agents.store import Store
from agents.ui import UIServer
from prompts import count_tokens

pytestmark = pytest.mark.browser

@pytest.fixture(autouse=True, scope="module")
def _needs_chromium() -> None:
    require_chromium()  # at run time: the fast tier collects this module while CI still installs Chromium


ROOT = Path(__file__).resolve().parents[2]
PLAN = wire.plan(
    wire.step(1, "sleepy", {"seconds": 1.2, "label": "Paris"}, description="wait for the Paris feed"),
    wire.step(2, "sleepy", {"seconds": 1.8, "label": "Rome"}, description="wait for the Rome feed"),
    wire.step(3, "lookup", {"city": "$step_1_result"}, deps=[1], description="population of Paris"),
    wire.step(4, "lookup", {"city": "$step_2_result"}, deps=[2], description="population of Rome"),
    wire.step(5, "subtract", {"a": "$step_4_result", "b": "$step_3_result"}, deps=[3, 4], description="difference"),
    wire.step(6, "delete_record", {"record_id": "census-{$step_5_result}"}, deps=[5],
              description="drop the stale census record"))


async def _reply(request):
    if request.role == "router":
        await asyncio.sleep(0.5)
        return wire.route(reason="two look-ups, a difference and a write")
    return {"planner": PLAN, "reflector": wire.reflection(answer="Rome, by 0.7 million; record deleted")}[request.role]


def _step_states(page) -> dict[str, str]:
    return page.eval("Object.fromEntries([...document.querySelectorAll('#dag .step')]"
                     ".map(e => [e.dataset.step, e.dataset.state]))")


def _delays_ms(page) -> list[float]:
    """For each event written after the page's stream connected: its time in the store's log → the first frame
    showing it (both clocks are this machine's)."""
    data = json.loads(page.eval("JSON.stringify(window.__tetrarch)"))
    delays = []
    for applied in data["applied"]:
        if applied["ts"] < data["connected"]:
            continue  # replayed from the log when the page opened, not live
        shown = next((r["at"] for r in data["rendered"] if r["seq"] >= applied["seq"] and r["at"] >= applied["at"]), None)
        if shown is not None:
            delays.append((shown - applied["ts"]) * 1000)
    return delays


def test_a_running_task_fills_in_live_and_its_escalation_is_answered_with_a_click(tmp_path, record_property):
    llm = FunctionLLM(_reply, stream_chunk_size=24, chunk_delay_s=0.08)
    count_tokens("a long-running process has its tokenizer loaded")  # not part of what the page shows
    with BackgroundCore(tmp_path / "t.db", llm) as core, \
            UIServer(Store(tmp_path / "t.db"), responder=core.respond_async) as ui, Browser() as browser:
        listing = browser.page(ui.url + "/")
        listing.wait_for("document.getElementById('conn').textContent === 'live'")
        task_id = core.submit("How many more people live in Rome than in Paris? Then drop the stale census record.")
        listing.wait_for(f"!!document.querySelector('tr[data-task=\"{task_id}\"] a')")
        listing.click(f"tr[data-task=\"{task_id}\"] a")  # a user following the link from the list
        page = listing
        page.wait_for(f"location.pathname === '/tasks/{task_id}'")
        page.wait_for("!document.getElementById('escalation').hidden", timeout=60)
        assert page.eval("document.getElementById('esc-question').textContent").startswith("Confirm step 6")
        states = _step_states(page)
        assert states == {"1": "done", "2": "done", "3": "done", "4": "done", "5": "done", "6": "planned"}
        if os.environ.get("TETRARCH_SAVE_SCREENSHOTS"):
            page.eval("document.querySelector('#dag .step[data-step=\"5\"]').dispatchEvent(new MouseEvent('click'))")
            page.wait_for("!!document.querySelector('#detail h3')")
            page.screenshot(ROOT / "docs" / "img" / "ui-task.png")

        renders = json.loads(page.eval("JSON.stringify(window.__tetrarch.rendered.map(r => r.states))"))
        sizes = [len(r) for r in renders]
        assert any(0 < n < 6 for n in sizes), f"the DAG never showed a partial plan: {sizes}"  # filled in live
        seen = [r.get("2") for r in renders if r.get("2")]
        assert seen.index("running") < seen.index("done"), seen  # watched step 2 run, then finish
        assert any(r.get("1") == "running" and r.get("2") == "running" for r in renders)  # in parallel

        page.type("#esc-by", "alice")
        page.click("#esc-approve")
        page.wait_for("document.getElementById('status').textContent === 'accepted'", timeout=60)
        assert _step_states(page)["6"] == "done"
        assert "alice answered" in page.eval("document.getElementById('answers').textContent")
        answered = [e for e in Store(tmp_path / "t.db").events(task_id) if e.type == "escalated" and e.payload.answer]
        assert [(e.payload.answer, e.payload.answered_by) for e in answered] == [("approve", "alice")]

        delays = _delays_ms(page)
        assert delays, "no event arrived while the page was open"
        report = {"events": len(delays), "median_ms": round(statistics.median(delays), 1),
                  "max_ms": round(max(delays), 1)}
        record_property("event_to_page_delay", report)
        print(f"\nevent -> page delay: {report}")


TWO_PROCESSES = textwrap.dedent("""
    import sys
    from support import wire
    from support.traced import run_stored
    from agents.llm import FunctionLLM, ScriptedLLM

    city = sys.argv[2]
    plan = wire.plan(wire.step(1, "sleepy", {"seconds": 1.5, "label": city}),
                     wire.step(2, "lookup", {"city": "$step_1_result"}, deps=[1]))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan,
                                 "reflector": wire.reflection(answer=city)}[r.role])
    task_id, result, _ = run_stored(sys.argv[1], llm, f"population of {city}")
    print(task_id, result.status)
""")


def test_tasks_from_two_processes_on_one_store_show_up_live(tmp_path):
    db = tmp_path / "shared.db"
    Store(db).close()  # the page opens before either process writes
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    with UIServer(Store(db)) as ui, Browser() as browser:
        listing = browser.page(ui.url + "/")
        listing.wait_for("document.getElementById('conn').textContent === 'live'")
        procs = [subprocess.Popen([sys.executable, "-c", TWO_PROCESSES, str(db), city], env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for city in ("Paris", "Rome")]
        # Both rows appear while both tasks still run, each process writing its own.
        listing.wait_for("[...document.querySelectorAll('#tasks tbody tr')].filter("
                         "r => r.className === 'status-running').length === 2", timeout=60)
        outs = [p.communicate(timeout=120) for p in procs]
        assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
        ids = {out.split()[0] for out, _ in outs}
        listing.wait_for("[...document.querySelectorAll('#tasks tbody tr')].filter("
                         "r => r.className === 'status-accepted').length === 2", timeout=30)
        assert set(listing.eval("[...document.querySelectorAll('#tasks tbody tr')].map(r => r.dataset.task)")) == ids
        listing.type("#filter", "Rome")
        assert listing.wait_for("document.querySelectorAll('#tasks tbody tr').length === 1")
        for task_id in ids:
            page = browser.page(f"{ui.url}/tasks/{task_id}")
            page.wait_for("document.getElementById('status').textContent === 'accepted'")
            assert _step_states(page) == {"1": "done", "2": "done"}


def test_a_replan_shows_as_plan_versions_with_reviews_and_the_finished_task_replays(tmp_path):
    first = wire.plan(wire.step(1, "always_fails", {"x": 1}), wire.step(2, "lookup", {"city": "Rome"}, deps=[1]))
    second = wire.plan(wire.step(1, "lookup", {"city": "Rome"}))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [first, second],
                       "reflector": [wire.reflection("replan", scores=(2, 2, 2), answer=None,
                                                     feedback="look Rome up directly"),
                                     wire.reflection(answer="2.8 million")]})
    with BackgroundCore(tmp_path / "t.db", llm) as core, UIServer(Store(tmp_path / "t.db")) as ui, \
            Browser() as browser:
        task_id = core.submit("population of Rome")
        assert core.result(task_id).status == "accepted"
        page = browser.page(f"{ui.url}/tasks/{task_id}")
        page.wait_for("document.getElementById('status').textContent === 'accepted'")
        assert page.eval("[...document.querySelectorAll('#versions button')].map(b => b.textContent)") == ["v1", "v2"]
        assert _step_states(page) == {"1": "done"}
        page.click("#versions button[data-version='1']")
        page.wait_for("document.querySelector('#dag .step').dataset.version === '1'")
        assert _step_states(page) == {"1": "failed", "2": "skipped"}
        decisions = page.eval("[...document.querySelectorAll('#reviews tbody tr')].map(r => r.cells[6].textContent)")
        assert decisions == ["replan", "accept"]
        assert "look Rome up directly" in page.eval("document.getElementById('replans').textContent")
        page.click("#replay")
        page.wait_for("document.getElementById('status').textContent === 'running'")
        page.wait_for("document.getElementById('status').textContent === 'accepted'", timeout=30)
        assert _step_states(page) == {"1": "done"}


def test_with_a_token_the_link_opens_the_page_once_and_its_cookie_carries_the_live_stream(tmp_path):
    token = "browser-test-token-0123456789"
    with Store(tmp_path / "t.db") as store:
        store.create_task("t1", "a task behind a token", {})
    with UIServer(Store(tmp_path / "t.db"), token=token) as ui, Browser() as browser:
        blocked = browser.page(ui.url + "/")
        blocked.wait_for("document.body && document.body.innerText.startsWith('401')")
        page = browser.page(f"{ui.url}/?token={token}")
        page.wait_for("document.getElementById('conn') && document.getElementById('conn').textContent === 'live'")
        assert page.eval("location.search") == ""  # the token left the address bar
        assert page.wait_for("document.querySelectorAll('#tasks tbody tr').length") == 1


def test_the_cancel_button_stops_a_running_task_through_the_store(tmp_path, record_property):
    """The button ``tetrarch ui`` wires up: it cancels through the store (as "the live view") while another
    Supervisor runs the task; that one's lease watch stops its sleeping step, and the page shows the
    outcome."""
    from agents.cli.ui import _cancel_through_store

    plan = wire.plan(wire.step(1, "lookup", {"city": "Paris"}),
                     wire.step(2, "sleepy", {"seconds": 60, "label": "late"}, deps=[1]))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan,
                                 "reflector": wire.reflection(answer="late")}[r.role])
    with BackgroundCore(tmp_path / "t.db", llm) as core, \
            UIServer(Store(tmp_path / "t.db"),
                     canceller=functools.partial(_cancel_through_store, core.config)) as ui, \
            Browser() as browser:
        task_id = core.submit("population of Paris, then the late feed")
        page = browser.page(f"{ui.url}/tasks/{task_id}")
        page.wait_for("(document.querySelector('#dag .step[data-step=\"2\"]') || {dataset: {}}).dataset.state"
                      " === 'running'", timeout=30)
        assert not page.eval("document.getElementById('cancel').hidden")
        page.click("#cancel")
        clicked = page.eval("Date.now() / 1000")
        page.wait_for("document.getElementById('status').textContent === 'cancelled'", timeout=10)
        shown = page.eval("Date.now() / 1000")
        record_property("click_to_cancelled_shown_s", round(shown - clicked, 3))
        print(f"\nclick -> status cancelled on the page: {shown - clicked:.3f}s")
        page.wait_for("document.getElementById('cancel-note').textContent"
                      ".includes('cancelled by the live view')")
        assert page.eval("document.getElementById('cancel').hidden")
        assert _step_states(page) == {"1": "done", "2": "skipped"}  # the stopped step: drawn as skipped
        result = core.result(task_id)
        assert (result.status, result.cancelled_by) == ("cancelled", "the live view")
        assert [s.status for s in result.steps] == ["completed", "cancelled"]
        for _ in range(100):  # the core's lease watch stops its run within half a second
            if not core._run(core.core.running_tasks()):
                break
            time.sleep(0.05)
        assert core._run(core.core.running_tasks()) == []
