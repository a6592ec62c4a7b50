"use strict";
// The id comes from the address bar and is shown as text: the server never writes it into the page.
(() => {
  const raw = location.pathname.split("/").pop();
  let id = raw;
  try { id = decodeURIComponent(raw); } catch (e) { /* a malformed escape: show it as it is */ }
  document.getElementById("task-id").textContent = id;
})();
