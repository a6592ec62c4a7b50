"use strict";
// The task list: one server-sent event per change of any row; filtering is local. Each task keeps one row element
// whose cells are updated in place: rebuilding the rows on every update (several a second while tasks stream)
// made a click whose press and release fell on two different builds of a row do nothing.
(() => {
  let rows = [];
  const body = document.querySelector("#tasks tbody");
  const filter = document.getElementById("filter");
  const status = document.getElementById("status");
  const count = document.getElementById("count");
  const built = new Map();  // task_id -> its <tr>

  function matches(r) {
    const q = filter.value.trim().toLowerCase();
    return (!status.value || r.status === status.value)
      && (!q || r.task.toLowerCase().includes(q) || r.task_id.includes(q));
  }

  function set(el, text) {
    if (el.textContent !== text) el.textContent = text;
  }

  function rowOf(r) {
    let tr = built.get(r.task_id);
    if (!tr) {
      tr = T.el("tr", { "data-task": r.task_id },
        T.el("td", {}, T.el("a", { href: "/tasks/" + encodeURIComponent(r.task_id) })),
        T.el("td", {}, T.el("span", {})), T.el("td", {}), T.el("td", {}),
        T.el("td", { class: "n" }), T.el("td", { class: "n" }), T.el("td", { class: "n cost" }),
        T.el("td", { class: "mono" }, r.task_id));
      built.set(r.task_id, tr);
    }
    const now = Date.now() / 1000;
    const cells = tr.children;
    tr.className = "status-" + r.status;
    set(cells[0].firstChild, r.task.slice(0, 140));
    cells[1].firstChild.className = "badge status-" + r.status;
    set(cells[1].firstChild, r.status);
    set(cells[2], T.secs(now - r.created));
    set(cells[3], T.secs(r.wall_s));
    set(cells[4], String(r.llm_calls));
    set(cells[5], T.num(r.input_tokens) + " → " + T.num(r.output_tokens));
    set(cells[6], r.cost_usd === null || r.cost_usd === undefined ? "—" : "$" + r.cost_usd.toFixed(4));
    return tr;
  }

  function render() {
    const shown = rows.filter(matches).map(rowOf);
    const same = shown.length === body.children.length && shown.every((tr, i) => body.children[i] === tr);
    if (!same) body.replaceChildren(...shown);
    count.textContent = shown.length + " of " + rows.length + " tasks";
  }

  filter.addEventListener("input", render);
  status.addEventListener("change", render);
  T.stream("/api/tasks/stream", { tasks: (data) => { rows = data; render(); } }, document.getElementById("conn"));
  setInterval(render, 1000);  // ages move on
})();
