"use strict";
// Helpers shared by the two pages. Everything shown is set with textContent: task text, arguments and tool
// output are data, never markup.
const T = {
  el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const kid of kids) e.append(kid instanceof Node ? kid : document.createTextNode(String(kid ?? "")));
    return e;
  },
  svg(tag, attrs, text) {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  },
  secs(s) {
    if (s == null) return "—";
    if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s";
    if (s < 3600) return Math.floor(s / 60) + " min " + Math.floor(s % 60) + " s";
    return (s / 3600).toFixed(1) + " h";
  },
  num(n) { return (n ?? 0).toLocaleString("en"); },
  stream(url, handlers, conn) {
    const es = new EventSource(url);
    es.onopen = () => { conn.textContent = "live"; conn.className = "conn live"; };
    es.onerror = () => { conn.textContent = "reconnecting…"; conn.className = "conn"; };
    for (const [kind, fn] of Object.entries(handlers)) es.addEventListener(kind, (m) => fn(JSON.parse(m.data)));
    return es;
  },
};
