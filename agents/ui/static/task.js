"use strict";
// One task, live: the event log (stored events first, then each new one) folded into a view state, drawn as a
// DAG per plan version, a growing timeline, the route, the reviews and an escalation form.
(() => {
  const taskId = decodeURIComponent(location.pathname.split("/").pop());
  const $ = (id) => document.getElementById(id);
  const FAILED_AS_SKIPPED = new Set(["cancelled", "dependency"]);
  // For tests and for measuring: when each event was applied to the page (browser clock, seconds).
  const probe = window.__tetrarch = { applied: [], rendered: [] };
  const remember = (list, item) => { list.push(item); if (list.length > 5000) list.shift(); };

  function fresh() {
    return { t0: null, seq: 0, plans: {}, steps: {}, latest: 0, route: null, reviews: [], replans: [],
             escalation: null, waiting: null, finished: null, llm: {}, usage: { calls: 0, inp: 0, out: 0 },
             kept: new Set(), answers: [], streaming: "" };
  }
  let S = fresh(), log = [], llmLog = [], shown = null, selected = null, replaying = false;
  let canRespond = false, canCancel = false;
  const key = (pv, sid) => pv + ":" + sid;

  function apply(ev) {
    const p = ev.payload;
    S.seq = ev.seq;
    if (S.t0 === null) S.t0 = ev.ts;
    // Anything after a task_finished is a continued run (an answer, a resume): it runs until the next one.
    if (ev.type !== "task_finished") { S.waiting = null; S.finished = null; }
    switch (ev.type) {
      case "task_submitted": S.finished = null; break;
      case "routed": S.route = p; break;
      case "plan_step": {
        (S.plans[p.plan_version] ||= []).push(p.step);
        const before = S.kept.has(p.step.step_id) && S.steps[key(p.plan_version - 1, p.step.step_id)];
        // A step a replan kept is not run again: it stays done, with the attempts of the plan it came from.
        S.steps[key(p.plan_version, p.step.step_id)] = { step: p.step, pv: p.plan_version, state: before ? before.state : "planned",
                                                         attempts: before ? before.attempts : [] };
        S.latest = Math.max(S.latest, p.plan_version);
        break;
      }
      case "step_started": {
        const s = S.steps[key(p.plan_version, p.step_id)];
        if (s) { s.state = "running"; s.attempts.push({ n: p.attempt, start: ev.ts, end: null, status: "running", executor: p.executor }); }
        break;
      }
      case "step_finished": case "step_failed": {
        const s = S.steps[key(p.plan_version, p.step_id)];
        if (!s) break;
        let a = s.attempts.find((x) => x.n === p.attempt && x.end === null);
        if (!a) { a = { n: p.attempt, start: p.started_at ?? ev.ts }; s.attempts.push(a); }
        a.start = p.started_at ?? a.start; a.end = p.finished_at ?? ev.ts; a.executor = p.executor || a.executor;
        if (ev.type === "step_finished") { a.status = "done"; a.output = p.output_preview; s.state = "done"; }
        else {
          a.status = "failed"; a.error = p.error; a.kind = p.error_kind;
          s.state = p.will_retry ? "retried" : FAILED_AS_SKIPPED.has(p.error_kind) ? "skipped" : "failed";
        }
        break;
      }
      case "reflected": S.reviews.push({ ...p, pv: S.latest }); break;
      case "replanned":
        // The plan being replaced will not run its remaining steps.
        for (const s of Object.values(S.steps)) if (s.state === "planned" && s.pv < p.plan_version) s.state = "skipped";
        S.replans.push(p); S.kept = new Set(p.kept_steps); S.latest = Math.max(S.latest, p.plan_version);
        break;
      case "escalated":
        if (p.answer != null) S.answers.push(p); else S.escalation = { ...p, seq: ev.seq };
        break;
      // The answer as the reviewer writes it; a reset voids what came before (a check refused that accept).
      case "answer_delta": S.streaming += p.text; break;
      case "answer_reset": S.streaming = ""; break;
      case "task_finished":
        S.finished = { ...p, ts: ev.ts }; S.streaming = "";
        S.waiting = p.status === "escalated" ? S.escalation : null;
        // Steps that never ran are skipped, unless the task only waits for a human and may still run them.
        if (p.status !== "escalated")
          for (const s of Object.values(S.steps)) if (s.state === "planned" && s.pv === S.latest) s.state = "skipped";
        break;
    }
    remember(probe.applied, { seq: ev.seq, type: ev.type, ts: ev.ts, at: Date.now() / 1000 });
  }

  function applyLLM(c) {
    if (S.llm[c.index]) return;
    S.llm[c.index] = c;
    S.usage.calls += 1; S.usage.inp += c.input_tokens; S.usage.out += c.output_tokens;
  }

  // ---------------------------------------------------------------- drawing
  function levels(steps) {
    const byId = Object.fromEntries(steps.map((s) => [s.step_id, s]));
    const memo = {};
    const level = (id, seen = new Set()) => {
      if (memo[id] !== undefined) return memo[id];
      if (seen.has(id) || !byId[id]) return 0;
      seen.add(id);
      const deps = byId[id].depends_on.filter((d) => byId[d]);
      return (memo[id] = deps.length ? 1 + Math.max(...deps.map((d) => level(d, seen))) : 0);
    };
    return Object.fromEntries(steps.map((s) => [s.step_id, level(s.step_id)]));
  }

  function drawDag() {
    const svg = $("dag");
    const pv = shown ?? S.latest;
    const steps = S.plans[pv] || [];
    const lv = levels(steps), rows = {}, pos = {};
    const W = 190, H = 64, NW = 170, NH = 48;
    for (const s of steps) { const l = lv[s.step_id]; rows[l] = (rows[l] || 0) + 1; pos[s.step_id] = [l * W + 10, (rows[l] - 1) * H + 10]; }
    const width = Math.max(1, ...Object.keys(rows).map((l) => (+l + 1) * W)) + 20;
    const height = Math.max(1, ...Object.values(rows)) * H + 20;
    svg.setAttribute("width", width); svg.setAttribute("height", height);
    const kids = [];
    for (const s of steps) for (const d of s.depends_on) if (pos[d]) {
      const [x1, y1] = pos[d], [x2, y2] = pos[s.step_id];
      kids.push(T.svg("line", { x1: x1 + NW, y1: y1 + NH / 2, x2, y2: y2 + NH / 2, class: "edge" }));
    }
    for (const s of steps) {
      const st = S.steps[key(pv, s.step_id)], [x, y] = pos[s.step_id];
      const g = T.svg("g", { class: "step state-" + st.state + (selected === key(pv, s.step_id) ? " selected" : ""),
                             "data-step": s.step_id, "data-state": st.state, "data-version": pv, transform: `translate(${x},${y})` });
      g.append(T.svg("rect", { width: NW, height: NH, rx: 6 }));
      g.append(T.svg("text", { x: 8, y: 18, class: "title" }, `#${s.step_id} ${s.tool_name ?? "reasoning"}`));
      const last = st.attempts[st.attempts.length - 1];
      const sub = st.state + (st.attempts.length > 1 ? ` · attempt ${st.attempts.length}` : "") +
                  (last && last.end ? ` · ${T.secs(last.end - last.start)}` : "");
      g.append(T.svg("text", { x: 8, y: 36, class: "sub" }, sub));
      g.addEventListener("click", () => { selected = key(pv, s.step_id); render(); });
      kids.push(g);
    }
    svg.replaceChildren(...kids);
    const versions = Object.keys(S.plans).map(Number).sort((a, b) => a - b);
    $("versions").replaceChildren(...versions.map((v) => T.el("button", {
      class: v === pv ? "on" : "", "data-version": v,
      onclick: () => { shown = v === S.latest ? null : v; render(); } }, "v" + v)));
  }

  function drawDetail() {
    const box = $("detail");
    const st = selected && S.steps[selected];
    if (!st) return;
    const s = st.step;
    const kids = [T.el("h3", {}, `Step ${s.step_id} (plan v${st.pv}): ${s.description}`),
      T.el("div", {}, T.el("b", {}, "call "), T.el("code", {}, `${s.tool_name ?? "reasoning (one LLM call)"}`)),
      T.el("div", {}, T.el("b", {}, "arguments")), T.el("pre", { class: "fenced" }, JSON.stringify(s.tool_input, null, 2)),
      T.el("div", {}, T.el("b", {}, "depends on "), s.depends_on.join(", ") || "nothing")];
    for (const a of st.attempts) {
      const when = a.end ? `${T.secs(a.start - S.t0)} → ${T.secs(a.end - S.t0)} (${T.secs(a.end - a.start)})` : `since ${T.secs(a.start - S.t0)}`;
      kids.push(T.el("div", { class: "attempt" }, T.el("b", {}, `attempt ${a.n}: ${a.status}`), ` ${when} ${a.executor ? "on " + a.executor : ""}`));
      if (a.output !== undefined) kids.push(T.el("pre", { class: "fenced" }, a.output));
      if (a.error) kids.push(T.el("pre", { class: "fenced error" }, `${a.kind}: ${a.error}`));
    }
    if (st.state === "done") kids.push(T.el("button", { onclick: () => fullOutput(st, box) }, "full output"));
    box.className = "detail"; box.replaceChildren(...kids);
  }

  async function fullOutput(st, box) {
    const r = await fetch(`/api/tasks/${encodeURIComponent(taskId)}/outputs/${st.pv}/${st.step.step_id}`);
    const data = await r.json();
    box.append(T.el("pre", { class: "fenced" }, r.ok ? JSON.stringify(data.output, null, 2) : data.error));
  }

  function drawGantt() {
    const svg = $("gantt");
    if (S.t0 === null) return;
    const now = replaying ? S.lastTs : Date.now() / 1000;
    const end = S.finished ? S.finished.ts : Math.max(now, S.t0 + 1);
    const bars = [];
    for (const c of Object.values(S.llm)) bars.push({ lane: "LLM " + c.role, start: c.start, end: c.end, cls: "llm" + (c.failed ? " failed" : ""), label: `${c.input_tokens}→${c.output_tokens} tok` });
    for (const st of Object.values(S.steps)) for (const a of st.attempts)
      bars.push({ lane: `v${st.pv} #${st.step.step_id} ${st.step.tool_name ?? "reasoning"}`, start: a.start, end: a.end ?? end, cls: "state-" + (a.status === "failed" ? (st.state === "skipped" ? "skipped" : "failed") : a.status), label: "" });
    const lanes = [...new Set(bars.sort((a, b) => a.start - b.start).map((b) => b.lane))];
    const LW = 200, W = 720, RH = 20, span = Math.max(end - S.t0, 0.001);
    svg.setAttribute("width", LW + W + 20); svg.setAttribute("height", lanes.length * RH + 30);
    const x = (t) => LW + ((t - S.t0) / span) * W;
    const kids = lanes.map((l, i) => T.svg("text", { x: 4, y: i * RH + 14, class: "lane" }, l));
    for (const b of bars) {
      const i = lanes.indexOf(b.lane);
      kids.push(T.svg("rect", { x: x(b.start), y: i * RH + 3, width: Math.max(2, x(b.end) - x(b.start)), height: RH - 6, class: "bar " + b.cls }));
    }
    kids.push(T.svg("text", { x: LW, y: lanes.length * RH + 20, class: "lane" }, `0 s … ${T.secs(span)}`));
    svg.replaceChildren(...kids);
  }

  function drawFacts() {
    const f = S.finished;
    $("status").textContent = f ? f.status : S.seq ? "running" : "…";
    $("status").className = "badge status-" + (f ? f.status : "running");
    $("route").textContent = S.route ? `${S.route.route} (confidence ${S.route.confidence.toFixed(2)}) ${S.route.reason}` : "not routed yet";
    $("answer").textContent = !f ? (S.streaming ? S.streaming + " …" : "—") : f.status === "escalated" ? `waiting for a human (${f.stopped_reason})`
      : (f.answer ?? f.error ?? f.stopped_reason);
    $("spent").textContent = `${S.usage.calls} LLM calls, ${T.num(S.usage.inp)} → ${T.num(S.usage.out)} tokens` +
      (f && S.t0 !== null ? `, ${T.secs(f.ts - S.t0)} wall` : "");
    $("reviews").tBodies[0].replaceChildren(...S.reviews.map((r) => T.el("tr", {},
      T.el("td", {}, "v" + r.pv), T.el("td", {}, r.reflection.scores.completeness), T.el("td", {}, r.reflection.scores.correctness),
      T.el("td", {}, r.reflection.scores.format), T.el("td", {}, r.reflection.overall_pass ? "yes" : "no"),
      T.el("td", {}, r.reflection.action), T.el("td", {}, r.decision), T.el("td", {}, r.reflection.feedback || r.reason))));
    $("replans").replaceChildren(...S.replans.map((r) => T.el("li", {}, `v${r.plan_version}: ${r.feedback}` + (r.kept_steps.length ? ` (kept steps ${r.kept_steps.join(", ")})` : ""))));
    $("answers").replaceChildren(...S.answers.map((a) => T.el("li", { class: "answered" }, `${a.answered_by} answered "${a.answer}" to: ${a.question}`)));
    const w = S.waiting;
    $("escalation").hidden = !w || replaying;
    if (w) {
      $("esc-question").textContent = `${w.kind === "confirmation" ? "Confirm step " + w.step_id + ": " : ""}${w.question}`;
      $("esc-reason").textContent = w.reason;
      for (const id of ["esc-approve", "esc-send", "esc-text"]) $(id).disabled = !canRespond;
      if (!canRespond) $("esc-note").textContent = "This page is read-only (started without an LLM): answer with `tetrarch respond`.";
    }
    $("replay").hidden = !f || f.status === "escalated" || replaying;
    $("cancel").hidden = !canCancel || !!f || !S.seq || replaying;
  }

  let queued = false;
  function render() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      drawFacts(); drawDag(); drawDetail(); drawGantt();
      const states = {};
      for (const st of Object.values(S.steps)) if (st.pv === S.latest) states[st.step.step_id] = st.state;
      remember(probe.rendered, { seq: S.seq, at: Date.now() / 1000, states });
    });
  }

  // ---------------------------------------------------------------- answering an escalation
  async function answer(text) {
    $("esc-note").textContent = "sending…";
    const r = await fetch(`/api/tasks/${encodeURIComponent(taskId)}/respond`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ text, by: $("esc-by").value }) });
    const data = await r.json();
    $("esc-note").textContent = r.ok ? "answered; the task continues" : data.error;
  }
  $("esc-approve").addEventListener("click", () => answer("approve"));
  $("esc-send").addEventListener("click", () => { const t = $("esc-text").value.trim(); if (t) answer(t); });

  // ---------------------------------------------------------------- cancelling a running task
  $("cancel").addEventListener("click", async () => {
    $("cancel").disabled = true;
    $("cancel-note").textContent = "cancelling…";
    const r = await fetch(`/api/tasks/${encodeURIComponent(taskId)}/cancel`, {
      method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const data = await r.json();
    $("cancel-note").textContent = r.ok ? data.message : data.error;
    $("cancel").disabled = false;
  });

  // ---------------------------------------------------------------- replay of a finished task
  $("replay").addEventListener("click", async () => {
    replaying = true;
    const events = log.slice(), calls = llmLog.slice();
    S = fresh(); shown = null; selected = null; render();
    for (let i = 0; i < events.length; i++) {
      const gap = i ? Math.min(events[i].ts - events[i - 1].ts, 1.0) : 0;
      await new Promise((ok) => setTimeout(ok, gap * 1000));
      apply(events[i]); S.lastTs = events[i].ts;
      for (const c of calls) if (c.end <= events[i].ts) applyLLM(c);
      render();
    }
    for (const c of calls) applyLLM(c);
    replaying = false; render();
  });

  // ---------------------------------------------------------------- live feed
  $("task-id").textContent = taskId;
  T.stream(`/api/tasks/${encodeURIComponent(taskId)}/stream`, {
    task: (t) => {
      probe.connected ??= Date.now() / 1000; $("task-text").textContent = t.task;
      document.title = "tetrarch · " + t.task.slice(0, 60); canRespond = t.responder; canCancel = t.canceller;
      render();
    },
    event: (ev) => { if (ev.seq <= (log.length ? log[log.length - 1].seq : 0)) return; log.push(ev); if (!replaying) { apply(ev); render(); } },
    llm: (c) => { if (llmLog.some((x) => x.index === c.index)) return; llmLog.push(c); if (!replaying) { applyLLM(c); render(); } },
  }, $("conn"));
  setInterval(() => { if (!S.finished && S.t0 !== null && !replaying) drawGantt(); }, 250);
})();
