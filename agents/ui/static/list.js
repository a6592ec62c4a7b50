"use strict";
// The task list: one server-sent event per change of any row; filtering is local.
(() => {
  let rows = [];
  const body = document.querySelector("#tasks tbody");
  const filter = document.getElementById("filter");
  const status = document.getElementById("status");
  const count = document.getElementById("count");

  function matches(r) {
    const q = filter.value.trim().toLowerCase();
    return (!status.value || r.status === status.value)
      && (!q || r.task.toLowerCase().includes(q) || r.task_id.includes(q));
  }

  function render() {
    const now = Date.now() / 1000;
    const shown = rows.filter(matches);
    body.replaceChildren(...shown.map((r) => T.el("tr", { "data-task": r.task_id, class: "status-" + r.status },
      T.el("td", {}, T.el("a", { href: "/tasks/" + encodeURIComponent(r.task_id) }, r.task.slice(0, 140))),
      T.el("td", {}, T.el("span", { class: "badge status-" + r.status }, r.status)),
      T.el("td", {}, T.secs(now - r.created)),
      T.el("td", {}, T.secs(r.wall_s)),
      T.el("td", { class: "n" }, r.llm_calls),
      T.el("td", { class: "n" }, T.num(r.input_tokens) + " → " + T.num(r.output_tokens)),
      T.el("td", { class: "n cost" }, r.cost_usd === null || r.cost_usd === undefined ? "—" : "$" + r.cost_usd.toFixed(4)),
      T.el("td", { class: "mono" }, r.task_id))));
    count.textContent = shown.length + " of " + rows.length + " tasks";
  }

  filter.addEventListener("input", render);
  status.addEventListener("change", render);
  T.stream("/api/tasks/stream", { tasks: (data) => { rows = data; render(); } }, document.getElementById("conn"));
  setInterval(render, 1000);  // ages move on
})();
